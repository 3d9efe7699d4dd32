"""The derivative formulas compiled in the core (csrc/python/autograd_formulas_*.cpp):
first and second derivatives against finite differences, on both recording paths (a
call recorded in C++ runs its native formula inside the engine; one recorded in Python
calls it as fn(grad, args)), with broadcasting, Python numbers, alpha, complex values
and mixed dtypes, and the engine's checks (in-place changes, a second backward)."""

import numpy as np
import pytest

import flambeau as F
from flambeau import _C
from flambeau.autograd import gradcheck, gradgradcheck

NATIVE = ("add", "sub", "rsub", "mul", "div", "true_divide", "neg", "negative")


@pytest.fixture(params=[True, False], ids=["cpp", "python"])
def path(request):
    was = _C._autograd_fast_set_enabled(request.param)
    yield request.param
    _C._autograd_fast_set_enabled(was)


def t64(shape, seed, complex_=False, away_from_zero=False):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 1.5, shape) * rng.choice([-1, 1], shape)
    if not away_from_zero:
        a = rng.uniform(-1, 1, shape)
    if complex_:
        a = a + 1j * rng.uniform(-1, 1, shape)
    return F.from_numpy(a).requires_grad_(True)


def test_the_core_lists_its_native_formulas():
    assert set(_C._autograd_native_formulas()) == set(NATIVE)
    with pytest.raises(KeyError, match="no native derivative formula for exp"):
        _C._autograd_native_formula("exp")


CASES = {
    "add": lambda x, y: F.add(x, y),
    "add alpha": lambda x, y: F.add(x, y, alpha=-2.5),
    "add number": lambda x, y: x + 3.0,
    "sub": lambda x, y: F.sub(x, y),
    "sub alpha": lambda x, y: F.sub(x, y, alpha=0.5),
    "rsub": lambda x, y: F.rsub(x, y),
    "rsub alpha": lambda x, y: F.rsub(x, y, alpha=3),
    "number minus": lambda x, y: 2.0 - x,
    "mul": lambda x, y: x * y,
    "mul number": lambda x, y: x * 1.5,
    "div": lambda x, y: x / y,
    "div number": lambda x, y: x / 4.0,
    "number div": lambda x, y: 2.0 / y,
    "true_divide": lambda x, y: F.true_divide(x, y),
    "neg": lambda x, y: -x + 0 * y,
    "negative": lambda x, y: F.negative(x) * y,
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((1, 4), (3, 1))])
def test_first_and_second_derivatives(case, shapes, path):
    x = t64(shapes[0], 1)
    y = t64(shapes[1], 2, away_from_zero=True)
    fn = CASES[case]
    assert gradcheck(fn, (x, y))
    assert gradgradcheck(fn, (x, y))


@pytest.mark.parametrize("case", ["add alpha", "sub alpha", "mul", "div", "rsub", "neg"])
def test_complex_inputs(case, path):
    x = t64((2, 3), 3, complex_=True)
    y = t64((2, 3), 4, complex_=True, away_from_zero=True)
    assert gradcheck(CASES[case], (x, y))


def test_complex_alpha_and_number(path):
    x = t64((3,), 5, complex_=True)
    y = t64((3,), 6, complex_=True)
    assert gradcheck(lambda a, b: F.add(a, b, alpha=1 - 2j), (x, y))
    assert gradcheck(lambda a, b: a * (2 + 1j) - b, (x, y))


def test_a_real_input_of_a_complex_product_gets_the_real_part(path):
    x = F.tensor([1.0, 2.0], dtype=F.float64, requires_grad=True)
    z = F.tensor([1 + 2j, 3 - 1j], dtype=F.complex128)
    (x * z).abs().sum().backward()
    # d|x z|/dx = |z| for x > 0
    np.testing.assert_allclose(x.grad.numpy(), np.abs([1 + 2j, 3 - 1j]))
    assert x.grad.dtype == F.float64


def test_mixed_dtypes_give_each_input_its_own_dtype(path):
    x = F.tensor([1.0, 2.0], dtype=F.float32, requires_grad=True)
    y = F.tensor([[3.0, 4.0], [5.0, 6.0]], dtype=F.float64, requires_grad=True)
    (x * y).sum().backward()
    assert x.grad.dtype == F.float32 and y.grad.dtype == F.float64
    np.testing.assert_allclose(x.grad.numpy(), [8.0, 10.0])
    np.testing.assert_allclose(y.grad.numpy(), [[1.0, 2.0], [1.0, 2.0]])


def test_only_wanted_gradients_and_kept_values(path):
    x = F.tensor([2.0, 3.0], requires_grad=True)
    c = F.tensor([5.0, 7.0])  # needs no gradient
    (x * c).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 7.0])
    # c's gradient is not wanted, so x's value is not kept: changing x in place is fine
    y = F.tensor([1.0, 1.0])
    w = F.tensor([4.0, 6.0], requires_grad=True)
    out = (y * w).sum()
    y.add_(1)  # y's value IS read for w's gradient: this must raise
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_second_backward_without_retain_graph_raises(path):
    x = F.tensor([2.0], requires_grad=True)
    y = x * 3.0
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0])
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_hooks_on_a_native_node_run(path):
    x = F.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    seen = []
    y.grad_fn.register_prehook(lambda g: seen.append("pre") or (g[0] * 10,))
    y.grad_fn.register_hook(lambda gi, go: seen.append("post") or (gi[0] + 1,))
    y.sum().backward()
    assert seen == ["pre", "post"]
    np.testing.assert_allclose(x.grad.numpy(), [21.0, 21.0])


def test_grad_of_a_long_chain_and_of_inputs_only(path):
    x = F.tensor([1.0], dtype=F.float64, requires_grad=True)
    w = F.tensor([2.0], dtype=F.float64, requires_grad=True)
    y = x
    for _ in range(1000):
        y = y * 1.001 + w * 0.0
    (gx,) = F.autograd.grad(y, x, retain_graph=True)
    np.testing.assert_allclose(gx.numpy(), [1.001**1000])
    assert w.grad is None and x.grad is None
    gx, gw = F.autograd.grad(y, (x, w))
    np.testing.assert_allclose(gw.numpy(), [0.0])


def test_a_native_formula_called_from_python_takes_the_formula_convention():
    mul = _C._autograd_native_formula("mul")
    x = F.tensor([2.0, 3.0], requires_grad=True)
    out = mul(F.ones(2), {"input": x, "other": 4.0})
    assert set(out) == {"input"}
    np.testing.assert_allclose(out["input"].numpy(), [4.0, 4.0])
    with pytest.raises(TypeError):
        mul(F.ones(2), "not a dict")
