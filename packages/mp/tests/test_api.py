"""The module is a drop-in for Python's multiprocessing, with PyTorch's extra names."""

from __future__ import annotations

import multiprocessing
import pickle

import pytest

import flambeau
import flambeau.multiprocessing as mp


def test_every_public_name_of_multiprocessing_is_here():
    missing = [n for n in multiprocessing.__all__ if not hasattr(mp, n)]
    assert missing == []
    for name in ("spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
                 "ProcessExitedException", "set_sharing_strategy", "get_sharing_strategy",
                 "get_all_sharing_strategies"):  # fmt: skip
        assert hasattr(mp, name)
    assert mp.Process is multiprocessing.Process
    assert mp.cpu_count() == multiprocessing.cpu_count()


def test_reachable_as_an_attribute_of_flambeau():
    assert flambeau.multiprocessing is mp


def test_sharing_strategies():
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    assert mp.get_sharing_strategy() == "file_descriptor"
    mp.set_sharing_strategy("file_system")
    try:
        assert mp.get_sharing_strategy() == "file_system"
    finally:
        mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(AssertionError, match="invalid sharing strategy"):
        mp.set_sharing_strategy("nope")


def test_start_method_is_pythons():
    assert mp.get_start_method() == multiprocessing.get_start_method()
    assert mp.get_all_start_methods() == multiprocessing.get_all_start_methods()
    assert mp.get_context("spawn").get_start_method() == "spawn"
    with pytest.raises(ValueError, match="cannot find context"):
        mp.get_context("teleport")


def test_bad_input_gets_clear_errors():
    q = mp.get_context("fork").SimpleQueue()
    with pytest.raises((TypeError, AttributeError, pickle.PicklingError)):
        q.put(lambda: 1)  # not picklable
    q.close()
    queue = mp.Queue()
    queue.close()
    with pytest.raises(ValueError, match="is closed"):
        queue.put(flambeau.zeros(2))
    with pytest.raises(TypeError, match="callable"):
        mp.reductions.register_device_reducer("testdev", 3)


def test_a_device_without_a_reducer_cannot_be_sent(monkeypatch):
    from flambeau.multiprocessing import reductions

    class FakeDevice:
        type = "fakedev"

    class FakeTensor:
        requires_grad = False
        is_leaf = True
        device = FakeDevice()

    with pytest.raises(RuntimeError, match="device 'fakedev' cannot be shared"):
        reductions.reduce_tensor(FakeTensor())
    monkeypatch.setitem(reductions._device_reducers, "fakedev", lambda t: (int, (5,)))
    assert reductions.reduce_tensor(FakeTensor()) == (int, (5,))


def test_a_forged_message_gets_a_clear_error():
    from flambeau.multiprocessing import reductions

    t = flambeau.zeros(16).share_memory_()
    block = t.untyped_storage()._owner()
    seg = block.segment
    with pytest.raises(RuntimeError, match="outside its segment"):
        reductions.rebuild_storage(seg.key, 0, -1, seg.size, seg.size - 8, 64)
    with pytest.raises(RuntimeError, match="outside its segment"):
        reductions.rebuild_storage(seg.key, 0, -1, seg.size, 3, 4)
    with pytest.raises(RuntimeError, match="cannot reach the shared memory"):
        reductions.rebuild_storage((0, 12345), 2**22 + 17, 5, 4096, 0, 8)
    from flambeau import _shared_memory

    _shared_memory.take_reference(block)  # what a real message carries
    storage = reductions.rebuild_storage(seg.key, 0, -1, seg.size, block.offset, block.nbytes)
    assert storage.data_ptr() == t.data_ptr() and storage.is_shared()
    with pytest.raises(RuntimeError, match="past the storage"):
        reductions.rebuild_tensor(
            flambeau.Tensor, storage, (flambeau.float32, 10, (10,), (1,), False)
        )
