"""One of several processes sharing a store with the test (not an MPI job).

Usage: store_client.py tcp HOST:PORT ID WORKERS ADDS | file PATH ID WORKERS ADDS
Each worker elects a leader with compare_set, adds ADDS times to a shared counter,
meets the others at a barrier, checks that the counter holds every add, then waits
for the test's "go" key (and, over TCP, pops one job of the queue the test fills).
"""

import sys
from datetime import timedelta

import flambeau.distributed as dist

kind, address, me, workers, adds = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
timeout = timedelta(seconds=60)
if kind == "tcp":
    host, port = address.rsplit(":", 1)
    # world_size counts the test's master too; every store counts itself in on creation
    store = dist.TCPStore(host, int(port), workers + 1, timeout=timeout)
else:
    store = dist.FileStore(address, workers + 1)
    store.set_timeout(timeout)

leader = store.compare_set("leader", "", str(me))  # exactly one worker wins
for _ in range(adds):
    store.add("counter", 1)
store.append("log", f"{me},")
store.barrier("after_adds", workers, timeout)
assert store.get("counter") == str(workers * adds).encode(), store.get("counter")
assert store.get("leader") == leader  # every worker sees the same winner
store.set(f"seen/{me}", leader)
store.get("go")  # blocks until the test sets it
if kind == "tcp":
    store.set(f"job/{me}", store.queue_pop("jobs"))
print(f"worker {me}: WORKER OK", flush=True)
