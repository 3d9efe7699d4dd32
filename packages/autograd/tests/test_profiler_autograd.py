"""The profiler and autograd: backward nodes as events, and torch.autograd.profiler's
older interface over the same recorder."""

from __future__ import annotations

import warnings

import pytest

import flambeau
from flambeau.autograd import profiler as autograd_profiler
from flambeau.profiler import profile


def test_backward_nodes_are_recorded_inside_evaluate_function():
    x = flambeau.randn(4, 5, requires_grad=True)
    w = flambeau.randn(5, 3)
    with profile() as prof:
        (x @ w).relu().sum().backward()
    events = prof.events()
    evaluate = [e for e in events if e.name.startswith("autograd::engine::evaluate_function: ")]
    nodes = {e.name.split(": ", 1)[1] for e in evaluate}
    assert {"SumBackward0", "ReluBackward0", "MatmulBackward0"} <= nodes
    for outer in evaluate:
        node_name = outer.name.split(": ", 1)[1]
        if node_name == "AccumulateGrad":
            continue
        inner = [c for c in outer.cpu_children if c.name == node_name]
        assert len(inner) == 1, outer.name
    # The operators a formula runs nest under its node.
    matmul_node = next(e for e in events if e.name == "MatmulBackward0")
    assert any(c.name == "aten::matmul" for c in matmul_node.cpu_children)
    assert x.grad is not None


def test_legacy_profile_interface():
    x = flambeau.ones(2, 3, requires_grad=True)
    with autograd_profiler.profile(record_shapes=True, profile_memory=True) as prof:
        with autograd_profiler.record_function("loss"):
            y = (x * 2).sum()
        y.backward()
    names = [e.name for e in prof.function_events]
    assert names[0] == "loss" and "aten::mul" in names
    mul = next(e for e in prof.function_events if e.name == "aten::mul")
    assert mul.input_shapes[0] == [2, 3]
    assert "aten::sum" in prof.table(sort_by="self_cpu_time_total")
    assert prof.key_averages()[0].count >= 1
    assert prof.total_average().count == len(prof.function_events)
    assert prof.self_cpu_time_total == pytest.approx(
        sum(e.self_cpu_time_total for e in prof.function_events)
    )


def test_legacy_profile_errors_and_options():
    prof = autograd_profiler.profile()
    with pytest.raises(RuntimeError, match="didn't finish"):
        prof.table()
    with prof:
        with pytest.raises(RuntimeError, match="not reentrant"):
            prof.__enter__()
    with autograd_profiler.profile(enabled=False) as off:
        flambeau.ones(1)
    assert off.enabled is False
    with pytest.raises(AssertionError, match="Kineto"):
        autograd_profiler.profile(use_cpu=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        autograd_profiler.profile(use_cuda=True)
    messages = [str(w.message) for w in caught]
    assert any("use_cuda" in m for m in messages) and any(
        "CPU activity only" in m for m in messages
    )


def test_emit_nvtx_and_itt_say_they_are_unavailable():
    with autograd_profiler.emit_nvtx(enabled=False), autograd_profiler.emit_itt(enabled=False):
        pass
    with pytest.raises((AssertionError, RuntimeError)):
        with autograd_profiler.emit_nvtx():
            pass
    with pytest.raises(RuntimeError, match="ITT"):
        with autograd_profiler.emit_itt():
            pass


def test_names_where_pytorch_has_them():
    from flambeau.autograd.profiler_util import EventList, FunctionEvent, FunctionEventAvg

    assert autograd_profiler.EventList is EventList is flambeau.profiler.EventList
    assert FunctionEvent is flambeau.profiler.FunctionEvent
    assert FunctionEventAvg is flambeau.profiler.FunctionEventAvg
    assert flambeau.autograd.ProfilerActivity is flambeau.profiler.ProfilerActivity
    assert flambeau.autograd.kineto_available()
