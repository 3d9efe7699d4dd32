"""share_memory_ and the shared-memory allocator (flambeau/_shared_memory.py)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import flambeau as F
from flambeau import _shared_memory


def test_share_memory_moves_the_storage_in_place():
    t = F.arange(10.0)
    view = t[2:5]
    a = t.numpy()  # exported memory stays valid after the move
    assert not t.is_shared()
    assert t.share_memory_() is t
    assert t.is_shared() and view.is_shared() and t.untyped_storage().is_shared()
    assert view.data_ptr() == t.data_ptr() + 8  # the view follows
    assert t.tolist() == list(np.arange(10.0))
    t.add_(1)
    assert view.tolist() == [3.0, 4.0, 5.0]
    np.testing.assert_array_equal(a, np.arange(10.0))  # the old memory, untouched
    assert t.share_memory_() is t  # twice is a no-op


def test_a_shared_storage_cannot_be_resized():
    t = F.zeros(3).share_memory_()
    with pytest.raises(RuntimeError, match="not resizable"):
        t.resize_(100)
    with pytest.raises(RuntimeError, match="not resizable"):
        t.untyped_storage().resize_(4)
    t.resize_(2)  # smaller fits: nothing to reallocate
    assert t.shape == (2,)


def test_shared_memory_has_no_name():
    before = set(os.listdir("/dev/shm"))
    tensors = [F.ones(1000).share_memory_() for _ in range(50)]
    big = F.ones(8 << 20).share_memory_()  # 32 MiB: a segment of its own
    assert set(os.listdir("/dev/shm")) == before
    assert all(t.is_shared() for t in tensors) and big.is_shared()


def test_blocks_are_reused_once_released():
    first = F.zeros(1000).share_memory_()
    ptr = first.data_ptr()
    del first
    again = F.zeros(1000).share_memory_()
    assert again.data_ptr() == ptr


def test_a_block_another_process_references_is_not_reused():
    t = F.zeros(1000).share_memory_()
    block = t.untyped_storage()._owner()
    _shared_memory.take_reference(block)  # as a message in flight does
    ptr = t.data_ptr()
    del t, block
    other = F.zeros(1000).share_memory_()
    assert other.data_ptr() != ptr


def test_new_shared_storages():
    s = F.UntypedStorage._new_shared(64)
    assert s.is_shared() and s.nbytes() == 64
    typed = F.FloatStorage._new_shared(4)
    assert typed.is_shared() and typed.size() == 4


def test_a_forked_child_writes_into_shared_memory():
    t = F.zeros(4).share_memory_()
    private = F.zeros(4)
    pid = os.fork()
    if pid == 0:  # the child
        try:
            t.fill_(3.0)
            private.fill_(3.0)
            code = 0
        except BaseException:
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert t.tolist() == [3.0] * 4
    assert private.tolist() == [0.0] * 4


def test_a_forked_child_computes_after_the_parent_used_its_thread_pools():
    a = F.randn(300, 300)
    (a @ a).sum()  # the OpenMP and BLAS pools have run in the parent
    F.randn(1 << 20).exp().sum()
    pid = os.fork()
    if pid == 0:
        try:
            ok = abs(float((a @ a).sum()) - float((a @ a).sum())) < 1e-3
            F.randn(1 << 20).exp().sum()
            code = 0 if ok else 2
        except BaseException:
            code = 1
        os._exit(code)
    deadline_status = None
    for _ in range(600):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            deadline_status = status
            break
        import time

        time.sleep(0.1)
    if deadline_status is None:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung in the thread pools")
    assert os.waitstatus_to_exitcode(deadline_status) == 0


def test_running_out_of_memory_is_a_clear_error(monkeypatch):
    def refuse(fd, offset, length):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", refuse)
    with pytest.raises(RuntimeError, match=r"unable to allocate 4000 bytes of shared memory"):
        F.zeros(1000).share_memory_()


def test_finalizers_of_blocks_and_leases_run_no_python_code():
    # A Ctrl-C that arrives while a finalizer runs Python code is raised inside it and
    # dropped; blocks die at every batch of a DataLoader, so theirs are C++.
    assert type(_shared_memory.Block.__del__).__name__ == "builtin_function_or_method"
    got = []
    release = F._C._ReleaseCall(got.append, 7, keep=object())
    del release
    assert got == [7]
    failing = F._C._ReleaseCall(lambda _: 1 / 0, 0)
    del failing  # an error in the call is dropped, as a finalizer's is


def test_weak_values_forget_dead_values_without_callbacks():
    class Value:
        pass

    table = _shared_memory.WeakValues()
    kept = [Value() for _ in range(3)]
    for i, v in enumerate(kept):
        table[i] = v
    for i in range(3, 200):  # dead at once: pruned as the table grows
        table[i] = Value()
    assert table.get(1) is kept[1] and 1 in table and 150 not in table
    assert table.get(150, "gone") == "gone"
    assert sorted(k for k, _ in table.items()) == [0, 1, 2]
    assert len(table._refs) < 100
