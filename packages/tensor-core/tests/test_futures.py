"""flambeau.futures.Future in one process, against torch.futures' documented behaviour."""

import threading

import pytest

from flambeau.futures import Future, collect_all, wait_all


def test_set_result_then_and_callbacks():
    fut = Future()
    assert not fut.done()
    chained = fut.then(lambda f: f.value() + 1)
    seen = []
    fut.add_done_callback(lambda f: seen.append(f.value()))
    fut.set_result(41)
    assert fut.done() and fut.wait() == 41 and chained.wait() == 42 and seen == [41]
    fut.add_done_callback(lambda f: seen.append("late"))  # already done: runs at once
    assert seen == [41, "late"]
    with pytest.raises(RuntimeError, match="can only be marked completed once"):
        fut.set_result(1)


def test_exceptions_propagate_through_then():
    fut = Future()
    chained = fut.then(lambda f: f.value() * 2)
    fut.set_exception(ValueError("foo"))
    with pytest.raises(ValueError, match="foo"):
        fut.wait()
    with pytest.raises(ValueError, match="foo"):
        chained.wait()
    with pytest.raises(AssertionError):
        Future().set_exception("not an exception")
    failing = Future()
    failing.set_result(1)
    with pytest.raises(ZeroDivisionError):
        failing.then(lambda f: 1 / 0).wait()


def test_wait_blocks_until_another_thread_sets_it():
    fut = Future()
    threading.Timer(0.05, fut.set_result, args=(7,)).start()
    assert fut.wait() == 7


def test_collect_all_and_wait_all():
    futs = [Future() for _ in range(3)]
    combined = collect_all(futs)
    for n, f in enumerate(futs):
        assert not combined.done()
        f.set_result(n)
    assert combined.wait() == futs
    assert wait_all(futs) == [0, 1, 2]
    assert collect_all([]).wait() == []
