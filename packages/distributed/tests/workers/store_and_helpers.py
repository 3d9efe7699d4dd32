"""init_process_group with a store (or a registered rendezvous handler), and the
helpers over the collectives: object point-to-point, subgroups, coalesced and
single-tensor collectives, a TCPStore among the ranks. Run on an even number of ranks.

Usage: store_and_helpers.py store|rendezvous DIR
"""

import os
import sys
import warnings
from datetime import timedelta

import numpy as np

import flambeau as torch
import flambeau.distributed as dist
from flambeau.distributed.process_group import _get_default_store

mode, tmp = sys.argv[1], sys.argv[2]
mpi_rank, w = int(os.environ["PMI_RANK"]), int(os.environ["PMI_SIZE"])
asked = w - 1 - mpi_rank  # renumbered in reverse: the store path takes rank= as given
path = os.path.join(tmp, "init-store")

if mode == "store":
    try:
        dist.init_process_group("gloo", store=dist.HashStore())
        raise SystemExit("no AssertionError without world_size")
    except AssertionError as e:
        assert "world_size must be positive" in str(e)
    try:
        dist.init_process_group("gloo", store=dist.HashStore(), world_size=w)
        raise SystemExit("no AssertionError without rank")
    except AssertionError as e:
        assert "rank must be non-negative" in str(e)
    try:
        dist.init_process_group(store=dist.HashStore(), init_method="env://", world_size=w, rank=0)
        raise SystemExit("no ValueError with both")
    except ValueError as e:
        assert "Cannot specify both" in str(e)
    store = dist.FileStore(path, w)
    dist.init_process_group("gloo", store=store, rank=asked, world_size=w)
else:

    def handler(url, **kwargs):
        query = dict(q.split("=") for q in url.split("?", 1)[1].split("&"))
        assert kwargs["timeout"] == timedelta(minutes=30)
        yield dist.FileStore(path, w), int(query["rank"]), int(query["world_size"])

    dist.register_rendezvous_handler("flambeau-test", handler)
    dist.init_process_group(init_method="flambeau-test://here", rank=asked, world_size=w)
    store = _get_default_store().underlying_store

r = dist.get_rank()
assert r == asked and dist.get_world_size() == w
default_store = _get_default_store()
default_store.set(f"hello/{r}", str(r))
store.wait([f"default_pg/hello/{k}" for k in range(w)])  # the PrefixStore of PyTorch
assert dist.get_pg_count() == 1

# send_object_list / recv_object_list: pairs (0,1), (2,3), ...; plain and batched
peer = r + 1 if r % 2 == 0 else r - 1
for use_batch in (False, True):
    mine = [f"from {r}", {"rank": r, "t": torch.tensor([float(r)])}, list(range(r))]
    got = [None, None, None]
    if r % 2 == 0:
        dist.send_object_list(mine, dst=peer, use_batch=use_batch)
        sender = dist.recv_object_list(got, src=peer, use_batch=use_batch)
    else:
        sender = dist.recv_object_list(got, src=peer, use_batch=use_batch)
        dist.send_object_list(mine, dst=peer, use_batch=use_batch)
    assert sender == peer, sender
    assert got[0] == f"from {peer}" and got[2] == list(range(peer))
    assert got[1]["rank"] == peer and got[1]["t"].tolist() == [float(peer)]
try:
    dist.send_object_list([1], dst=r)
    raise SystemExit("sending to oneself")
except ValueError as e:
    assert "Invalid destination rank" in str(e)
try:
    dist.recv_object_list([None])
    raise SystemExit("receiving from nobody")
except ValueError as e:
    assert "Must specify" in str(e)

# subgroups: pairs, then the pairs by enumeration; group ranks for the object p2p
pair, pairs = dist.new_subgroups(group_size=2)
assert len(pairs) == w // 2 and dist.get_process_group_ranks(pair) == sorted([r, peer])
assert dist.get_pg_count() == 1 + w // 2
t = torch.tensor([float(r)])
dist.all_reduce(t, group=pair)
assert t.item() == float(r + peer)
objs = [None]
if r % 2 == 0:
    dist.send_object_list([f"pair {r}"], group=pair, group_dst=1)
else:
    assert dist.recv_object_list(objs, group=pair, group_src=0) == peer
    assert objs == [f"pair {peer}"]
evens = [k for k in range(w) if k % 2 == 0]
odds = [k for k in range(w) if k % 2 == 1]
mine_group, both = dist.new_subgroups_by_enumeration([evens, odds])
assert dist.get_process_group_ranks(mine_group) == (evens if r % 2 == 0 else odds)
assert both[r % 2] is mine_group and both[1 - r % 2] == dist.GroupMember.NON_GROUP_MEMBER
try:
    dist.new_subgroups_by_enumeration([[0, 1], [1]])
    raise SystemExit("overlapping subgroups")
except ValueError as e:
    assert "has appeared in both" in str(e)
try:
    dist.new_subgroups(group_size=3 if w % 3 else 5)
    raise SystemExit("uneven subgroups")
except ValueError as e:
    assert "divisible" in str(e) or "must not exceed" in str(e)

# the single-tensor collectives under their PyTorch 2.13 names; the old ones warn
out = torch.zeros(2 * w)
dist.all_gather_single(out, torch.tensor([float(r), -float(r)]))
assert out.tolist() == [v for k in range(w) for v in (float(k), -float(k))]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    dist.all_gather_into_tensor(out, torch.tensor([1.0, 2.0]))
assert any(issubclass(c.category, FutureWarning) for c in caught)
assert out.tolist() == [1.0, 2.0] * w
res = torch.zeros(2)
dist.reduce_scatter_single(res, torch.arange(2 * w, dtype=torch.float32) * (r + 1))
total = sum(k + 1 for k in range(w))
assert res.tolist() == [2 * r * total, (2 * r + 1) * total]

# coalesced (deprecated): several tensors, one collective
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    a, b = torch.full((2, 3), float(r)), torch.tensor([1.0 * r])
    dist.all_reduce_coalesced([a, b], op=dist.ReduceOp.SUM)
    fut = dist.all_reduce_coalesced(torch.ones(3, dtype=torch.float16), async_op=True)
    halves = fut.wait()
    c = torch.tensor([1 + 1j * r, 2 + 0j])
    dist.all_reduce_coalesced([c], op=dist.ReduceOp.AVG)
    outs = [[torch.zeros(2), torch.zeros(1, 1)] for _ in range(w)]
    dist.all_gather_coalesced(outs, [torch.tensor([float(r), 1.0]), torch.tensor([[10.0 * r]])])
    for op, tensors in [(dist.ReduceOp.MAX, [c]), (dist.ReduceOp.SUM, [a, torch.ones(1).long()])]:
        try:
            dist.all_reduce_coalesced(tensors, op=op)
            raise SystemExit(f"all_reduce_coalesced accepted {op}")
        except ValueError as e:
            assert "complex" in str(e) or "different dtypes" in str(e)
assert sum(issubclass(x.category, FutureWarning) for x in caught) >= 5
ranks_sum = float(sum(range(w)))
assert a.tolist() == [[ranks_sum] * 3] * 2 and b.tolist() == [ranks_sum]
assert halves[0].tolist() == [float(w)] * 3 and halves[0].dtype == torch.float16
np.testing.assert_allclose(c.numpy(), [1 + 1j * ranks_sum / w, 2 + 0j])
for k in range(w):
    assert outs[k][0].tolist() == [float(k), 1.0] and outs[k][1].tolist() == [[10.0 * k]]

# backends
assert dist.get_backend_config() == "cpu:mpi,cuda:mpi"
assert dist.is_backend_available("mpi") and not dist.is_backend_available("nccl")

# a TCPStore among the ranks: the master on rank 0's free port, told by broadcast
master = dist.TCPStore("127.0.0.1", 0, w, True, timedelta(seconds=60), False) if r == 0 else None
port = [master.port if r == 0 else None]
dist.broadcast_object_list(port, src=0)
tcp = master or dist.TCPStore("127.0.0.1", port[0], w, timeout=timedelta(seconds=60))
for _ in range(25):
    tcp.add("sum", r + 1)
tcp.barrier("added", w)
assert tcp.get("sum") == str(25 * total).encode()
dist.barrier()  # the master's server must outlive the clients' last calls
del tcp, master

# a built-in DDP communication hook, where nn is installed
try:
    import flambeau.nn  # noqa: F401
except ImportError:
    pass
else:
    torch.manual_seed(0)
    model = dist.DistributedDataParallel(torch.nn.Linear(3, 1, bias=False))
    model._register_builtin_comm_hook(dist.BuiltinCommHookType.ALLREDUCE)
    model(torch.full((1, 3), float(r + 1))).sum().backward()
    mean = sum(k + 1 for k in range(w)) / w
    assert model.module.weight.grad.tolist() == [[mean] * 3], model.module.weight.grad

dist.destroy_process_group()
assert dist.get_pg_count() == 0
print(f"rank {r}: WORKER OK", flush=True)
