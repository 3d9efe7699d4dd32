"""One rank fails (argv[1]: kill, raise, mismatch, timeout, ddp); the others must raise."""

import os
import signal
import sys
import time
from datetime import timedelta

import flambeau as torch
import flambeau.distributed as dist

mode = sys.argv[1]
dist.init_process_group("mpi", timeout=timedelta(seconds=3 if mode == "timeout" else 20))
r = dist.get_rank()
dist.barrier()
if mode == "mismatch":
    try:
        dist.all_reduce(torch.ones(4 + r))  # different sizes: DETAIL mode must catch it
    except dist.DistBackendError as e:
        assert "mismatch" in str(e) and "NumElements=5" in str(e), e
        print(f"rank {r}: WORKER OK", flush=True)
        os._exit(0)
    raise AssertionError("the mismatch went unnoticed")
if mode == "ddp":  # rank 1 gives up before a backward whose buckets are in node memory
    from flambeau.nn.parallel import DistributedDataParallel as DDP

    model = DDP(torch.nn.Linear(50, 50))
    assert model.reducer.buckets[0].shared is not None
    if r == 1:
        time.sleep(0.2)
        raise ValueError("rank 1 gives up")
    start = time.monotonic()
    try:
        model(torch.ones(4, 50)).sum().backward()
    except dist.DistBackendError as e:
        print(f"rank {r} raised after {time.monotonic() - start:.1f}s: {e}", flush=True)
        sys.exit(3)
    print(f"rank {r}: backward completed without rank 1", flush=True)
    sys.exit(0)
if r == 1:
    time.sleep(0.2)
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif mode == "raise":
        raise ValueError("rank 1 gives up")
    elif mode == "timeout":
        time.sleep(30)  # alive but never joins
start = time.monotonic()
try:
    dist.all_reduce(torch.ones(10))
except dist.DistBackendError as e:
    print(f"rank {r} raised after {time.monotonic() - start:.1f}s: {e}", flush=True)
    sys.exit(3)
print(f"rank {r}: all_reduce completed without rank 1", flush=True)
