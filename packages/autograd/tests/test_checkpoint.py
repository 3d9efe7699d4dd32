"""flambeau.utils.checkpoint: gradients equal to the unchecked model's (random draws
included), the forward run again in backward, intermediates not kept, errors as PyTorch's."""

from __future__ import annotations

import contextlib
import gc
import weakref

import numpy as np
import pytest

import flambeau as F
import flambeau.utils
from flambeau import autograd
from flambeau.utils import checkpoint as ck

VARIANTS = [pytest.param(False, id="non-reentrant"), pytest.param(True, id="reentrant")]


class Model:
    """matmul, dropout, pointwise ops; counts its calls."""

    def __init__(self, seed=0):
        F.manual_seed(seed)
        self.w1 = F.randn(6, 8, dtype=F.float64, requires_grad=True)
        self.w2 = F.randn(8, 3, dtype=F.float64, requires_grad=True)
        self.calls = 0

    def __call__(self, x):
        self.calls += 1
        h = (x @ self.w1).tanh()
        h = F.dropout(h, 0.5, True)  # its mask is drawn again in the recomputation
        return (h @ self.w2).sin() * 2

    def params(self):
        return [self.w1, self.w2]


def reference_grads(model, x, seed):
    """Output and gradients of the model run without checkpointing."""
    F.manual_seed(seed)
    out = model(x)
    grads = autograd.grad(out.square().sum(), [x, *model.params()])
    return out.detach(), grads


@pytest.mark.parametrize("reentrant", VARIANTS)
def test_gradients_equal_the_unchecked_models_exactly(reentrant):
    model = Model()
    x = F.randn(5, 6, dtype=F.float64, requires_grad=True)
    want_out, want = reference_grads(model, x, seed=7)
    model.calls = 0
    F.manual_seed(7)
    out = ck.checkpoint(model, x, use_reentrant=reentrant)
    assert model.calls == 1
    assert F.equal(out, want_out)
    after_forward = F.rand(4)  # the recomputation must not shift what comes next
    out.square().sum().backward()
    assert model.calls == 2  # backward ran the forward again
    for got, expected in zip([x.grad, *(p.grad for p in model.params())], want):
        assert F.equal(got, expected)
    F.manual_seed(7)
    model(x)
    assert F.equal(F.rand(4), after_forward)


def test_without_preserving_the_random_state_the_draws_differ():
    model = Model()
    x = F.randn(5, 6, dtype=F.float64, requires_grad=True)
    _, want = reference_grads(model, x, seed=3)
    F.manual_seed(3)
    out = ck.checkpoint(model, x, use_reentrant=False, preserve_rng_state=False)
    out.square().sum().backward()
    assert not F.equal(x.grad, want[0])  # the mask was drawn anew in the recomputation


def test_gradients_match_finite_differences():
    w = F.randn(3, 3, dtype=F.float64, requires_grad=True)

    def fn(x, scale):
        return ((x @ w).exp() * scale).cumsum(0)

    def checked(x, w_):
        return ck.checkpoint(fn, x, scale=w_, use_reentrant=False)

    x = F.randn(2, 3, dtype=F.float64, requires_grad=True)
    scale = F.randn(3, dtype=F.float64, requires_grad=True)
    assert autograd.gradcheck(checked, (x, scale))
    assert autograd.gradgradcheck(checked, (x, scale))


def intermediates_probe(store):
    def fn(x, w):
        a = x @ w
        b = a.sin()
        c = b.exp()
        store.extend(weakref.ref(t) for t in (a, b, c))
        return (c * b).sum(1)

    return fn


@pytest.mark.parametrize("reentrant", VARIANTS)
def test_the_graph_keeps_no_intermediate(reentrant):
    x = F.randn(4, 5, requires_grad=True)
    w = F.randn(5, 6, requires_grad=True)
    unchecked, checked = [], []
    kept = intermediates_probe(unchecked)(x, w)
    out = ck.checkpoint(intermediates_probe(checked), x, w, use_reentrant=reentrant)
    gc.collect()
    assert all(r() is not None for r in unchecked[1:])  # the probe can see a kept tensor
    assert all(r() is None for r in checked)
    out.sum().backward()
    g_checked = (x.grad.clone(), w.grad.clone())
    x.grad = w.grad = None
    kept.sum().backward()
    assert F.equal(x.grad, g_checked[0]) and F.equal(w.grad, g_checked[1])


def allocated() -> int:
    gc.collect()
    return F._C._allocator_stats()["allocated_bytes"]


@pytest.mark.parametrize("reentrant", VARIANTS)
def test_memory_held_between_forward_and_backward(reentrant):
    # Ten 4 MB intermediates: unchecked, the graph holds them; checkpointed, about none.
    x = F.randn(1000, 1000, requires_grad=True)

    def deep(x):
        for _ in range(10):
            x = (x * 1.01).sin()
        return x.sum()

    before = allocated()
    out = deep(x)
    unchecked = allocated() - before
    del out
    before = allocated()
    out = ck.checkpoint(deep, x, use_reentrant=reentrant)
    checked = allocated() - before
    assert unchecked > 10 * 4_000_000
    assert checked < 1_000_000
    out.backward()
    assert x.grad.shape == (1000, 1000)


def test_non_reentrant_supports_grad_inputs_kwargs_and_inner_parameters():
    w = F.randn(3, dtype=F.float64, requires_grad=True)

    def fn(x, *, shift):
        return (x * w + shift).exp().sum()

    x = F.randn(3, dtype=F.float64)  # no input requires grad: w still gets one
    out = ck.checkpoint(fn, x, shift=0.5, use_reentrant=False)
    (gw,) = autograd.grad(out, [w])
    np.testing.assert_allclose(gw.numpy(), (x * (x * w.detach() + 0.5).exp()).numpy())
    out = ck.checkpoint(fn, x, shift=0.5, use_reentrant=False)
    out.backward(inputs=[w])
    np.testing.assert_allclose(w.grad.numpy(), gw.numpy())


def test_reentrant_refuses_grad_and_backward_inputs():
    x = F.randn(3, requires_grad=True)
    message = "use_reentrant=True.*incompatible with .grad"
    with pytest.raises(RuntimeError, match=message):
        autograd.grad(ck.checkpoint(F.sin, x, use_reentrant=True).sum(), [x])
    with pytest.raises(RuntimeError, match=message):
        ck.checkpoint(F.sin, x, use_reentrant=True).sum().backward(inputs=[x])
    with pytest.raises(ValueError, match="Unexpected keyword arguments: a,b"):
        ck.checkpoint(F.sin, x, use_reentrant=True, a=1, b=2)
    with pytest.raises(ValueError, match="`context_fn` or `debug` is only supported"):
        ck.checkpoint(F.sin, x, use_reentrant=True, debug=True)


def test_reentrant_without_an_input_requiring_grad():
    w = F.randn(3, requires_grad=True)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = ck.checkpoint(lambda x: x * w, F.ones(3), use_reentrant=True)
    assert not out.requires_grad  # as in PyTorch: the reentrant variant then records nothing


def test_use_reentrant_must_be_passed_or_warns_and_defaults_to_reentrant():
    x = F.randn(3, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        out = ck.checkpoint(F.sin, x)
    with pytest.raises(RuntimeError, match="use_reentrant=True"):
        autograd.grad(out.sum(), [x])


def test_early_stop():
    reached = []

    def fn(x):
        y = (x.sin() * 3).sum()
        reached.append(True)  # after the last recorded operation
        return y

    x = F.randn(4, requires_grad=True)
    ck.checkpoint(fn, x, use_reentrant=False).backward()
    assert len(reached) == 1  # the recomputation stopped before this line
    ck.checkpoint(fn, x, use_reentrant=False, early_stop=False).backward()
    assert len(reached) == 3
    with ck.set_checkpoint_early_stop(False):
        out = ck.checkpoint(fn, x, use_reentrant=False)
    out.backward()
    assert len(reached) == 5


def test_retain_graph_recomputes_per_backward():
    model = Model()
    x = F.randn(2, 6, dtype=F.float64, requires_grad=True)
    out = ck.checkpoint(model, x, use_reentrant=False).sum()
    out.backward(retain_graph=True)
    first = x.grad.clone()
    out.backward()
    assert model.calls == 3
    assert F.equal(x.grad, 2 * first)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.backward()


def test_graph_exec_group_recomputes_once_and_refuses_overlap():
    calls = []

    def two(x):
        calls.append(1)
        return x.sin(), x.cos()

    x = F.randn(3, requires_grad=True)
    a, b = ck.checkpoint(two, x, use_reentrant=False)
    with ck.GraphExecGroup():
        a.sum().backward()
        b.sum().backward()
    assert len(calls) == 2  # one recomputation served both
    np.testing.assert_allclose(x.grad.numpy(), (x.cos() - x.sin()).detach().numpy(), rtol=1e-6)

    def shared(x):
        y = x.exp()
        return y * 2, y * 3

    a, b = ck.checkpoint(shared, x, use_reentrant=False)
    with ck.GraphExecGroup():
        a.sum().backward(retain_graph=True)
        with pytest.raises(ck.CheckpointError, match="already unpacked once.*GraphExecGroup"):
            b.sum().backward()
    with ck.GraphExecGroup(), pytest.raises(RuntimeError, match="cannot be nested"):
        with ck.GraphExecGroup():
            pass


def test_nested_checkpoints():
    model = Model()
    x = F.randn(3, 6, dtype=F.float64, requires_grad=True)
    _, want = reference_grads(model, x, seed=11)

    def outer(x):
        return ck.checkpoint(model, x, use_reentrant=False) * 1.0

    F.manual_seed(11)
    out = ck.checkpoint(outer, x, use_reentrant=False)
    (gx, g1, g2) = autograd.grad(out.square().sum(), [x, *model.params()])
    assert F.equal(gx, want[0]) and F.equal(g1, want[1]) and F.equal(g2, want[2])


def test_an_input_changed_in_place_is_refused():
    x = F.randn(3, requires_grad=True)
    y = x * 1.0
    out = ck.checkpoint(F.exp, y, use_reentrant=False).sum()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_without_grad_mode_the_function_just_runs():
    model = Model()
    with F.no_grad():
        out = ck.checkpoint(model, F.randn(2, 6, dtype=F.float64), use_reentrant=False)
    assert model.calls == 1 and not out.requires_grad


class Toggle:
    """A function whose recomputation differs from its forward."""

    def __init__(self, change):
        self.change = change
        self.calls = 0

    def __call__(self, x):
        self.calls += 1
        if self.calls > 1:
            return self.change(x)
        return x.sin().exp()


def test_determinism_checks():
    x = F.randn(4, requires_grad=True)
    # More tensors saved again: hidden by the early stop, an error without it.
    more = Toggle(lambda x: x.sin().exp().exp())
    out = ck.checkpoint(more, x, use_reentrant=False, early_stop=False)
    with pytest.raises(ck.CheckpointError, match="save more tensors during recomputation"):
        out.sum().backward()
    out = ck.checkpoint(Toggle(lambda x: x.sin()), x, use_reentrant=False)
    with pytest.raises(ck.CheckpointError, match="different number of tensors was saved"):
        out.sum().backward()
    # The same operations on a tensor of another shape (broadcast to the same result).
    scales = [F.full((4,), 2.0), F.full((1,), 3.0)]

    def scaled(x):
        return (x * scales.pop(0)).exp()

    out = ck.checkpoint(scaled, x, use_reentrant=False)
    with pytest.raises(ck.CheckpointError, match="different metadata than during the forward"):
        out.sum().backward()
    scales = [F.full((4,), 2.0), F.full((1,), 3.0)]
    out = ck.checkpoint(scaled, x, use_reentrant=False, determinism_check="none")
    out.sum().backward()  # not checked: the recomputed values are used as they are
    np.testing.assert_allclose(x.grad.numpy(), (3 * (3 * x).exp()).detach().numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match=r"one of \['default', 'none'\], but got strict"):
        ck.checkpoint(F.sin, x, use_reentrant=False, determinism_check="strict")


def test_debug_names_where_tensors_were_saved():
    x = F.randn(4, requires_grad=True)
    out = ck.checkpoint(Toggle(lambda x: x.cos()), x, use_reentrant=False, debug=True)
    with pytest.raises(ck.CheckpointError) as info:
        out.sum().backward()
    text = str(info.value)
    assert "Tensors saved during the original forward" in text
    assert "test_checkpoint.py" in text and "return x.sin().exp()" in text
    with pytest.raises(ValueError, match="debug=True is incompatible with non-default"):
        with ck.set_checkpoint_debug_enabled(True):
            ck.checkpoint(F.sin, x, use_reentrant=False, context_fn=lambda: (None, None))


def test_context_fn():
    log = []

    @contextlib.contextmanager
    def note(name):
        log.append(name)
        yield

    x = F.randn(3, requires_grad=True)
    out = ck.checkpoint(
        F.exp, x, use_reentrant=False, context_fn=lambda: (note("forward"), note("again"))
    )
    assert log == ["forward"]
    out.sum().backward()
    assert log == ["forward", "again"]

    def fails(x):
        raise KeyError("inside")

    swallow = contextlib.suppress(KeyError)
    with pytest.raises(RuntimeError, match="suppressed an exception"):
        ck.checkpoint(fails, x, use_reentrant=False, context_fn=lambda: (swallow, swallow))


@pytest.mark.parametrize("reentrant", VARIANTS)
def test_checkpoint_sequential(reentrant):
    counts = [0] * 5

    def layer(i, w):
        def run(x):
            counts[i] += 1
            return (x @ w).tanh()

        return run

    F.manual_seed(0)
    weights = [F.randn(4, 4, dtype=F.float64, requires_grad=True) for _ in range(5)]
    layers = [layer(i, w) for i, w in enumerate(weights)]
    x = F.randn(2, 4, dtype=F.float64, requires_grad=True)
    y = x
    for f in layers:
        y = f(y)
    want = autograd.grad(y.sum(), [x, *weights])
    counts[:] = [0] * 5
    out = ck.checkpoint_sequential(layers, 2, x, use_reentrant=reentrant)
    assert F.equal(out, y)
    out.sum().backward()
    assert all(F.equal(g, e) for g, e in zip([x.grad, *(w.grad for w in weights)], want))
    # As in PyTorch: segments - 1 chunks of len // segments functions are checkpointed
    # (here the first two functions, which ran twice); the rest runs as it is.
    assert counts == [2, 2, 1, 1, 1]


@pytest.mark.parametrize("reentrant", VARIANTS)
def test_recomputation_runs_under_the_forwards_autocast_state(reentrant):
    # As in PyTorch, the recomputation in backward (which runs outside the autocast block)
    # reuses the autocast settings the forward had, so a bfloat16 forward recomputes in
    # bfloat16. Small integers keep every product exact in bfloat16.
    x = F.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
    w = F.tensor([[1.0, 0.0, 2.0], [-1.0, 1.0, 1.0]], requires_grad=True)
    seen = []

    def f(a):
        h = a @ w
        seen.append(h.dtype)
        return h.float().square()

    with F.autocast(device_type="cpu", dtype=F.bfloat16):
        out = ck.checkpoint(f, x, use_reentrant=reentrant)
    assert out.dtype == F.float32
    out.sum().backward()
    assert seen == [F.bfloat16, F.bfloat16]
    xa = np.array([[1.0, 2.0], [3.0, -1.0]])
    wa = np.array([[1.0, 0.0, 2.0], [-1.0, 1.0, 1.0]])
    h = xa @ wa  # d(sum h^2)/dh = 2h
    np.testing.assert_array_equal(x.grad.numpy(), 2 * h @ wa.T)
    np.testing.assert_array_equal(w.grad.numpy(), xa.T @ (2 * h))
    assert x.grad.dtype == F.float32 and w.grad.dtype == F.float32
    # A forward run with autocast off recomputes with it off, even inside an autocast block.
    seen.clear()
    x.grad = w.grad = None
    out = ck.checkpoint(f, x, use_reentrant=reentrant)
    with F.autocast(device_type="cpu", dtype=F.bfloat16):
        out.sum().backward()
    assert seen == [F.float32, F.float32]


def test_checkpoint_sequential_arguments():
    x = F.randn(2, requires_grad=True)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: extra"):
        ck.checkpoint_sequential([F.sin], 1, x, use_reentrant=False, extra=1)
    with pytest.raises(ValueError, match="segments must be between 1 and"):
        ck.checkpoint_sequential([F.sin, F.cos], 3, x, use_reentrant=False)
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant parameter"):
        out = ck.checkpoint_sequential([F.sin, F.cos], 1, x)
    assert F.equal(out, x.sin().cos())


def test_checkpoint_sequential_takes_a_sequential():
    nn = pytest.importorskip("flambeau.nn")
    F.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2), nn.Sigmoid())
    x = F.randn(5, 3, requires_grad=True)
    out = ck.checkpoint_sequential(model, 2, x, use_reentrant=False)
    assert F.equal(out, model(x))
    out.sum().backward()
    grad = model[0].weight.grad.clone()
    model.zero_grad()
    model(x).sum().backward()
    assert F.equal(model[0].weight.grad, grad)


def test_helpers():
    a = F.ones(2, requires_grad=True)
    detached = ck.detach_variable((a, 3))
    assert detached[1] == 3 and detached[0].requires_grad and detached[0].grad_fn is None
    assert detached[0] is not a
    with pytest.raises(RuntimeError, match="Only tuple of tensors is supported"):
        ck.detach_variable([a])
    assert ck.get_device_states(a, [a]) == ([], [])  # CPU tensors: the default generator
    ck.set_device_states([], [])
    assert ck.DefaultDeviceType.get_device_type() == "cpu"
    assert issubclass(ck.CheckpointError, RuntimeError)
    forward, recompute = ck.noop_context_fn()
    with forward, recompute:
        pass


def test_module_is_reachable_as_an_attribute():
    assert flambeau.utils.checkpoint is ck
    assert set(ck.__all__) <= set(dir(ck))
