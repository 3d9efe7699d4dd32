"""Recorded calls keep only what their wanted gradients read (derivatives' ``reads=``), and
autograd.grad runs only the part of the graph that leads to its inputs."""

from __future__ import annotations

import gc
import itertools
import weakref

import numpy as np
import pytest

import flambeau as F
from flambeau import _C, autograd
from flambeau.autograd import derivatives, gradcheck, recorder
from flambeau.autograd.derivatives import registry
from flambeau.autograd.tensor_meta import TensorMeta


@pytest.fixture(params=[False, True], ids=["record_in_python", "record_in_cpp"])
def fast(request):
    was = _C._autograd_fast_set_enabled(request.param)
    yield request.param
    _C._autograd_fast_set_enabled(was)


def t64(shape, seed, low=-1.0, high=1.0):
    a = np.random.default_rng(seed).uniform(low, high, shape)
    return F.from_numpy(a)


# ---- saving only what is read --------------------------------------------------------------


def _freed_after_del(make):
    x = t64((3,), 0).requires_grad_()
    a = x.sin()
    ref = weakref.ref(a)
    y = make(a)
    del a
    gc.collect()
    freed = ref() is None
    y.sum().backward()
    return freed, x


@pytest.mark.parametrize(
    "make",
    [lambda a: a * 3.0, lambda a: 3.0 * a, lambda a: a + 1.0, lambda a: a.exp(), lambda a: a / 2],
    ids=["mul_scalar", "rmul_scalar", "add_scalar", "exp", "div_scalar"],
)
def test_an_argument_no_gradient_reads_is_not_kept(fast, make):
    freed, x = _freed_after_del(make)
    assert freed
    assert x.grad is not None


def test_what_is_read_is_kept(fast):
    # sin reads its input: a stays alive with the graph.
    x = t64((3,), 0).requires_grad_()
    a = x.sin()
    ref = weakref.ref(a)
    y = a.sin()
    del a
    gc.collect()
    assert ref() is not None
    y.sum().backward()
    assert F.allclose(x.grad, F.cos(x.sin()) * F.cos(x))


def test_the_python_recorder_saves_tensor_meta():
    was = _C._autograd_fast_set_enabled(False)
    try:
        x = t64((2, 3), 0).requires_grad_()
        w = t64((3,), 1)  # needs no gradient
        y = x * w
        bound = y.grad_fn._saved.bound
        assert type(bound["input"]) is TensorMeta and bound["other"] is w
        assert bound["input"].shape == (2, 3) and bound["input"].dtype == F.float64
        assert bound["input"].numel() == 6 and bound["input"].dim() == 2
        z = x * w.requires_grad_()  # both wanted: both kept
        assert z.grad_fn._saved.bound["input"] is x
    finally:
        _C._autograd_fast_set_enabled(was)


def test_an_unkept_argument_is_not_checked_for_in_place_changes():
    was = _C._autograd_fast_set_enabled(False)
    try:
        x = t64((3,), 0).requires_grad_()
        a = x * 1.0
        y = a * 2.0
        a.add_(1.0)  # y's backward does not read a (PyTorch does not check it either)
        y.sum().backward()
        assert F.allclose(x.grad, F.full((3,), 2.0, dtype=F.float64))
    finally:
        _C._autograd_fast_set_enabled(was)


def test_saved_tensor_hooks_see_only_what_is_read():
    x = t64((3,), 0).requires_grad_()
    a = x.sin()
    packed = []

    def pack(t):
        packed.append(t)
        return t

    with autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = a * 3.0
    assert packed == []
    y.sum().backward()
    assert F.allclose(x.grad, 3 * F.cos(x))


def test_a_kept_argument_that_came_to_require_grad_gets_no_gradient_from_a_placeholder():
    was = _C._autograd_fast_set_enabled(False)
    try:
        x = t64((3,), 0).requires_grad_()
        w = t64((3,), 1)
        y = x * w  # keeps w (read by x's gradient), not x
        w.requires_grad_()
        y.sum().backward()
        assert F.allclose(x.grad, w.detach()) and w.grad is None
    finally:
        _C._autograd_fast_set_enabled(was)


def test_keep_for_masks():
    """The C++ recorder's contract: keep_for(tensor_mask, grad_mask) -> keep_mask."""
    mul = recorder._keep_for(("input", "other"), derivatives.FORMULAS["mul"])
    assert mul(0b11, 0b01) == 0b10  # x * w, x wanted: keep w
    assert mul(0b11, 0b11) == 0b11
    assert mul(0b01, 0b01) == 0b10  # x * 3.0: keep the number only
    add = recorder._keep_for(("input", "other", "alpha"), derivatives.FORMULAS["add"])
    assert add(0b011, 0b011) == 0b100  # alpha (not a tensor) is always kept
    undeclared = recorder._keep_for(("input", "other"), derivatives.FORMULAS["atan2"])
    assert undeclared(0b11, 0b01) == 0b11


def test_reads_naming_an_unknown_argument_is_refused():
    with pytest.raises(ValueError, match="'inptu'"):
        registry.formula("mul", reads={"inptu": ("other",)})
    with pytest.raises(ValueError, match="'othr'"):
        registry.formula("mul", reads={"input": ("othr",)})
    with pytest.raises(TypeError, match="tuple of names"):
        registry.formula("mul", reads={"input": "other"})
    assert registry.formula("mul", reads={"input": ("other",)})  # (registers nothing)


# Sample calls of every operator whose formula declares reads=: (function, its tensor
# arguments). Gradients are compared, for each subset of the tensors requiring grad, with
# the formula's undeclared behaviour (every argument kept) and with finite differences.
def _nll(logp, w):
    target = F.tensor([0, 2, 1])
    return F.nll_loss_forward(logp, target, w, 1, -100)[0]


P = dict(low=0.5, high=2.0)
SAMPLES = {
    "add": [(lambda a, b: F.add(a, b, alpha=2.0), [(2, 3), (3,)]), (lambda a: a + 1.0, [(3,)])],
    "sub": [(lambda a, b: F.sub(a, b, alpha=0.5), [(2, 3), (2, 1)])],
    "rsub": [(lambda a, b: F.rsub(a, b, alpha=2.0), [(2, 3), (3,)])],
    "mul": [(lambda a, b: a * b, [(2, 3), (3,)]), (lambda a: a * 3.0, [(3,)])],
    "div": [(lambda a, b: a / b, [(2, 3), ((3,), P)]), (lambda a: 2.0 / (a + 3), [(3,)])],
    "true_divide": [(lambda a, b: F.true_divide(a, b), [(2, 3), ((2, 1), P)])],
    "neg": [(lambda a: -a, [(2, 3)])],
    "negative": [(F.negative, [(2, 3)])],
    "positive": [(F.positive, [(2, 3)])],
    "clone": [(lambda a: a.clone(), [(2, 3)])],
    "contiguous": [(lambda a: a.t().contiguous(), [(2, 3)])],
    "pow": [
        (lambda a, b: a.pow(b), [((2, 3), P), (3,)]),
        (lambda a: a.pow(3.0), [(3,)]),
        (lambda b: F.pow(2.0, b), [(3,)]),
    ],
    "exp": [(F.exp, [(2, 3)])],
    "log": [(F.log, [((2, 3), P)])],
    "sqrt": [(F.sqrt, [((2, 3), P)])],
    "rsqrt": [(F.rsqrt, [((2, 3), P)])],
    "sin": [(F.sin, [(2, 3)])],
    "cos": [(F.cos, [(2, 3)])],
    "tanh": [(F.tanh, [(2, 3)])],
    "sigmoid": [(F.sigmoid, [(2, 3)])],
    "relu": [(F.relu, [(2, 3)])],
    "sum": [(lambda a: a.sum(), [(2, 3)]), (lambda a: a.sum(1, keepdim=True), [(2, 3)])],
    "mean": [(lambda a: a.mean(), [(2, 3)]), (lambda a: a.mean(0), [(2, 3)])],
    "view": [(lambda a: a.view(3, 2), [(2, 3)])],
    "reshape": [(lambda a: a.t().reshape(6), [(2, 3)])],
    "flatten": [(lambda a: a.flatten(), [(2, 3)])],
    "unflatten": [(lambda a: a.unflatten(1, (3, 1)), [(2, 3)])],
    "view_as": [(lambda a, b: a.view_as(b), [(2, 3), (3, 2)])],
    "reshape_as": [(lambda a, b: a.reshape_as(b), [(2, 3), (6,)])],
    "ravel": [(lambda a: a.ravel(), [(2, 3)])],
    "squeeze": [(lambda a: a.squeeze(1), [(2, 1, 3)])],
    "unsqueeze": [(lambda a: a.unsqueeze(0), [(2, 3)])],
    "expand": [(lambda a: a.expand(2, 3), [(1, 3)])],
    "expand_as": [(lambda a, b: a.expand_as(b), [(3,), (2, 3)])],
    "transpose": [(lambda a: a.transpose(0, 1), [(2, 3)])],
    "swapaxes": [(lambda a: a.swapaxes(0, 1), [(2, 3)])],
    "swapdims": [(lambda a: a.swapdims(0, 1), [(2, 3)])],
    "t": [(lambda a: a.t(), [(2, 3)])],
    "permute": [(lambda a: a.permute(2, 0, 1), [(2, 3, 2)])],
    "to": [(lambda a: a.to(F.float32).to(F.float64), [(2, 3)])],
    "type_as": [(lambda a, b: a.type_as(b), [(2, 3), (2,)])],
    "float": [(lambda a: a.float().double(), [(2, 3)])],
    "double": [(lambda a: a.float().double(), [(2, 3)])],
    "half": [(lambda a: a.half().double(), [(2, 3)])],
    "bfloat16": [(lambda a: a.bfloat16().double(), [(2, 3)])],
    "cpu": [(lambda a: a.cpu() * 1.0, [(2, 3)])],
    "mm": [(F.mm, [(2, 3), (3, 2)]), (lambda a, w: F.mm(a, w.t()), [(2, 3), (4, 3)])],
    "bmm": [(F.bmm, [(2, 2, 3), (2, 3, 2)])],
    "matmul": [
        (F.matmul, [(3,), (3,)]),
        (F.matmul, [(2, 3), (3,)]),
        (F.matmul, [(3,), (3, 2)]),
        (F.matmul, [(2, 2, 3), (3, 2)]),
        (lambda a, w: F.matmul(a, w.t()), [(2, 3), (4, 3)]),
    ],
    "addmm": [(lambda c, a, b: F.addmm(c, a, b, beta=0.5, alpha=2.0), [(2,), (2, 3), (3, 2)])],
    "softmax": [(lambda a: F.softmax(a, 1), [(2, 3)])],
    "log_softmax": [(lambda a: F.log_softmax(a, 1), [(2, 3)])],
    "nll_loss_forward": [(_nll, [(3, 4), ((4,), P)])],
    "mse_loss": [(lambda a, b: F.mse_loss(a, b), [(2, 3), (2, 3)])],
}
DECLARED = sorted(k for k, f in derivatives.FORMULAS.items() if f.reads is not None)


def test_every_declaration_has_samples():
    assert sorted(set(DECLARED) - set(SAMPLES)) == []


def _tensors(shapes, seed):
    out = []
    for i, s in enumerate(shapes):
        shape, kw = s if isinstance(s[0], tuple) else (s, {})
        out.append(t64(shape, seed + i, **kw))
    return out


def _grads(fn, tensors, subset):
    leaves = [t.detach().clone().requires_grad_(i in subset) for i, t in enumerate(tensors)]
    out = fn(*leaves)
    if not out.requires_grad:  # (type_as: no gradient reaches b)
        return (None,) * len(subset)
    weights = t64(tuple(out.shape), 99).to(out.dtype)
    wanted = [leaves[i] for i in sorted(subset)]
    return autograd.grad((out * weights).sum(), wanted, allow_unused=True)


@pytest.mark.parametrize("name", DECLARED)
def test_declared_formulas_give_the_same_gradients_for_every_subset(fast, name, monkeypatch):
    for k, (fn, shapes) in enumerate(SAMPLES[name]):
        tensors = _tensors(shapes, 10 * k)
        subsets = [
            set(c)
            for n in range(1, len(tensors) + 1)
            for c in itertools.combinations(range(len(tensors)), n)
        ]
        declared = [_grads(fn, tensors, s) for s in subsets]
        # Every argument kept: the Python recorder reads the declarations at each call (the
        # core caches its plans' masks, so the reference runs there).
        was = _C._autograd_fast_set_enabled(False)
        try:
            with monkeypatch.context() as m:
                for f in derivatives.FORMULAS.values():
                    if f.reads is not None:
                        m.setattr(f, "reads", None)
                undeclared = [_grads(fn, tensors, s) for s in subsets]
        finally:
            _C._autograd_fast_set_enabled(was)
        for s, got, want in zip(subsets, declared, undeclared):
            for g, w in zip(got, want):
                assert (g is None) == (w is None), (name, k, s)
                if g is not None:
                    np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-12)
        if fast:
            continue
        for s in subsets:
            if name in ("half", "bfloat16", "float", "double", "to"):
                continue  # rounding through a narrow dtype: no finite differences
            order = sorted(s)

            def f(*wanted, fn=fn, tensors=tensors, order=order):
                args = list(tensors)
                for i, w in zip(order, wanted):
                    args[i] = w
                return fn(*args)

            assert gradcheck(f, [tensors[i].clone().requires_grad_() for i in order])


# ---- autograd.grad runs only what leads to its inputs ---------------------------------------


class Counting(autograd.Function):
    calls = 0

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        Counting.calls += 1
        return g * 2


def test_grad_does_not_run_a_side_branch(fast):
    Counting.calls = 0
    x = t64((3,), 0).requires_grad_()
    w = t64((3,), 1).requires_grad_()
    side = Counting.apply(w)
    fired = []
    h = w.sin()
    h.register_hook(lambda g: fired.append("tensor hook"))
    h.retain_grad()
    side.grad_fn.register_prehook(lambda g: fired.append("prehook"))
    side.grad_fn.register_hook(lambda gi, go: fired.append("hook"))
    y = (x * x).sum() + side.sum() + h.sum()
    (gx,) = autograd.grad(y, [x], retain_graph=True)
    assert Counting.calls == 0 and fired == []
    assert h.grad is None and w.grad is None and x.grad is None
    assert F.allclose(gx, 2 * x.detach())
    (gw,) = autograd.grad(y, [w])  # now the branch is wanted
    assert Counting.calls == 1 and "prehook" in fired and "tensor hook" in fired
    assert F.allclose(gw, 2 + F.cos(w.detach()))
    assert x.grad is None and w.grad is None


def test_grad_of_a_non_leaf_runs_nothing_below_it(fast):
    Counting.calls = 0
    x = t64((3,), 0).requires_grad_()
    a = Counting.apply(x)  # below the input: must not run
    fired = []
    a.register_hook(lambda g: fired.append("tensor hook"))  # fires: it is a's gradient
    a.grad_fn.register_prehook(lambda g: fired.append("prehook"))
    b = a.exp()
    c = (b * a).sum()
    (ga,) = autograd.grad(c, [a])
    assert Counting.calls == 0
    assert fired == ["tensor hook"]
    ad = a.detach()
    assert F.allclose(ga, F.exp(ad) * ad + F.exp(ad))
    assert x.grad is None


def test_grad_matches_finite_differences_with_pruned_branches(fast):
    x = t64((3,), 0).requires_grad_()
    w = t64((3,), 1).requires_grad_()

    def f(x):
        return (x.sin() * w.exp()).sum() + Counting.apply(w).pow(2).sum()

    assert gradcheck(f, [x])
    Counting.calls = 0
    (gx,) = autograd.grad(f(x), [x])
    assert Counting.calls == 0
    assert F.allclose(gx, F.cos(x.detach()) * F.exp(w.detach()))


def test_grad_allow_unused(fast):
    x = t64((3,), 0).requires_grad_()
    z = t64((3,), 1).requires_grad_()
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = autograd.grad(y, [x, z], allow_unused=True, retain_graph=True)
    assert gz is None and F.allclose(gx, F.full((3,), 2.0, dtype=F.float64))
    gx, gz = autograd.grad(y, [x, z], materialize_grads=True)
    assert F.equal(gz, F.zeros(3, dtype=F.float64))
    assert x.grad is None and z.grad is None
