"""detect_anomaly: the traceback a node records ends at the line that called the operation.

PyTorch's anomaly mode shows "Traceback of forward call that caused the error", whose last
frame is the user's line that called the operation (``y = x.sqrt()`` inside ``model``),
preceded by its callers. Every way flambeau records a node must keep that frame and drop
its own: the Python recorder (which core operators reach from C++), composites and
foreach operators recorded piece by piece, in-place metadata operators, in-place writes
through a view (CopySlices) and custom Functions.
"""

from __future__ import annotations

import inspect
import math
import re
import warnings

import pytest

import flambeau as F
import flambeau.autograd as autograd
from flambeau import _C

FRAME = re.compile(r'\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>\S+)')


@pytest.fixture(params=[True, False], ids=["cpp", "python"])
def path(request):
    """With the core's C++ recorder on (anomaly mode then records in Python anyway) or off."""
    was = _C._autograd_fast_set_enabled(request.param)
    yield request.param
    _C._autograd_fast_set_enabled(was)


def frames(trace):
    """(file, line, function, source) of each frame of a recorded trace."""
    out = []
    for entry in trace:
        m = FRAME.match(entry)
        assert m, entry
        source = entry.splitlines()[1].strip() if "\n" in entry.rstrip("\n") else ""
        out.append((m["file"], int(m["line"]), m["name"], source))
    return out


def here(offset=0):
    """The (file, line) of the caller's line, moved by offset."""
    caller = inspect.currentframe().f_back
    return (caller.f_code.co_filename, caller.f_lineno + offset)


def assert_ends_at(node, site, source):
    """node's trace ends at site (file, line), whose code is source."""
    last = frames(node.trace)[-1]
    assert (last[0], last[1]) == site, last
    assert last[3] == source


def x3():
    return F.tensor([1.0, 4.0, 9.0], requires_grad=True)


def test_core_op_called_here(path):
    x = x3()
    with autograd.detect_anomaly():
        y = x.sqrt()
        site = here(-1)
    assert_ends_at(y.grad_fn, site, "y = x.sqrt()")


def test_core_op_inside_a_function_keeps_its_caller(path):
    def model(t):
        y = t.sqrt()
        return y

    x = x3()
    with autograd.detect_anomaly():
        y = model(x)
        call_site = here(-1)
    (*_, caller, last) = frames(y.grad_fn.trace)
    assert last[2] == "model" and last[3] == "y = t.sqrt()"
    assert (caller[0], caller[1]) == call_site and caller[3] == "y = model(x)"


def test_module_level_call_is_recorded(path):
    # At module level the trace was empty ("(no traceback recorded)").
    source = "import flambeau as F\nx = F.ones(1, requires_grad=True)\ny = x.sqrt()\n"
    namespace = {}
    with autograd.detect_anomaly():
        exec(compile(source, "anomaly_module.py", "exec"), namespace)
    last = frames(namespace["y"].grad_fn.trace)[-1]
    assert last[:3] == ("anomaly_module.py", 3, "<module>")


def test_operators_and_number_operands(path):
    x = x3()
    with autograd.detect_anomaly():
        y = x * 2
        site = here(-1)
    assert_ends_at(y.grad_fn, site, "y = x * 2")


class Square(autograd.Function):
    @staticmethod
    def forward(ctx, t, scale):
        ctx.save_for_backward(t)
        return t * t * scale

    @staticmethod
    def backward(ctx, g):
        (t,) = ctx.saved_tensors
        return 2 * t * g, None


def test_custom_function(path):
    x = x3()
    with autograd.detect_anomaly():
        y = Square.apply(x, 1.0)
        site = here(-1)
    assert_ends_at(y.grad_fn, site, "y = Square.apply(x, 1.0)")


def test_in_place_operations(path):
    x = x3()
    with autograd.detect_anomaly():
        y = x * 1
        y.mul_(3)
        site = here(-1)
        assert_ends_at(y.grad_fn, site, "y.mul_(3)")
        # An in-place metadata operator:
        m = (F.ones(2, 3, requires_grad=True) * 1).t_()
        site = here(-1)
        assert_ends_at(m.grad_fn, site, "m = (F.ones(2, 3, requires_grad=True) * 1).t_()")
        z = x * 1
        # Through a view: z's history becomes CopySlices.
        z[1:].add_(1)
        site = here(-1)
    assert z.grad_fn.name() == "CopySlices"
    assert_ends_at(z.grad_fn, site, "z[1:].add_(1)")


def test_composite_and_foreach_operators(path):
    x = x3()
    with autograd.detect_anomaly():
        # Recorded as its decomposition, and as one mul per element:
        h = F.hstack([x, x])
        site = here(-1)
        (f, _) = F._foreach_mul([x, x], 2.0)
        foreach_site = here(-1)
    assert_ends_at(h.grad_fn, site, "h = F.hstack([x, x])")
    assert_ends_at(f.grad_fn, foreach_site, "(f, _) = F._foreach_mul([x, x], 2.0)")


def test_nan_error_shows_the_forward_line(path):
    def model(t):
        y = t.sqrt()
        return y

    x = F.zeros(1, requires_grad=True)
    with autograd.detect_anomaly():
        y = model(x)
        with pytest.raises(RuntimeError) as info:
            (y * 0).sum().backward()  # 0 * d(sqrt)/dx at 0 is nan
    message = str(info.value)
    assert "Function 'SqrtBackward0' returned nan values in its 0th output." in message
    assert "(no traceback recorded)" not in message
    # The last frame: the line in model, after its caller's line.
    assert re.search(r"y = model\(x\)\n.*line \d+, in model\n\s+y = t\.sqrt\(\)\n*$", message)


def test_agrees_with_torch_on_the_last_two_frames():
    torch = pytest.importorskip("torch")

    def model(lib, t):
        y = t.sqrt()
        return y

    def run(lib):
        x = lib.zeros(1, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                y = model(lib, x)
                try:
                    (y * 0).sum().backward()
                except RuntimeError as e:
                    return str(e) + "".join(str(w.message) for w in caught)
        raise AssertionError("no error")

    def last_two(text):
        found = FRAME.findall(text)
        return [(name, int(line)) for _, line, name in found][-2:]

    assert last_two(run(F)) == last_two(run(torch))


def test_set_detect_anomaly_called_as_a_function_switches_the_mode():
    assert not F.is_anomaly_enabled() and F.is_anomaly_check_nan_enabled()
    autograd.set_detect_anomaly(True)
    try:
        assert F.is_anomaly_enabled()
        x = F.zeros(1, requires_grad=True)
        with pytest.raises(RuntimeError, match="SqrtBackward0"):
            (x.sqrt() * 0).sum().backward()
    finally:
        autograd.set_detect_anomaly(False)
    assert not F.is_anomaly_enabled()


def test_check_nan_false_keeps_anomaly_mode_on_without_the_nan_check():
    x = F.zeros(1, requires_grad=True)
    with autograd.detect_anomaly(check_nan=False):
        assert F.is_anomaly_enabled() and not F.is_anomaly_check_nan_enabled()
        (x.sqrt() * 0).sum().backward()  # no error: NaN is not checked
    assert math.isnan(x.grad.item())
    assert not F.is_anomaly_enabled() and F.is_anomaly_check_nan_enabled()
    with autograd.set_detect_anomaly(True, check_nan=False):
        assert F.is_anomaly_enabled() and not F.is_anomaly_check_nan_enabled()
    assert not F.is_anomaly_enabled() and F.is_anomaly_check_nan_enabled()
    F.set_anomaly_enabled(True)
    assert F.is_anomaly_enabled() and F.is_anomaly_check_nan_enabled()
    F.set_anomaly_enabled(False)
    assert not F.is_anomaly_enabled()
