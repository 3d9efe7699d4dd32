"""Stores shared by several processes: a TCPStore master here and clients in
subprocesses, a FileStore opened by all; concurrent adds must sum exactly."""

import gc
import os
import socket
import subprocess
import sys
import time
from datetime import timedelta

from conftest import WORKERS

import flambeau.distributed as dist

WORKER_COUNT, ADDS = 3, 40


def start_workers(kind: str, address: str):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return [
        subprocess.Popen(
            [sys.executable, str(WORKERS / "store_client.py"), kind, address, str(i)]
            + [str(WORKER_COUNT), str(ADDS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd="/tmp",
        )
        for i in range(WORKER_COUNT)
    ]


def finish(procs, timeout: float = 60) -> list[str]:
    outputs = []
    deadline = time.monotonic() + timeout
    for p in procs:
        try:
            out, _ = p.communicate(timeout=max(deadline - time.monotonic(), 1))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise AssertionError(f"a store worker hung past {timeout}s") from None
        assert p.returncode == 0, out
        outputs.append(out)
    return outputs


def check_shared_results(store):
    assert store.get("counter") == str(WORKER_COUNT * ADDS).encode()
    leaders = {store.get(f"seen/{i}") for i in range(WORKER_COUNT)}
    assert len(leaders) == 1 and int(leaders.pop()) in range(WORKER_COUNT)
    logged = store.get("log").decode().rstrip(",").split(",")
    assert sorted(map(int, logged)) == list(range(WORKER_COUNT))


def test_tcp_store_master_here_clients_in_other_processes():
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    procs = start_workers("tcp", f"127.0.0.1:{port}")  # they retry until the master is up
    try:
        master = dist.TCPStore(
            "127.0.0.1",
            port,
            WORKER_COUNT + 1,
            is_master=True,
            timeout=timedelta(seconds=60),
            master_listen_fd=listener.fileno(),
        )  # returns once every worker has counted itself in
        master.wait([f"seen/{i}" for i in range(WORKER_COUNT)])
        check_shared_results(master)
        for i in range(WORKER_COUNT):
            master.queue_push("jobs", f"job {i}")
        master.set("go", "1")
        outputs = finish(procs)
    finally:
        for p in procs:
            p.kill()
        listener.close()
    assert all("WORKER OK" in out for out in outputs), outputs
    jobs = sorted(master.get(f"job/{i}") for i in range(WORKER_COUNT))
    assert jobs == [f"job {i}".encode() for i in range(WORKER_COUNT)]  # each popped once
    assert master.queue_len("jobs") == 0


def test_file_store_shared_by_processes_and_removed_by_the_last(tmp_path):
    path = str(tmp_path / "store")
    store = dist.FileStore(path, WORKER_COUNT + 1)
    store.set_timeout(timedelta(seconds=60))
    procs = start_workers("file", path)
    try:
        store.wait([f"seen/{i}" for i in range(WORKER_COUNT)])
        check_shared_results(store)
        store.set("go", "1")
        outputs = finish(procs)
    finally:
        for p in procs:
            p.kill()
    assert all("WORKER OK" in out for out in outputs), outputs
    assert os.path.exists(path)  # the workers are done; this process still uses it
    del store
    gc.collect()
    assert not os.path.exists(path)


def test_a_worker_waiting_on_a_dead_master_fails_fast():
    master = dist.TCPStore("127.0.0.1", 0, is_master=True)
    code = (
        "import flambeau.distributed as d, sys\n"
        f"s = d.TCPStore('127.0.0.1', {master.port})\n"
        "s.set('ready', '1')\n"
        "try:\n"
        "    s.get('never')\n"
        "except d.DistNetworkError as e:\n"
        "    print('network error:', e)\n"
        "    sys.exit(0)\n"
        "sys.exit(1)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        master.wait(["ready"], timedelta(seconds=60))
        del master  # the server goes while the worker waits (store timeout: 300 s)
        gc.collect()
        out, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0 and "network error" in out, out
