"""Every operator of the core's table is accounted for by autograd, and the formulas that
finite differences can't judge alone (zeros in products, sampling, overlapping strides,
multi-tensor operators) against hand-derived values."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau as F
from flambeau.autograd import (
    derivatives,
    gradcheck,
    gradgradcheck,
    inplace_metadata,
    recorder,
    schema,
)
from flambeau.autograd.derivatives import foreach
from flambeau_testing.optable import all_tests

# Differentiable operators checked by gradcheck outside the optable harness.
CHECKED_ELSEWHERE = {
    "__getitem__": "test_inplace_views.py, test_semantics.py",
    "__setitem__": "test_inplace_views.py",
    # Samplers with no deterministic optable row (tensor-core's test_random.py tests their
    # values); their zero gradients are checked below.
    **{
        n: "test_samples_have_zero_gradients"
        for n in ("cauchy_", "exponential_", "geometric_", "log_normal_")
    },
}


def _classified(name: str, sch) -> bool:
    if name in recorder._NOT_RECORDED or name in derivatives.COMPOSITES:
        return True
    if name in inplace_metadata.OPS:  # test_metadata_mutation_grad.py
        return True
    if name.startswith("_foreach_"):
        return foreach.is_recorded(name)
    return sch.key in derivatives.FORMULAS or sch.name in derivatives.FORMULAS


def test_every_operator_has_a_formula_or_is_marked():
    missing = [
        sch.key
        for name in schema.table()
        for sch in schema.overloads(name)
        if not _classified(name, sch)
    ]
    assert missing == [], f"operators without a derivative formula or mark: {missing}"


def test_every_differentiable_operator_has_optable_rows():
    differentiable = {
        k.split(".")[0] for k, f in derivatives.FORMULAS.items() if not f.nondifferentiable
    }
    differentiable |= set(derivatives.COMPOSITES)
    rows = {op.name for op in all_tests()}
    assert sorted(differentiable - rows - set(CHECKED_ELSEWHERE)) == []


def f64(values, requires_grad=True):
    return F.tensor(values, dtype=F.float64, requires_grad=requires_grad)


def _others_product(x: np.ndarray) -> np.ndarray:
    return np.array([np.prod(np.delete(x, i)) for i in range(x.size)])


@pytest.mark.parametrize("values", [[2.0, 0.0, 3.0, 4.0], [0.0, 5.0, 0.0, 2.0], [1.5, -2.0, 3.0]])
def test_prod_gradient_with_zeros(values):
    x = f64(values)
    x.prod().backward()
    np.testing.assert_allclose(x.grad.numpy(), _others_product(np.array(values)))
    assert gradgradcheck(lambda t: t.prod(), (f64(values),))


def _cumprod_grad_reference(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    """sum_{k>=i} g_k prod_{j<=k, j!=i} x_j, term by term."""
    n = x.size
    return np.array(
        [sum(g[k] * np.prod(np.delete(x[: k + 1], i)) for k in range(i, n)) for i in range(n)]
    )


@pytest.mark.parametrize(
    "values", [[2.0, 0.0, 3.0, 4.0], [0.0, 2.0, 0.0, 5.0], [1.0, 2.0, 3.0, 0.0], [-1.0, 2.0, 0.5]]
)
def test_cumprod_gradient_with_zeros(values):
    x = f64(values)
    g = np.array([0.5, -1.0, 2.0, 3.0][: len(values)])
    x.cumprod(0).backward(F.from_numpy(g))
    np.testing.assert_allclose(x.grad.numpy(), _cumprod_grad_reference(np.array(values), g))


def test_cumprod_with_zeros_along_a_dim_passes_gradcheck():
    x = f64([[2.0, 0.0, 3.0], [1.0, 4.0, 0.0], [0.0, 0.0, 2.0]])
    for dim in (0, 1):
        assert gradcheck(lambda t, d=dim: t.cumprod(d), (x,))
        assert gradgradcheck(lambda t, d=dim: t.cumprod(d), (x,))


@pytest.mark.parametrize("unbiased", [True, False])
def test_var_and_std_gradients_follow_unbiased(unbiased):
    values = np.array([1.0, 2.0, 4.0, 7.0])
    n = values.size - (1 if unbiased else 0)
    centered = values - values.mean()
    x = f64(values.tolist())
    F.var(x, unbiased=unbiased).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * centered / n)
    x = f64(values.tolist())
    F.std(x, 0, unbiased).backward()
    np.testing.assert_allclose(x.grad.numpy(), centered / (n * np.sqrt((centered**2).sum() / n)))


def test_var_mean_gradient_is_the_sum_of_both():
    x = f64([[1.0, 2.0, 4.0], [3.0, -1.0, 0.5]])
    assert gradcheck(lambda t: F.var_mean(t, 1), (x,))
    assert gradcheck(lambda t: F.std_mean(t, 0, False), (x,))
    assert gradgradcheck(lambda t: F.var_mean(t, 1, correction=0), (x,))


def test_as_strided_with_overlapping_windows():
    x = f64([1.0, 2.0, 3.0, 4.0, 5.0])
    y = F.as_strided(x, (3, 3), (1, 1))  # sliding windows: x[1] appears twice, x[2] 3 times
    y.backward(F.ones((3, 3), dtype=F.float64))
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 2.0, 3.0, 2.0, 1.0])
    assert gradcheck(lambda t: F.as_strided(t, (2, 2), (2, 1), 1), (f64(np.arange(6.0).tolist()),))


def test_as_strided_of_an_expanded_input_shares_the_gradient():
    x = f64([1.0, 2.0])
    e = x.expand(3, 2)  # three rows alias the same two elements
    F.as_strided(e, (2,), (1,)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])


def test_unfold_adds_overlapping_windows_back():
    x = f64(np.arange(7.0).tolist())
    x.unfold(0, 3, 2).sum().backward()  # windows start at 0, 2, 4
    np.testing.assert_allclose(x.grad.numpy(), [1, 1, 2, 1, 2, 1, 1])


@pytest.mark.parametrize(
    "sample",
    [
        lambda m: F.normal(m, 2.0),
        lambda m: F.normal(m, m.detach().abs() + 1),
        lambda m: F.bernoulli(m),
        lambda m: F.poisson(m.abs()),
        lambda m: (m * 1).uniform_(),
        lambda m: (m * 1).normal_(),
        lambda m: (m * 1).exponential_(),
        lambda m: (m * 1).cauchy_(),
        lambda m: (m * 1).log_normal_(),
        lambda m: (m * 1).geometric_(0.5),
        lambda m: (m * 1).random_(0, 5),
        lambda m: (m * 1).bernoulli_(m),
    ],
)
def test_samples_have_zero_gradients(sample):
    m = f64([0.25, 0.5, 0.75])
    out = sample(m)
    assert out.grad_fn is not None
    (g,) = F.autograd.grad(out.sum(), [m], allow_unused=True)
    assert g is not None and np.all(g.numpy() == 0)


def _lists(*rows):
    return [[f64(r) for r in group] for group in rows]


def test_foreach_gradients_are_the_per_tensor_ones():
    xs, ys = _lists([[1.0, 2.0], [3.0]], [[4.0, 5.0], [6.0]])
    outs = F._foreach_addcmul(xs, ys, ys, 0.5)
    F.stack([o.sum() for o in outs]).sum().backward()
    for x, y in zip(xs, ys):
        np.testing.assert_allclose(x.grad.numpy(), np.ones(x.shape))
        np.testing.assert_allclose(y.grad.numpy(), y.detach().numpy())
    norms = F._foreach_norm(xs, 2)
    assert all(n.grad_fn is not None for n in norms)


def test_foreach_in_place_on_non_leaves_rebases_each_element():
    (xs,) = _lists([[1.0, 2.0], [3.0]])
    work = [x * 2 for x in xs]
    F._foreach_mul_(work, [x for x in xs])  # 2x * x
    assert all(w.grad_fn is not None for w in work)
    sum(w.sum() for w in work).backward()
    for x in xs:
        np.testing.assert_allclose(x.grad.numpy(), 4 * x.detach().numpy())


def test_foreach_in_place_on_a_leaf_that_requires_grad_raises():
    (xs,) = _lists([[1.0], [2.0]])
    with pytest.raises(RuntimeError, match="_foreach_add_.*leaf"):
        F._foreach_add_(xs, 1.0)


def test_foreach_under_no_grad_is_not_recorded():
    (xs,) = _lists([[1.0], [2.0]])
    with F.no_grad():
        F._foreach_add_(xs, 1.0)
    np.testing.assert_allclose(xs[0].detach().numpy(), [2.0])


def test_pow_of_a_number_to_a_tensor():
    e = f64([0.0, 1.0, 2.5])
    F.pow(2.0, e).sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), 2.0 ** np.array([0.0, 1.0, 2.5]) * np.log(2.0))
    assert gradgradcheck(lambda t: F.pow(3.0, t), (f64([0.5, -1.0]),))


def test_pow_of_a_zero_base_has_no_exponent_slope_for_nonnegative_exponents():
    base, e = f64([0.0, 0.0, 2.0]), f64([0.0, 2.0, 3.0])
    F.pow(base, e).sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), [0.0, 0.0, 8.0 * np.log(2.0)])


def test_tensor_split_with_decreasing_indices_adds_overlapping_pieces():
    x = f64(np.arange(8.0).tolist())
    pieces = F.tensor_split(x, [5, 2])  # x[:5], x[5:2] (empty), x[2:]
    sum((k + 1) * p.sum() for k, p in enumerate(pieces)).backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 1, 4, 4, 4, 3, 3, 3])


def test_a_zero_dim_tensor_that_requires_grad_binds_as_a_tensor_not_a_number():
    xs, other = [f64([1.0, 2.0]), f64([3.0])], f64(2.0)
    outs = F._foreach_mul(xs, other)
    sum(o.sum() for o in outs).backward()
    assert other.grad.item() == 6.0


@pytest.mark.parametrize(
    "include_self, grad_input, grad_src",
    [
        (True, [0.0, 5.0, 0.0, 6.0], [8.0, 0.0, 0.0, 3.0, 4.5, 3.0]),
        (False, [0.0, 0.0, 0.0, 0.0], [4.0, 0.0, 1.0, 1.0, 3.0, 2.0]),
    ],
)
def test_scatter_reduce_prod_gradient_with_zeros(include_self, grad_input, grad_src):
    index = F.tensor([0, 0, 1, 2, 3, 3])

    def fn(x, src):
        return x.scatter_reduce(0, index, src, "prod", include_self=include_self)

    x, src = f64([2.0, 0.0, 3.0, 1.5]), f64([0.0, 4.0, 5.0, 0.0, 2.0, 3.0])
    gx, gs = F.autograd.grad(fn(x, src).sum(), [x, src])
    np.testing.assert_allclose(gx.numpy(), grad_input)
    np.testing.assert_allclose(gs.numpy(), grad_src)
    assert gradgradcheck(fn, (x, src))


def test_scatter_product_double_backward_with_two_zeros_at_one_place_raises():
    x, src = f64([2.0]), f64([0.0, 0.0, 3.0])
    out = x.scatter_reduce(0, F.tensor([0, 0, 0]), src, "prod")
    (g,) = F.autograd.grad(out.sum(), [src], retain_graph=True)  # first order is fine
    np.testing.assert_allclose(g.numpy(), [0.0, 0.0, 0.0])
    with pytest.raises(RuntimeError, match="double backward"):
        F.autograd.grad(out.sum(), [src], create_graph=True)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 2, 4), (2, 4, 2)])
def test_lu_of_wide_and_tall_matrices(shape):
    a = F.from_numpy(np.random.default_rng(1).standard_normal(shape)).requires_grad_(True)
    assert gradcheck(lambda x: tuple(F.linalg.lu(x)[1:]), (a,))
    assert gradgradcheck(lambda x: tuple(F.linalg.lu(x)[1:]), (a,))
    assert gradcheck(lambda x: F.linalg.lu_factor(x)[0], (a,))


def test_max_over_all_elements_sends_the_gradient_to_the_nan():
    x = f64([1.0, float("nan"), 2.0])
    (g,) = F.autograd.grad(F.max(x), [x])
    np.testing.assert_array_equal(g.numpy(), [0.0, 1.0, 0.0])


def test_maximum_against_nan_passes_the_gradient_to_both():
    x, y = f64([1.0, float("nan"), 3.0]), f64([2.0, 0.0, 3.0])
    gx, gy = F.autograd.grad(F.maximum(x, y).sum(), [x, y])
    np.testing.assert_array_equal(gx.numpy(), [0.0, 1.0, 0.5])
    np.testing.assert_array_equal(gy.numpy(), [1.0, 1.0, 0.5])


def test_repeat_with_one_int():
    x = f64([1.0, 2.0])
    (g,) = F.autograd.grad(x.repeat(3).sum(), [x])
    np.testing.assert_array_equal(g.numpy(), [3.0, 3.0])


def test_max_unpool_of_an_empty_batch():
    x = F.zeros((0, 2, 2, 2), dtype=F.float64).requires_grad_(True)
    out = F.max_unpool2d(x, F.zeros((0, 2, 2, 2), dtype=F.int64), [4, 4])
    (g,) = F.autograd.grad(out, [x], F.zeros((0, 2, 4, 4), dtype=F.float64))
    assert g.shape == (0, 2, 2, 2)


@pytest.mark.parametrize("ord", [1, -1, float("inf"), float("-inf")])
def test_complex_matrix_norm_gradients(ord):
    rng = np.random.default_rng(2)
    a = F.from_numpy(rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)))
    assert gradcheck(lambda t: F.linalg.matrix_norm(t, ord), (a.requires_grad_(True),))
