"""Run by test_shutdown.py: a loader with workers, then an ending (argv[1]).

Prints the workers' pids, then: "exit" leaves the interpreter with the workers running
(persistent, mid-epoch); "sigint" waits to be interrupted with Ctrl-C (SIGINT to the
process group) while iterating; "kill" waits to be killed (SIGKILL to this process
only: the workers must notice that it is gone).
"""

import sys
import time

from _datasets import Slow, WorkerView

import flambeau
from flambeau.utils.data import DataLoader, TensorDataset

if __name__ == "__main__":
    how = sys.argv[1]
    big = TensorDataset(flambeau.randn(2000, 1000))  # 8 MB through shared memory
    list(DataLoader(big, batch_size=100, num_workers=2))
    dl = DataLoader(WorkerView(), batch_size=None, num_workers=2, persistent_workers=True)
    pids = {r["pid"] for r in dl}
    it = iter(dl)
    next(it)
    print(" ".join(map(str, sorted(pids))), flush=True)
    if how == "sigint":
        for _ in DataLoader(Slow(10_000, 0.01), batch_size=1, num_workers=2):
            pass
    if how == "kill":
        time.sleep(60)
    sys.exit(0)
