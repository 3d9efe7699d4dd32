"""The DataLoader with worker processes: batches, seeding, sharding, failures, shutdown,
resume, and copy-on-read. Workers start with fork unless a test names another method
(spawn and forkserver cost a second or more each here, so few tests use them)."""

from __future__ import annotations

import gc
import multiprocessing
import os
import threading
import time

import pytest
from _datasets import (
    SIGNALS,
    Dies,
    Failing,
    Items,
    Nested,
    Sharded,
    Shrinking,
    Slow,
    Squares,
    Stuck,
    Unsharded,
    WorkerView,
    init_fail,
    make_shared_list,
)

import flambeau
from flambeau.utils.data import DataLoader, Subset, TensorDataset
from flambeau.utils.data._utils.worker import _generate_state


def children() -> set[int]:
    """This process's live (non-zombie) children, but for multiprocessing's resource
    tracker and forkserver."""
    me = str(os.getpid())
    out = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read()
            except OSError:
                continue
            # Python's own helpers that spawn and forkserver start once per program.
            if b"resource_tracker" in cmd or b"forkserver" in cmd:
                continue
            out.add(int(pid))
    return out


def no_workers_left(timeout=5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        multiprocessing.active_children()  # reaps
        if not children() - _background:
            return True
        time.sleep(0.05)
    return False


_background: set[int] = set()


@pytest.fixture(autouse=True)
def _no_leftover_workers():
    _background.clear()
    _background.update(children())  # e.g. a forkserver started earlier
    yield
    gc.collect()
    assert no_workers_left(), "worker processes were left running"


def batches(loader):
    return [b.tolist() if isinstance(b, flambeau.Tensor) else b for b in loader]


def tensor_batches(loader):
    return [[t.tolist() for t in b] for b in loader]


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
def test_same_batches_whatever_num_workers():
    x = flambeau.randn(101, 3)
    y = flambeau.arange(101)
    ds = TensorDataset(x, y)
    runs = []
    for w in (0, 1, 2, 3):
        dl = DataLoader(
            ds, batch_size=8, shuffle=True, num_workers=w,
            generator=flambeau.Generator().manual_seed(42),
        )  # fmt: skip
        runs.append(tensor_batches(dl))
    assert runs[0] == runs[1] == runs[2] == runs[3]
    assert sorted(v for b in runs[0] for v in b[1]) == list(range(101))


def test_python_dataset_and_nested_samples():
    assert batches(DataLoader(Squares(7), batch_size=3, num_workers=2)) == [
        [0, 1, 4], [9, 16, 25], [36],
    ]  # fmt: skip
    out = list(DataLoader(Nested(), batch_size=4, num_workers=2))
    assert out[0]["x"].tolist() == [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]
    ids, names = out[2]["meta"]
    # Strings stay as the batch holds them: a tuple here, from the transposition.
    assert ids.tolist() == [8, 9] and names == ("s8", "s9")
    assert out[0]["x"].is_shared()  # it came through shared memory


def test_batches_held_past_the_ring_stay_intact():
    # More batches held than a worker's ring has slots: later ones go to fresh shared
    # memory, and no slot is reused while a batch views it.
    x = flambeau.arange(400.0).reshape(100, 4)
    ds = TensorDataset(x)
    expect = tensor_batches(DataLoader(ds, batch_size=5, shuffle=False))
    held = list(DataLoader(ds, batch_size=5, num_workers=2))
    assert [[t.tolist() for t in b] for b in held] == expect
    # Freed slots are reused: dropping each batch keeps the values right.
    assert tensor_batches(DataLoader(ds, batch_size=5, num_workers=2)) == expect


def test_worker_info_and_seeds():
    try:
        import numpy  # noqa: F401  (workers seed numpy when the program imported it)
    except ImportError:
        pass
    g = flambeau.Generator().manual_seed(3)
    dl = DataLoader(WorkerView(), batch_size=None, num_workers=2, generator=g)
    rows = list(dl)
    base = int(
        flambeau.empty((), dtype=flambeau.int64).random_(
            generator=flambeau.Generator().manual_seed(3)
        )
    )
    for r in rows:
        assert r["num_workers"] == 2
        assert r["worker"] == r["index"] % 2  # tasks go round-robin
        assert r["seed"] == base + r["worker"]
        assert r["initial_seed"] == r["seed"]
    first = {r["worker"]: r for r in rows if r["index"] < 2}
    assert first[0]["random"] != first[1]["random"]
    np = pytest.importorskip("numpy")
    for w in (0, 1):
        expected = np.random.RandomState(_generate_state(base, w)).rand()
        assert first[w]["numpy"] == expected
    # PyTorch's numpy seed for (base 0, worker 0), from torch.utils.data._utils.worker.
    assert _generate_state(0, 0) == [2968811710, 3677149159, 745650761, 2884920346]
    # The same generator seed gives the same worker seeds.
    again = list(DataLoader(WorkerView(), batch_size=None, num_workers=2,
                            generator=flambeau.Generator().manual_seed(3)))  # fmt: skip
    assert [r["random"] for r in again] == [r["random"] for r in rows]


def test_worker_init_fn_and_its_failure():
    with pytest.raises(RuntimeError, match="init of [01] failed"):
        list(DataLoader(Squares(4), batch_size=1, num_workers=2, worker_init_fn=init_fail))


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
def test_iterable_dataset_sharding():
    out = batches(DataLoader(Sharded(10), batch_size=3, num_workers=2))
    # Worker 0 has 0, 2, 4, 6, 8 and worker 1 the odd ones; batches alternate.
    assert out == [[0, 2, 4], [1, 3, 5], [6, 8], [7, 9]]
    dup = batches(DataLoader(Unsharded(4), batch_size=2, num_workers=2))
    assert sorted(v for b in dup for v in b) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert batches(DataLoader(Sharded(5), batch_size=None, num_workers=3)) == [0, 1, 2, 3, 4]


def test_in_order_false_gives_every_batch():
    out = batches(DataLoader(Slow(24, 0.001), batch_size=2, num_workers=2, in_order=False))
    assert sorted(v for b in out for v in b) == list(range(24))


def test_in_order_false_persistent_workers_over_epochs():
    # Results come from whichever worker has one (a semaphore all workers release), over
    # epochs of persistent workers, on the raw-index path.
    ds = TensorDataset(flambeau.arange(50))
    dl = DataLoader(ds, batch_size=4, shuffle=True, num_workers=2, in_order=False,
                    persistent_workers=True)  # fmt: skip
    for _ in range(3):
        assert sorted(v for b in tensor_batches(dl) for v in b[0]) == list(range(50))
    it = iter(dl)
    next(it)  # break early: the next epoch drops what was in flight
    assert sorted(v for b in tensor_batches(dl) for v in b[0]) == list(range(50))
    del dl, it


def test_tasks_over_the_connection_when_records_do_not_fit(monkeypatch):
    # A task (or an epoch's start) whose record would not fit goes on the worker's
    # connection, announced by a record: the batches are the same.
    from flambeau.utils.data._utils import channel

    monkeypatch.setattr(channel.Channel, "send_raw", lambda self, *args: False)
    ds = TensorDataset(flambeau.arange(40.0).reshape(20, 2), flambeau.arange(20))
    g = lambda: flambeau.Generator().manual_seed(6)  # noqa: E731
    expect = tensor_batches(DataLoader(ds, batch_size=3, shuffle=True, generator=g()))
    dl = DataLoader(ds, batch_size=3, shuffle=True, num_workers=2, generator=g(),
                    persistent_workers=True)  # fmt: skip
    assert tensor_batches(dl) == expect
    assert len(tensor_batches(dl)) == len(expect)  # a second epoch: RESUME on the connection
    del dl


def test_pin_memory_with_workers_is_a_noop_without_accelerator():
    ds = TensorDataset(flambeau.arange(20.0), flambeau.arange(20))
    expect = tensor_batches(DataLoader(ds, batch_size=6))
    with pytest.warns(UserWarning, match="no accelerator is found"):
        dl = DataLoader(ds, batch_size=6, num_workers=2, pin_memory=True)
        assert tensor_batches(dl) == expect


def test_batches_larger_than_a_task_record():
    # More indices than a task record holds (multi_process._RECORD_INDICES): the raw
    # indices go on the connection.
    ds = TensorDataset(flambeau.arange(25_000))
    g = lambda: flambeau.Generator().manual_seed(1)  # noqa: E731
    expect = tensor_batches(DataLoader(ds, batch_size=10_000, shuffle=True, generator=g()))
    got = DataLoader(ds, batch_size=10_000, shuffle=True, num_workers=2, generator=g())
    assert tensor_batches(got) == expect


def test_subset_of_a_tensor_dataset_gathers_with_raw_indices():
    # A Subset maps the raw indices through its own before the batched gather.
    ds = Subset(TensorDataset(flambeau.arange(100) * 10), list(range(3, 90, 2)))
    g = lambda: flambeau.Generator().manual_seed(2)  # noqa: E731
    expect = tensor_batches(DataLoader(ds, batch_size=5, shuffle=True, generator=g()))
    got = tensor_batches(DataLoader(ds, batch_size=5, shuffle=True, num_workers=2, generator=g()))
    assert got == expect


def test_batches_of_many_layouts():
    # Past the layouts a worker numbers (ring.py, _MAX_LAYOUTS), a batch carries its own.
    out = list(DataLoader(Shrinking(300), batch_size=1, num_workers=1))
    assert [b.shape[1] for b in out] == list(range(300, 0, -1))
    assert all(b[0, -1].item() == n - 1 for b, n in zip(out, range(300, 0, -1)))


def test_forkserver_persistent_workers_outlive_an_idle_pause():
    # A forkserver worker's parent is the server, not the main process: a pause between
    # epochs longer than the workers' idle check must not end them.
    ds = TensorDataset(flambeau.arange(12))
    dl = DataLoader(ds, batch_size=4, num_workers=2, persistent_workers=True,
                    multiprocessing_context="forkserver")  # fmt: skip
    first = tensor_batches(dl)
    time.sleep(1.5)
    assert tensor_batches(dl) == first
    del dl


def test_persistent_workers_reused_across_epochs():
    dl = DataLoader(WorkerView(), batch_size=None, num_workers=2, persistent_workers=True)
    pids1 = {r["pid"] for r in dl}
    it = iter(dl)
    next(it)  # break early: the next epoch starts cleanly anyway
    pids2 = {r["pid"] for r in dl}
    assert pids1 == pids2 and len(pids1) == 2
    it_dl = DataLoader(Sharded(6), batch_size=2, num_workers=2, persistent_workers=True)
    assert batches(it_dl) == batches(it_dl) == [[0, 2], [1, 3], [4], [5]]
    del dl, it, it_dl


def test_exception_in_worker_is_reraised_with_traceback():
    dl = DataLoader(Failing(), batch_size=2, num_workers=2)
    with pytest.raises(ValueError) as info:
        list(dl)
    msg = str(info.value)
    assert "Caught ValueError in DataLoader worker process 0" in msg
    assert "Original Traceback" in msg and "bad sample 5" in msg and "__getitem__" in msg
    # The loader carries on after an error.
    it = iter(DataLoader(Failing(), batch_size=2, num_workers=2))
    got = []
    for _ in range(5):
        try:
            got.append(next(it).tolist())
        except ValueError:
            got.append("error")
    assert got == [[0, 1], [2, 3], "error", [6, 7], [8, 9]]


@pytest.mark.parametrize("name", ["SIGKILL", "SIGSEGV", "SIGBUS"])
def test_killed_worker_raises_within_a_second(name):
    sig = SIGNALS[name]
    dl = DataLoader(Dies(sig), batch_size=1, num_workers=2)
    t = time.monotonic()
    with pytest.raises(RuntimeError) as info:
        list(dl)
    assert time.monotonic() - t < 1.5
    msg = str(info.value)
    assert "DataLoader worker (pid" in msg and "is killed by signal" in msg
    assert f"signal {int(sig)}" in msg
    if name == "SIGBUS":
        assert "shared memory" in msg


def test_killed_worker_detected_from_another_thread():
    result = {}

    def run():
        try:
            list(DataLoader(Dies(SIGNALS["SIGKILL"]), batch_size=1, num_workers=2))
        except RuntimeError as e:
            result["error"] = str(e)

    th = threading.Thread(target=run)
    t = time.monotonic()
    th.start()
    th.join(10)
    assert not th.is_alive()
    assert time.monotonic() - t < 3
    assert "is killed by signal: Killed" in result["error"]


def test_timeout_reports_the_stuck_stack():
    dl = DataLoader(Stuck(), batch_size=1, num_workers=2, timeout=0.5)
    t = time.monotonic()
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.5 seconds") as info:
        list(dl)
    assert time.monotonic() - t < 5
    assert "stuck_in_here" in str(info.value)


def test_break_and_del_end_the_workers():
    dl = DataLoader(Squares(100), batch_size=2, num_workers=2)
    for i, _ in enumerate(dl):
        if i == 3:
            break
    assert no_workers_left()
    it = iter(dl)
    next(it)
    assert len(children() - _background) == 2
    del it
    assert no_workers_left()
    pdl = DataLoader(Squares(10), batch_size=2, num_workers=2, persistent_workers=True)
    list(pdl)
    assert len(children() - _background) == 2
    del pdl
    gc.collect()
    assert no_workers_left()


def test_resume_with_workers_matches_uninterrupted():
    ds = TensorDataset(flambeau.arange(50))
    make = lambda w: DataLoader(  # noqa: E731
        ds, batch_size=4, shuffle=True, num_workers=w, generator=flambeau.Generator().manual_seed(8)
    )
    full = tensor_batches(make(0))
    dl = make(2)
    it = iter(dl)
    for _ in range(5):
        next(it)
    state = dl.state_dict()
    del it
    for w in (0, 2):
        again = make(w)
        again.load_state_dict(state)
        assert tensor_batches(again) == full[5:]


def test_resume_iterable_with_workers():
    dl = DataLoader(Sharded(10), batch_size=2, num_workers=2)
    full = batches(dl)
    it = iter(dl)
    next(it), next(it), next(it)
    state = dl.state_dict()
    del it
    dl2 = DataLoader(Sharded(10), batch_size=2, num_workers=2)
    dl2.load_state_dict(state)
    assert batches(dl2) == full[3:]


def test_workers_pay_off_for_heavy_samples():
    # Timing is not a pass/fail matter (benchmarks/bench_data.py measures it); this only
    # checks that the work really is spread: both workers read samples.
    rows = list(DataLoader(WorkerView(), batch_size=2, num_workers=2))
    assert {w for r in rows for w in r["worker"].tolist()} == {0, 1}


def test_copy_on_read_shared_list_keeps_worker_memory_flat():
    n, chunks = 300_000, 10
    plain = [f"item-{i}" for i in range(n)]
    shared = make_shared_list(n)
    assert len(shared) == n and shared[12345] == "item-12345" and shared[-1] == f"item-{n - 1}"
    grown = {}
    for name, items in (("list", plain), ("shared", shared)):
        out = list(DataLoader(Items(items, chunks), batch_size=None, num_workers=1))
        assert sum(total for total, _ in out) == sum(len(s) for s in plain)
        grown[name] = max(g for _, g in out) / 1024  # MB
    # Reading the list copies the pages of its objects into the worker (reference
    # counts are written); reading the SharedList does not.
    assert grown["list"] > 8, grown
    assert grown["shared"] < 2, grown


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_spawn_and_forkserver(method):
    x = flambeau.arange(40.0).reshape(20, 2)
    ds = TensorDataset(x, flambeau.arange(20))
    g = lambda: flambeau.Generator().manual_seed(4)  # noqa: E731
    expect = tensor_batches(DataLoader(ds, batch_size=3, shuffle=True, generator=g()))
    dl = DataLoader(ds, batch_size=3, shuffle=True, num_workers=2, generator=g(),
                    multiprocessing_context=method, persistent_workers=True)  # fmt: skip
    assert tensor_batches(dl) == expect
    assert tensor_batches(dl)  # a second epoch on the same workers
    del dl
    shared = make_shared_list(1000)
    out = list(DataLoader(Items(shared, 4), batch_size=None, num_workers=1,
                          multiprocessing_context=method))  # fmt: skip
    assert sum(t for t, _ in out) == sum(len(f"item-{i}") for i in range(1000))
    with pytest.raises(ValueError, match="Caught ValueError in DataLoader worker process"):
        list(DataLoader(Failing(), batch_size=5, num_workers=2, multiprocessing_context=method))
