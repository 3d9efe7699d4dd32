"""The argument forms PyTorch's Python binding accepts beyond the schema: NumPy keyword
names (axis, keepdims, x, a, x1, x2), 0-dim integer tensors where ints are expected, and
einsum's sublist form. References are NumPy and the plain-int spelling of each call."""

import numpy as np
import pytest

import flambeau as F


def test_numpy_keyword_aliases():
    x = F.arange(6.0).reshape(2, 3)
    assert F.equal(x.sum(axis=1), x.sum(dim=1))
    assert F.equal(F.sum(x, axis=0, keepdims=True), x.sum(0, keepdim=True))
    assert x.mean(axis=1, keepdims=True).shape == (2, 1)
    np.testing.assert_array_equal(x.amax(axis=0).numpy(), x.numpy().max(axis=0))
    assert F.equal(F.maximum(x, x2=x + 1), x + 1)
    assert F.equal(F.neg(x=x), -x) and F.equal(F.neg(a=x), -x)


def test_alias_and_name_together_is_an_error():
    x = F.ones(2, 2)
    with pytest.raises(TypeError, match="multiple values for argument 'dim'"):
        x.sum(dim=0, axis=1)


def test_unknown_keyword_still_refused():
    with pytest.raises(TypeError, match="unexpected keyword argument 'axes'"):
        F.ones(2).sum(axes=0)


def test_zero_dim_integer_tensors_as_ints():
    x = F.arange(10)
    assert F.equal(F.narrow(x, -1, F.tensor(-1), 1), F.narrow(x, -1, -1, 1))
    assert F.equal(x.narrow(0, F.tensor(2), F.tensor(3)), x[2:5])
    assert F.randint(3, 10, (F.tensor([1, 2]).sum(),)).shape == (3,)
    assert F.zeros(F.tensor(2), 3).shape == (2, 3)
    assert x.select(0, F.tensor(4)).item() == 4
    assert F.equal(x.reshape(F.tensor(2), -1), x.reshape(2, 5))


@pytest.mark.parametrize(
    "bad",
    [F.tensor(1.0), F.tensor([1, 2])],
    ids=["float", "1-d"],
)
def test_other_tensors_are_not_ints(bad):
    with pytest.raises(TypeError, match="must be int"):
        F.narrow(F.arange(5), 0, bad, 1)


def test_einsum_sublist_form():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
    ta, tb = F.from_numpy(a), F.from_numpy(b)
    got = F.einsum(ta, [..., 0, 1], tb, [..., 1, 2], [..., 0, 2])
    np.testing.assert_allclose(got.numpy(), np.einsum(a, [..., 0, 1], b, [..., 1, 2], [..., 0, 2]))
    # No output sublist: implicit output (sorted subscripts appearing once).
    got = F.einsum(ta[0], [0, 1], tb[0], [1, 2])
    np.testing.assert_allclose(got.numpy(), a[0] @ b[0])
    # Subscripts 26..51 are the upper-case letters.
    got = F.einsum(ta[0], [30, 1])
    np.testing.assert_allclose(got.numpy(), a[0])


@pytest.mark.parametrize(
    "call, exc",
    [
        (lambda t: F.einsum(t, [52]), ValueError),
        (lambda t: F.einsum(t, [-1]), ValueError),
        (lambda t: F.einsum(t, "ij"), TypeError),
        (lambda t: F.einsum(), TypeError),
    ],
)
def test_einsum_sublist_errors(call, exc):
    with pytest.raises(exc):
        call(F.ones(2))


def test_a_float_argument_takes_numpy_scalars_and_0_dim_tensors():
    # As PyTorch's parser: allclose(a, b, atol=torch.tensor(1e-3)) (e3nn's tests do this).
    x = F.ones(3)
    assert F.allclose(x, x + 5e-4, atol=F.tensor(1e-3), rtol=0.0)
    assert not F.allclose(x, x + 5e-4, atol=np.float32(1e-4), rtol=0.0)
    assert F.isclose(x, x, atol=F.tensor(1)).all()  # an integer 0-dim tensor too
    with pytest.raises(TypeError, match="argument 'atol' .* must be float, not Tensor"):
        F.allclose(x, x, atol=F.ones(2))
    with pytest.raises(TypeError, match="must be float, not complex"):
        F.allclose(x, x, atol=1j)
    # Only once no overload fits plainly: a 0-dim probability still picks the Tensor
    # overload of bernoulli_, and a complex one is refused there with a clear error.
    assert F.zeros(4).bernoulli_(F.tensor(1.0)).tolist() == [1.0] * 4
    with pytest.raises(RuntimeError, match="floating point tensor of probabilities"):
        F.zeros(1, dtype=F.complex64).bernoulli_(F.tensor(0.5j))
