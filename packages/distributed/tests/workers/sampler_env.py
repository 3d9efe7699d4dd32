"""DistributedSampler takes rank and world size from the process group; the launcher's
environment matches MPI's numbering."""

import os

import flambeau.distributed as dist

dist.init_process_group()
r, w = dist.get_rank(), dist.get_world_size()
if os.environ.get("TORCHELASTIC_RUN_ID"):  # started by flambeau.distributed.run
    assert os.environ["RANK"] == str(r) and os.environ["WORLD_SIZE"] == str(w)
    assert os.environ["LOCAL_RANK"] == str(r) and os.environ["LOCAL_WORLD_SIZE"] == str(w)
    assert os.environ["MASTER_ADDR"] and os.environ["MASTER_PORT"] == "29500"
    assert dist.is_torchelastic_launched()
try:
    from flambeau.utils.data import DistributedSampler
except ImportError:
    DistributedSampler = None
if DistributedSampler is not None:
    for n, drop_last in [(23, False), (23, True), (24, False)]:
        sampler = DistributedSampler(list(range(n)), shuffle=True, seed=1, drop_last=drop_last)
        sampler.set_epoch(2)
        mine = list(sampler)
        everyone = [None] * w
        dist.all_gather_object(everyone, mine)
        flat = [i for part in everyone for i in part]
        assert all(len(part) == len(mine) for part in everyone)
        if drop_last:
            assert len(set(flat)) == len(flat) == n // w * w  # disjoint
        else:
            assert set(flat) == set(range(n))  # covering (padding repeats a few)
            if n % w == 0:
                assert len(set(flat)) == len(flat)  # and disjoint
dist.destroy_process_group()
print(f"rank {r}: WORKER OK", flush=True)
