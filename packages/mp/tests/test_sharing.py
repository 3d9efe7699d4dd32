"""Tensors through queues, pipes and pools arrive as views of the same memory, under
every start method (PyTorch's README examples among them)."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau
import flambeau.multiprocessing as mp

METHODS = ["fork", "spawn", "forkserver"]


def _fill(args):
    t, value = args
    t.fill_(value)
    return t


def _persistent_worker(queue, done):
    while True:
        item = queue.get()
        if item is None:
            break
        t, value = item
        t.fill_(value)
        done.put(value)


@pytest.mark.parametrize("method", METHODS)
def test_pool_workers_fill_tensors_handed_to_map(method):
    # PyTorch's README: a pool of workers that fill_ the tensors given to Pool.map.
    ctx = mp.get_context(method)
    tensors = [flambeau.zeros(5, 5) for _ in range(4)]
    with ctx.Pool(2) as pool:
        returned = pool.map(_fill, [(t, float(i + 1)) for i, t in enumerate(tensors)])
    for i, (t, r) in enumerate(zip(tensors, returned)):
        np.testing.assert_array_equal(t.numpy(), np.full((5, 5), i + 1.0, np.float32))
        assert t.is_shared()
        assert r.data_ptr() == t.data_ptr()  # came back as the same memory


@pytest.mark.parametrize("method", METHODS)
def test_persistent_workers_fill_tensors_taken_from_a_queue(method):
    # PyTorch's README: workers that keep taking tensors from a Queue and fill_ them.
    ctx = mp.get_context(method)
    queue, done = ctx.Queue(), ctx.Queue()
    workers = [ctx.Process(target=_persistent_worker, args=(queue, done)) for _ in range(2)]
    for w in workers:
        w.start()
    tensors = [flambeau.zeros(1000) for _ in range(6)]
    for i, t in enumerate(tensors):
        queue.put((t, float(i)))
    assert sorted(done.get(timeout=60) for _ in tensors) == [float(i) for i in range(6)]
    for _ in workers:
        queue.put(None)
    for w in workers:
        w.join(60)
        assert w.exitcode == 0
    for i, t in enumerate(tensors):
        assert (t == float(i)).all()


def _write_back(conn):
    t, view = conn.recv()
    # A view and its base sent together still alias.
    assert view.data_ptr() == t.data_ptr() + 4 * t.stride(0)
    view.fill_(7.0)
    conn.send((t.sum().item(), t.requires_grad, t.dtype))
    conn.close()


@pytest.mark.parametrize("method", METHODS)
def test_pipe_view_and_base_share_after_the_trip(method):
    ctx = mp.get_context(method)
    parent, child = ctx.Pipe()
    p = ctx.Process(target=_write_back, args=(child,))
    p.start()
    t = flambeau.arange(12.0).reshape(3, 4).requires_grad_()
    parent.send((t.detach(), t.detach()[1]))
    total, requires_grad, dtype = parent.recv()
    p.join(60)
    assert p.exitcode == 0
    np.testing.assert_array_equal(t.detach().numpy()[1], np.full(4, 7.0, np.float32))
    assert total == pytest.approx(float(t.detach().sum()))
    assert requires_grad is False and dtype == flambeau.float32


def _echo(conn):
    while True:
        obj = conn.recv()
        if obj is None:
            return
        conn.send(obj)


def test_requires_grad_travels_and_grad_does_not():
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()
    p = ctx.Process(target=_echo, args=(child,))
    p.start()
    try:
        w = flambeau.ones(3, requires_grad=True)
        w.grad = flambeau.full((3,), 2.0)
        parent.send(w)
        back = parent.recv()
        assert back.requires_grad and back.is_leaf and back.grad is None  # as PyTorch
        assert back.data_ptr() == w.data_ptr()
        # A non-leaf that requires grad cannot cross: PyTorch's error.
        with pytest.raises(RuntimeError, match="Cowardly refusing"):
            parent.send(w * 2)
        # Every dtype, zero-size, 0-dim and non-contiguous tensors.
        cases = [
            flambeau.tensor(3.5),
            flambeau.empty(0, 4),
            flambeau.arange(20, dtype=flambeau.int64).reshape(4, 5).t(),
            flambeau.tensor([True, False]),
            flambeau.randn(3, dtype=flambeau.complex64),
            flambeau.ones(4, dtype=flambeau.bfloat16),
        ]
        for case in cases:
            parent.send(case)
            got = parent.recv()
            assert got.shape == case.shape and got.stride() == case.stride()
            assert got.dtype == case.dtype
            assert flambeau.equal(got, case)
    finally:
        parent.send(None)
        p.join(60)


def _receive_twice(queue, out):
    a = queue.get()
    b = queue.get()
    from flambeau import _shared_memory

    # The same memory, and one mapping of its segment in this process.
    keys = [k for k, _ in _shared_memory._segments.items()]
    out.put((a.data_ptr() == b.data_ptr(), len(keys) == len(set(keys)) == 1))


def test_a_tensor_sent_twice_maps_once():
    ctx = mp.get_context("spawn")
    queue, out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_receive_twice, args=(queue, out))
    p.start()
    t = flambeau.zeros(100)
    queue.put(t)
    queue.put(t)
    same_memory, same_storage = out.get(timeout=60)
    p.join(60)
    assert same_memory and same_storage


def _hold_and_report(queue, out):
    tensors = [queue.get() for _ in range(2)]
    out.put(sum(float(t.sum()) for t in tensors))


def test_sender_may_exit_before_the_receiver_maps():
    ctx = mp.get_context("spawn")
    queue, out = ctx.Queue(), ctx.Queue()

    sender = ctx.Process(target=_send_and_exit, args=(queue,))
    sender.start()
    sender.join(60)
    assert sender.exitcode == 0
    receiver = ctx.Process(target=_hold_and_report, args=(queue, out))
    receiver.start()
    assert out.get(timeout=60) == pytest.approx(2 * 1000 * 3.0)
    receiver.join(60)


def _send_and_exit(queue):
    queue.put(flambeau.full((1000,), 3.0))
    big = flambeau.full((5 << 20,), 3.0)  # 20 MiB: a segment of its own
    queue.put(big[:1000])
    queue.close()
    queue.join_thread()


def test_storages_and_parameters_cross():
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()
    p = ctx.Process(target=_echo, args=(child,))
    p.start()
    try:
        s = flambeau.UntypedStorage(16)
        parent.send(s)
        got = parent.recv()
        assert isinstance(got, flambeau.UntypedStorage) and got.data_ptr() == s.data_ptr()
        typed = flambeau.arange(4.0).storage()
        parent.send(typed)
        back = parent.recv()
        assert back.dtype == flambeau.float32 and back.tolist() == [0.0, 1.0, 2.0, 3.0]
    finally:
        parent.send(None)
        p.join(60)


def test_many_tensors_hold_few_descriptors():
    # 20,000 tensors through one queue: the descriptors a process holds do not grow
    # with the number of tensors sent (PyTorch issue #973).
    import os

    ctx = mp.get_context("fork")
    queue, out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_drain_and_count_fds, args=(queue, out, 20000))
    p.start()
    before = len(os.listdir("/proc/self/fd"))
    kept = []
    for i in range(20000):
        t = flambeau.full((16,), float(i))
        kept.append(t)
        queue.put(t)
    total, child_fds = out.get(timeout=120)
    p.join(60)
    assert total == pytest.approx(16 * sum(range(20000)))
    assert len(os.listdir("/proc/self/fd")) - before < 10
    assert child_fds < 64


def _drain_and_count_fds(queue, out, n):
    import os

    held = [queue.get() for _ in range(n)]
    out.put((sum(float(t.sum()) for t in held), len(os.listdir("/proc/self/fd"))))
