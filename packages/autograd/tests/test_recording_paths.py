"""Calls recorded in C++ (the core's autograd_record.cpp, from the plans the
package registers) build the same graph as the Python recorder."""

import numpy as np
import pytest

import flambeau as F
import flambeau.autograd as autograd
from flambeau import _C


@pytest.fixture(params=[True, False], ids=["cpp", "python"])
def path(request):
    was = _C._autograd_fast_set_enabled(request.param)
    yield request.param
    _C._autograd_fast_set_enabled(was)


def leaf(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return F.tensor(rng.standard_normal(shape), requires_grad=True)


def graph_signature(t):
    """Node names and edge structure reachable from t, in a fixed order."""
    out, stack, seen = [], [t.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        out.append((node.name(), [(n.name() if n else None, nr) for n, nr in node.next_functions]))
        stack.extend(n for n, _ in node.next_functions)
    return out


def build(x, w):
    h = F.matmul(x, w.t()) + 1.5
    h = F.tanh(h) * x.sum(dim=1, keepdim=True)
    return (h.exp() / 3).mean()


def same_on_both_paths(fn, *shapes):
    """Runs fn(*leaves) -> scalar on each recording path; asserts the same graph and the
    same gradients, and returns the C++ path's gradients."""
    results = {}
    for on in (True, False):
        was = _C._autograd_fast_set_enabled(on)
        try:
            leaves = [leaf(*shape, seed=k) for k, shape in enumerate(shapes)]
            out = fn(*leaves)
            sig = graph_signature(out)
            out.backward()
            results[on] = (sig, [t.grad.numpy().copy() for t in leaves])
        finally:
            _C._autograd_fast_set_enabled(was)
    assert results[True][0] == results[False][0]
    for ours, theirs in zip(results[True][1], results[False][1]):
        np.testing.assert_allclose(ours, theirs)
    return results[True][1]


def test_same_graph_and_gradients_on_both_paths():
    same_on_both_paths(build, (4, 3), (5, 3))


def test_recorded_node(path):
    a, b = leaf(3), leaf(3, seed=1)
    c = a * b
    assert c.requires_grad and not c.is_leaf
    assert c.grad_fn.name() == "MulBackward0"
    assert [n.name() for n, _ in c.grad_fn.next_functions] == ["AccumulateGrad"] * 2
    assert c.grad_fn.next_functions[0][0].variable is a
    d = a * 2.0  # a number operand has no edge
    assert len(d.grad_fn.next_functions) == 1


def test_modified_saved_input_raises(path):
    a = leaf(3)
    x = a * 1.0
    y = x * x
    x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_modified_saved_output_raises(path):
    a = leaf(3)
    y = a.exp()  # exp's formula reads its result
    y.mul_(2)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        y.sum().backward()


def test_double_backward(path):
    x = leaf(3)
    (g,) = autograd.grad((x * x * x).sum(), x, create_graph=True)
    (gg,) = autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 6 * x.detach().numpy())


def test_view_output_tracks_its_root(path):
    a = leaf(2, 3)
    b = a * 1.0
    v = b.t()
    assert v.grad_fn.name() == "TBackward0"
    v.mul_(2)  # in place through the view: b's history now ends in CopySlices
    b.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.full((2, 3), 2.0))


def test_not_recorded(path):
    a = leaf(2, 3)
    assert a.argmax().grad_fn is None  # not differentiable
    assert a.contiguous() is a  # handed back its input: stays a leaf
    assert a.contiguous().is_leaf
    with pytest.raises(RuntimeError, match="out=... arguments don't support"):
        F.add(a, a, out=F.empty(2, 3))


def test_anomaly_mode_records_traceback(path):
    a = leaf(3)
    with autograd.detect_anomaly():
        y = a * 2
    assert y.grad_fn.trace
    assert (a * 2).grad_fn.trace is None


def test_graph_is_freed():
    import gc
    import weakref

    a = leaf(3)
    y = (a * a).exp()
    ref = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize(
    "op",
    [
        lambda ts: F.cat(ts, 1),
        lambda ts: F.stack(tuple(ts), 0),
        lambda ts: F.hstack(ts),
        lambda ts: F.block_diag(*ts),
        lambda ts: F.vstack(ts),
    ],
    ids=["cat", "stack", "hstack", "block_diag", "vstack"],
)
def test_tensor_list_calls_build_the_same_graph_on_both_paths(op):
    # One edge per list element (None for an element that needs no gradient).
    def fn(a, b):
        y = op([a * 2.0, F.ones(2, 3, dtype=F.float64), b])
        return (y * y).sum()

    same_on_both_paths(fn, (2, 3), (2, 3))


def test_a_tensor_list_call_is_recorded_in_cpp_and_keeps_its_list(path):
    a, b = leaf(2, 3), leaf(2, 3, seed=1)
    parts = [a, b]
    y = F.cat(parts)
    assert isinstance(y.grad_fn._saved, _C._SavedCall) == path
    assert [n.variable for n, _ in y.grad_fn.next_functions] == [a, b]
    parts.append(leaf(5, 3, seed=2))  # editing the list after the call changes nothing
    parts[0] = leaf(7, 3, seed=3)
    y.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(b.grad.numpy(), np.ones((2, 3)))


def _inplace_chain(a, b):
    x = a * 1.0
    x.mul_(b)  # reads the old x: a copy of it is kept
    x.add_(a, alpha=2.0)
    x.relu_()  # reads its result
    y = F.zeros(3, dtype=F.float64)
    y.add_(x)  # a target that did not require grad joins the graph
    y.div_(b.detach() + 3.0)
    return (y * y).sum()


def test_in_place_calls_build_the_same_graph_on_both_paths():
    grad_a, _ = same_on_both_paths(_inplace_chain, (3,), (3,))
    # and against finite differences
    a0, b0 = leaf(3).detach(), leaf(3, seed=1).detach()
    eps, num = 1e-6, np.zeros(3)
    for i in range(3):
        d = np.zeros(3)
        d[i] = eps
        hi = _inplace_chain(a0 + F.tensor(d), b0).item()
        lo = _inplace_chain(a0 - F.tensor(d), b0).item()
        num[i] = (hi - lo) / (2 * eps)
    np.testing.assert_allclose(grad_a, num, rtol=1e-6, atol=1e-8)


def test_in_place_call_is_recorded_in_cpp(path):
    a = leaf(3)
    x = a * 1.0
    first = x.grad_fn
    x.mul_(a)
    assert x.grad_fn.name() == "MulBackward0" and x.grad_fn is not first
    assert isinstance(x.grad_fn._saved, _C._SavedCall) == path
    assert x.grad_fn.next_functions[0][0] is first  # the old value's history
    x.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * a.detach().numpy())


def test_in_place_on_leaves_and_views_keeps_the_python_rules(path):
    a = leaf(3)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        a.add_(1.0)
    base = a * 1.0
    base[1:].mul_(3.0)  # a view: the root's history ends in CopySlices
    assert base.grad_fn.name() == "CopySlices"
    base.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [1.0, 3.0, 3.0])
