"""Regressions of issue 21, gradients that were silently wrong or missing, each checked
against finite differences, NumPy or hand-derived values: fmod and remainder, gradients
of another dtype than their input, foreach lists of different lengths, concatenate's
axis, and in-place operations on outputs that a formula does not read (normalisation
layers followed by ReLU(inplace=True))."""

from __future__ import annotations

import math

import numpy as np
import pytest

import flambeau as F
import flambeau.nn as nn
import flambeau.nn.functional as NF
from flambeau import _C, autograd
from flambeau.autograd import gradcheck, gradgradcheck


@pytest.fixture(params=[True, False], ids=["cpp", "python"])
def path(request):
    """Each test runs with calls recorded in C++ and by the Python recorder."""
    was = _C._autograd_fast_set_enabled(request.param)
    yield request.param
    _C._autograd_fast_set_enabled(was)


def f64(values, requires_grad=True):
    return F.tensor(values, dtype=F.float64, requires_grad=requires_grad)


def randn(*shape, seed=0, dtype=F.float64):
    a = np.random.default_rng(seed).standard_normal(shape)
    return F.tensor(a, dtype=dtype, requires_grad=True)


# ---- 1. fmod and remainder: d/da = 1, d/db = -(a / b rounded) ----------------------------

A = [1.7, -2.3, 0.9, 5.5, -4.1]
B = [0.5, 0.6, -0.4, -1.3, 1.1]
ROUNDED = {"fmod": np.trunc, "remainder": np.floor}  # the quotient each one subtracts


@pytest.mark.parametrize("name", ["fmod", "remainder"])
def test_mod_gradients(path, name):
    a, b = f64(A), f64(B)
    out = getattr(F, name)(a, b)
    assert out.requires_grad
    out.backward(f64([1.0, 2.0, 3.0, 4.0, 5.0], requires_grad=False))
    g = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    np.testing.assert_allclose(a.grad.numpy(), g)
    np.testing.assert_allclose(b.grad.numpy(), -g * ROUNDED[name](np.array(A) / np.array(B)))
    # finite differences, away from the jumps; the second derivative is zero
    assert gradcheck(getattr(F, name), (f64(A), f64(B)))
    assert gradgradcheck(getattr(F, name), (f64(A), f64(B)))


@pytest.mark.parametrize(
    "call",
    [
        lambda a: F.fmod(a, 0.5),
        lambda a: F.remainder(a, 0.5),
        lambda a: a % 0.5,
        lambda a: a.fmod(F.tensor(0.5, dtype=F.float64)),
    ],
    ids=["fmod", "remainder", "mod-operator", "0-dim-divisor"],
)
def test_mod_by_a_number(path, call):
    a = f64(A)
    call(a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.ones(5))


def test_number_mod_tensor(path):
    """2.3 % b (__rmod__): only the divisor gets a gradient, -floor(2.3 / b)."""
    b = f64(B)
    (2.3 % b).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), -np.floor(2.3 / np.array(B)))
    assert gradcheck(lambda t: F.remainder(2.3, t), (f64(B),))


@pytest.mark.parametrize(
    "method,name", [("fmod_", "fmod"), ("remainder_", "remainder"), ("__imod__", "remainder")]
)
def test_mod_in_place(method, name):
    a, b = f64(A), f64(B)
    out = a * 1.0
    getattr(out, method)(b)
    out.sum().backward()
    rounded = ROUNDED[name]
    np.testing.assert_allclose(a.grad.numpy(), np.ones(5))
    np.testing.assert_allclose(b.grad.numpy(), -rounded(np.array(A) / np.array(B)))


# ---- 2. a gradient has its input's dtype ------------------------------------------------

X32 = [1.5, -2.0, 3.0, 0.5]
HALF_X32 = [0.75, -1.0, 1.5, 0.25]

# op, its gradient at X32 (NumPy)
WITH_DTYPE = {
    "sum": (lambda x: x.sum(dtype=F.float64), np.ones(4)),
    "mean": (lambda x: x.mean(dtype=F.float64), np.full(4, 0.25)),
    "prod": (
        lambda x: x.prod(dtype=F.float64),
        np.array([np.prod(np.delete(X32, i)) for i in range(4)]),
    ),
    "cumsum": (lambda x: x.cumsum(0, dtype=F.float64).sum(), np.array([4.0, 3.0, 2.0, 1.0])),
    "nansum": (lambda x: x.nansum(dtype=F.float64), np.ones(4)),
    "sum-dim": (lambda x: x.reshape(2, 2).sum(1, dtype=F.float64).sum(), np.ones(4)),
    "mixed-precision": (lambda x: (x * f64(HALF_X32, False)).sum(), np.array(HALF_X32)),
}


@pytest.mark.parametrize("name", list(WITH_DTYPE))
def test_gradient_has_the_input_dtype(path, name):
    fn, expected = WITH_DTYPE[name]
    x = F.tensor(X32, dtype=F.float32, requires_grad=True)
    out = fn(x)
    assert out.dtype == F.float64
    out.backward()
    assert x.grad.dtype == F.float32
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)
    (g,) = autograd.grad(fn(x), x, create_graph=True)
    assert g.dtype == F.float32


def test_gradient_dtype_inside_the_graph(path):
    """A float64 gradient reaching a float32 intermediate is cast before its formula runs
    (layer norm's backward kernel then sees one dtype)."""
    x = randn(2, 3, dtype=F.float32)
    h = NF.layer_norm(x * 2.0, (3,))
    (h * F.arange(6.0, dtype=F.float64).reshape(2, 3)).sum().backward()
    assert x.grad.dtype == F.float32
    x64 = x.detach().double().requires_grad_()
    (NF.layer_norm(x64 * 2.0, (3,)) * F.arange(6.0, dtype=F.float64).reshape(2, 3)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x64.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_given_root_gradient_takes_the_output_dtype():
    x = F.tensor(X32, dtype=F.float32, requires_grad=True)
    (x * 2).backward(F.ones(4, dtype=F.float64))
    assert x.grad.dtype == F.float32
    np.testing.assert_allclose(x.grad.numpy(), np.full(4, 2.0))
    (g,) = autograd.grad(x * 3, x, F.ones(4, dtype=F.float64))
    assert g.dtype == F.float32
    with pytest.raises(RuntimeError, match="both grad_output and output are required to have"):
        autograd.grad(x * 3, x, F.ones(4, dtype=F.complex64))


def test_custom_function_gradient_takes_the_input_dtype():
    class Double(autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, g):
            return (g * 2).double()

    x = F.tensor(X32, dtype=F.float32, requires_grad=True)
    Double.apply(x).sum().backward()
    assert x.grad.dtype == F.float32
    np.testing.assert_allclose(x.grad.numpy(), np.full(4, 2.0))


# ---- 3. foreach lists of different lengths ------------------------------------------------


def _lists(n, grad, seed=0):
    return [randn(2, seed=seed + i).detach().requires_grad_(grad) for i in range(n)]


# foreach calls on lists (xs: the first list, ys: a list of another length)
FOREACH = {
    "add": lambda xs, ys: F._foreach_add(xs, ys),
    "add-reversed": lambda xs, ys: F._foreach_add(ys, xs),
    "add_": lambda xs, ys: F._foreach_add_([x * 1.0 for x in xs], ys),
    "mul": lambda xs, ys: F._foreach_mul(xs, ys),
    "maximum": lambda xs, ys: F._foreach_maximum(xs, ys),
    "pow": lambda xs, ys: F._foreach_pow(xs, ys),
    "lerp-weights": lambda xs, ys: F._foreach_lerp(xs, xs, ys),
    "addcmul": lambda xs, ys: F._foreach_addcmul(xs, xs, ys),
    "copy_": lambda xs, ys: F._foreach_copy_([x * 1.0 for x in xs], ys),
    "scalar-list": lambda xs, ys: F._foreach_add(xs, [1.0] * len(ys)),
    "scalars-tensor": lambda xs, ys: F._foreach_addcmul(xs, xs, xs, F.ones(len(ys))),
}


@pytest.mark.parametrize("name", list(FOREACH))
def test_foreach_lengths_must_match(name):
    """With a gradient wanted, the same RuntimeError as the core raises without one
    (each element used to be recorded up to the shorter list's length)."""
    call = FOREACH[name]
    with pytest.raises(RuntimeError) as plain:
        call(_lists(2, False), _lists(3, False))
    assert "must have" in str(plain.value)
    for xs, ys in ((_lists(2, True), _lists(3, False)), (_lists(2, False), _lists(3, True))):
        with pytest.raises(RuntimeError) as recorded:
            call(xs, ys)
        assert str(recorded.value) == str(plain.value)


def test_foreach_of_equal_lengths_still_differentiates():
    xs, ys = _lists(2, True), _lists(2, True, seed=5)
    outs = F._foreach_mul(xs, ys)
    sum(o.sum() for o in outs).backward()
    for x, y in zip(xs, ys):
        np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())
        np.testing.assert_allclose(y.grad.numpy(), x.detach().numpy())


# ---- 4. concatenate's axis ------------------------------------------------------------------

JOINS = {
    "concatenate-axis": lambda ts: F.concatenate(ts, axis=1),
    "concatenate-positional": lambda ts: F.concatenate(ts, 1),
    "concatenate-negative-axis": lambda ts: F.concatenate(ts, axis=-1),
    "concat-dim": lambda ts: F.concat(ts, dim=1),
    "cat-dim": lambda ts: F.cat(ts, dim=1),
}


@pytest.mark.parametrize("name", list(JOINS))
def test_concatenate_backward_follows_its_axis(path, name):
    join = JOINS[name]
    a, b = randn(2, 3), randn(2, 1, seed=1)
    w = np.arange(8.0).reshape(2, 4)
    (join([a, b]) * F.tensor(w)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), w[:, :3])
    np.testing.assert_allclose(b.grad.numpy(), w[:, 3:])
    assert gradcheck(lambda s, t: join([s, t]), (randn(2, 3), randn(2, 1, seed=1)))


# ---- 5. in-place operations on outputs a formula does not read -------------------------------


def _after_inplace_relu(fn):
    return lambda *xs: fn(*xs).relu_()


def _batch_norm(training):
    mean, var = F.tensor([0.1, -0.2, 0.3]).double(), F.tensor([0.5, 1.5, 2.0]).double()
    return lambda x, w, b: NF.batch_norm(x, mean, var, w, b, training=training)


NORMS = {
    "batch_norm-train": (_batch_norm(True), (2, 3, 2, 2), (3,)),
    "batch_norm-eval": (_batch_norm(False), (2, 3, 2, 2), (3,)),
    "layer_norm": (lambda x, w, b: NF.layer_norm(x, (4,), w, b), (2, 3, 4), (4,)),
    "group_norm": (lambda x, w, b: NF.group_norm(x, 2, w, b), (2, 4, 3), (4,)),
    "instance_norm": (
        lambda x, w, b: NF.instance_norm(x, weight=w, bias=b),
        (2, 3, 4),
        (3,),
    ),
}


@pytest.mark.parametrize("name", list(NORMS))
def test_inplace_op_after_a_normalisation(path, name):
    """The formulas read the input and the saved statistics, not the output, as PyTorch's:
    an in-place op on the output leaves their gradients right."""
    norm, shape, affine = NORMS[name]
    inputs = (randn(*shape), randn(*affine, seed=1), randn(*affine, seed=2))
    assert gradcheck(_after_inplace_relu(norm), inputs)


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batchnorm2d_then_inplace_relu(path, training):
    bn = nn.BatchNorm2d(3, dtype=F.float64)
    with autograd.no_grad():
        bn.running_mean.copy_(F.tensor([0.1, -0.2, 0.3]))
        bn.running_var.copy_(F.tensor([0.5, 1.5, 2.0]))
    bn.train(training)
    model = nn.Sequential(bn, nn.ReLU(inplace=True))
    assert gradcheck(model, (randn(2, 3, 3, 3),))


@pytest.mark.parametrize(
    "module",
    [
        nn.LayerNorm(4, dtype=F.float64),
        nn.GroupNorm(2, 4, dtype=F.float64),
        nn.InstanceNorm1d(4, affine=True, dtype=F.float64),
    ],
    ids=["LayerNorm", "GroupNorm", "InstanceNorm1d"],
)
def test_norm_modules_then_inplace_relu(path, module):
    model = nn.Sequential(module, nn.ReLU(inplace=True))
    assert gradcheck(model, (randn(2, 4, 4),))


# What an in-place op on the output does to backward, as in PyTorch's derivatives.yaml:
# these save their result (and raise), the others do not (and give the right gradient).
SAVES_RESULT = {
    "exp": F.exp,
    "tanh": F.tanh,
    "sigmoid": F.sigmoid,
    "relu": F.relu,
    "sqrt": lambda x: (x * x + 1).sqrt(),
    "softmax": lambda x: F.softmax(x, -1),
    "amax": lambda x: x.amax(1),
    "std": lambda x: x.std(1),
    "std_mean-std": lambda x: F.std_mean(x, 1)[0],
    "cumprod": lambda x: x.cumprod(1),
    "logsumexp": lambda x: x.logsumexp(1),
}
SAVES_NO_RESULT = {
    "pow-number": lambda x: x**2,
    "erfinv": lambda x: F.erfinv(x.tanh() * 0.5),
    "logaddexp": lambda x: F.logaddexp(x, x * 2),
    "logaddexp2": lambda x: F.logaddexp2(x, x * 2),
    "max-dim-values": lambda x: x.max(dim=1)[0],
    "sort-values": lambda x: x.sort(dim=1)[0],
    "std_mean-mean": lambda x: F.std_mean(x, 1)[1],
    "scatter": lambda x: x.scatter(1, F.zeros(2, 1, 3, dtype=F.int64), x[:, :1] * 3),
    "max_pool2d": lambda x: NF.max_pool2d(x, 2),
    "fmod": lambda x: F.fmod(x, 0.3),
}


@pytest.mark.parametrize("name", list(SAVES_RESULT))
def test_inplace_op_on_a_saved_result_raises(path, name):
    y = SAVES_RESULT[name](randn(2, 4, 3))
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_exp_inplace_after_exp_raises(path):
    y = randn(3).exp()
    y.exp_()
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        y.sum().backward()


@pytest.mark.parametrize("name", list(SAVES_NO_RESULT))
def test_inplace_op_on_an_unsaved_result(path, name):
    fn = SAVES_NO_RESULT[name]
    assert gradcheck(lambda t: fn(t).mul_(2), (randn(2, 4, 3),))


def test_inplace_op_after_dropout(path):
    """Dropout's formula reads its mask, not its output: 2 * mask / (1 - p)."""
    x = randn(4, 5)
    y = NF.dropout(x, 0.5)
    y.mul_(2)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 4.0 * (y.detach().numpy() != 0))


def test_inplace_multiplying_scatter(path):
    """scatter_(reduce='multiply') in place: src's gradient is the input value it multiplied,
    also for a zero in src (read from the input as it was before the call)."""
    x = F.tensor([[2.0, 3.0, 4.0]], dtype=F.float64)
    src = f64([[0.0, 7.0]])
    y = x.clone()
    y.scatter_(1, F.tensor([[0, 2]]), src, reduce="multiply")
    y.sum().backward()
    np.testing.assert_allclose(src.grad.numpy(), [[2.0, 4.0]])


@pytest.mark.parametrize("call", [lambda x: F.std_mean(x, 1), lambda x: F.std_mean(x, 1, True)])
def test_std_mean_binds_its_dim(path, call):
    """std_mean keeps only its std output, so the Python recorder binds the call: (x, 1) is
    a dim, not the unbiased flag. d std / dx = (x - mean) / ((n - 1) std)."""
    x = randn(2, 5)
    call(x)[0].sum().backward()
    v = x.detach().numpy()
    centered = v - v.mean(1, keepdims=True)
    expected = centered / (4 * v.std(1, ddof=1, keepdims=True))
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-10)


@pytest.mark.parametrize("order", [2, 3, 0.5, 1, math.inf])
def test_norm_of_zeros_has_the_zero_subgradient(order):
    # 0/0 gave NaN: PyTorch's subgradient at a zero norm is 0, whatever the order.
    x = F.zeros(2, 3, dtype=F.float64, requires_grad=True)
    F.linalg.vector_norm(x, order, dim=1).sum().backward()
    assert np.array_equal(x.grad.numpy(), np.zeros((2, 3)))
    y = F.tensor([0.0, 0.0, 0.0], requires_grad=True)
    y.norm().backward()
    assert np.array_equal(y.grad.numpy(), np.zeros(3))


def test_in_place_op_whose_argument_aliases_its_target_is_detected():
    # y.mul_(y) overwrote the `other` its formula saved: the gradient came out wrong
    # (12, 40 instead of raising). Versions are now taken before the call, as PyTorch.
    x = F.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.mul_(y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    # A formula that does not read its arguments still works with an alias.
    x = F.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.add_(y)
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]
