"""spawn / start_processes: PyTorch's semantics for results, exceptions and signals."""

from __future__ import annotations

import os
import signal
import time

import pytest

import flambeau
import flambeau.multiprocessing as mp


def _write_rank(i, shared):
    shared[i] = float(i + 1)


def _raise_in_one(i):
    if i == 1:
        raise ValueError("bad rank")
    time.sleep(60)


def _killed(i):
    if i == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)


def _exit_code(i):
    raise SystemExit(3)


def test_spawn_runs_fn_with_its_index():
    shared = flambeau.zeros(3).share_memory_()
    assert mp.spawn(_write_rank, args=(shared,), nprocs=3) is None
    assert shared.tolist() == [1.0, 2.0, 3.0]


def test_an_exception_in_a_child_is_raised_with_its_traceback_and_stops_the_others():
    started = time.monotonic()
    with pytest.raises(mp.ProcessRaisedException) as info:
        mp.spawn(_raise_in_one, nprocs=2)
    assert "ValueError: bad rank" in str(info.value)
    assert "Process 1 terminated with the following error" in str(info.value)
    assert info.value.error_index == 1
    assert time.monotonic() - started < 50  # the sleeping child was terminated


def test_a_child_killed_by_a_signal_is_named():
    with pytest.raises(mp.ProcessExitedException, match="terminated with signal SIGKILL") as info:
        mp.start_processes(_killed, nprocs=2, start_method="fork")
    assert info.value.signal_name == "SIGKILL" and info.value.exit_code == -signal.SIGKILL


def test_exit_code_and_join_without_blocking():
    ctx = mp.start_processes(_exit_code, nprocs=1, join=False, start_method="fork")
    assert isinstance(ctx, mp.ProcessContext) and len(ctx.pids()) == 1
    with pytest.raises(mp.ProcessExitedException, match="exit code 3"):
        while not ctx.join(timeout=30):
            pass


def test_spawn_warns_about_another_start_method():
    shared = flambeau.zeros(1).share_memory_()
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        mp.spawn(_write_rank, args=(shared,), nprocs=1, start_method="fork")
    assert shared.tolist() == [1.0]
