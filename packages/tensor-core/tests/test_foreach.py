"""Focused tests of the _foreach_* operators: errors, aliasing, mixed lists, fast vs slow path."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau


def lst(*shapes, dtype=flambeau.float32, seed=0):
    rng = np.random.default_rng(seed)
    return [flambeau.from_numpy(rng.uniform(-2, 2, s)).to(dtype) for s in shapes]


def test_inplace_returns_its_list_and_updates_in_place():
    xs = lst((3,), (2, 2))
    ptrs = [x.data_ptr() for x in xs]
    versions = [x._version for x in xs]
    before = [x.numpy().copy() for x in xs]
    assert flambeau._foreach_add_(xs, 1.5) is xs  # PyTorch hands back the same list
    for x, b, p, v in zip(xs, before, ptrs, versions):
        assert x.data_ptr() == p
        assert x._version > v
        np.testing.assert_allclose(x.numpy(), b + 1.5, rtol=1e-6)


def test_inplace_hands_back_the_sequence_it_was_given():
    xs = tuple(lst((2,), (3,)))
    assert flambeau._foreach_mul_(xs, 2.0) is xs
    assert flambeau._foreach_zero_(xs) is xs
    assert flambeau._foreach_copy_(xs, [flambeau.ones(2), flambeau.ones(3)]) is xs
    assert all(float(x.sum()) == x.numel() for x in xs)


def test_out_of_place_returns_new_tensors():
    xs = lst((3,), (2, 2))
    out = flambeau._foreach_mul(xs, 2.0)
    assert isinstance(out, tuple) and len(out) == 2
    for x, o in zip(xs, out):
        assert o.data_ptr() != x.data_ptr()
        np.testing.assert_allclose(o.numpy(), 2 * x.numpy(), rtol=1e-6)


def test_length_mismatches_raise():
    a, b = lst((3,), (3,)), lst((3,))
    with pytest.raises(RuntimeError, match=r"_foreach_add.*same number of tensors, got 2 and 1"):
        flambeau._foreach_add(a, b)
    with pytest.raises(RuntimeError, match="_foreach_mul_.*scalar list"):
        flambeau._foreach_mul_(a, [1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="_foreach_addcmul.*same number"):
        flambeau._foreach_addcmul(a, a, b)
    with pytest.raises(RuntimeError, match="at least one tensor"):
        flambeau._foreach_sqrt([])


def test_shape_mismatch_names_the_operator():
    with pytest.raises(RuntimeError):
        flambeau._foreach_add_(lst((3,)), lst((4,)))


def test_wrong_argument_types_raise_type_error():
    with pytest.raises(TypeError):
        flambeau._foreach_add(flambeau.ones(3), 1.0)
    with pytest.raises(TypeError):
        flambeau._foreach_add(lst((3,)), "x")


def test_broadcasting_other_goes_through_the_elementwise_path():
    xs = lst((2, 3))
    ys = lst((3,), seed=1)
    out = flambeau._foreach_add(xs, ys, alpha=2)
    np.testing.assert_allclose(out[0].numpy(), xs[0].numpy() + 2 * ys[0].numpy(), rtol=1e-6)


def test_mixed_dtypes_in_one_list():
    xs = [
        flambeau.ones(3, dtype=flambeau.float32),
        flambeau.ones(2, dtype=flambeau.float64),
        flambeau.ones(2, dtype=flambeau.int64),
        flambeau.ones(2, dtype=flambeau.float16),
    ]
    out = flambeau._foreach_add(xs, 0.5)
    assert [o.dtype for o in out] == [
        flambeau.float32,
        flambeau.float64,
        flambeau.float32,
        flambeau.float16,
    ]
    for o in out:
        np.testing.assert_allclose(o.to(flambeau.float64).numpy(), 1.5)


def test_inplace_type_errors_are_the_elementwise_ones():
    with pytest.raises(RuntimeError):
        flambeau._foreach_add_([flambeau.ones(2, dtype=flambeau.int64)], 0.5)
    with pytest.raises(RuntimeError):
        flambeau._foreach_sqrt_([flambeau.ones(2, dtype=flambeau.int64)])


def test_mixed_dtype_operands_fall_back_and_promote():
    a = lst((4,), dtype=flambeau.float32)
    b = lst((4,), dtype=flambeau.float64, seed=1)
    out = flambeau._foreach_mul(a, b)
    assert out[0].dtype == flambeau.float64
    np.testing.assert_allclose(out[0].numpy(), a[0].numpy().astype(np.float64) * b[0].numpy())
    flambeau._foreach_add_(a, b)  # in place keeps float32
    assert a[0].dtype == flambeau.float32


def test_aliased_operands():
    v = lst((5,))
    g = [v[0].clone()]
    expected = v[0].numpy() + 0.5 * g[0].numpy() ** 2
    flambeau._foreach_addcmul_(v, g, g, 0.5)
    np.testing.assert_allclose(v[0].numpy(), expected, rtol=1e-6)
    x = lst((5,))
    expected = x[0].numpy() * x[0].numpy()
    flambeau._foreach_mul_(x, x)
    np.testing.assert_allclose(x[0].numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("dtype", [flambeau.float32, flambeau.float64])
def test_fast_and_strided_paths_agree(dtype):
    rng = np.random.default_rng(0)
    base = rng.uniform(0.5, 2, (6, 8))
    other = rng.uniform(0.5, 2, (6, 8))
    contiguous = [flambeau.from_numpy(base.copy()).to(dtype)]
    strided = [flambeau.from_numpy(base.T.copy()).to(dtype).t()]
    assert not strided[0].is_contiguous()
    o1 = [flambeau.from_numpy(other).to(dtype)]
    for fn, args in [
        (flambeau._foreach_addcdiv, (o1, o1, [0.5])),
        (flambeau._foreach_lerp, (o1, 0.7)),
        (flambeau._foreach_pow, (1.3,)),
        (flambeau._foreach_maximum, (1.0,)),
        (flambeau._foreach_reciprocal, ()),
    ]:
        a = fn(contiguous, *args)[0].numpy()
        b = fn(strided, *args)[0].numpy()
        np.testing.assert_allclose(a, b, rtol=1e-6 if dtype == flambeau.float32 else 1e-14)


def test_nan_propagates_through_maximum_and_clamp():
    x = [flambeau.tensor([float("nan"), 1.0, -1.0])]
    for fn in (flambeau._foreach_maximum, flambeau._foreach_clamp_min):
        out = fn(x, 0.0)[0].numpy()
        assert np.isnan(out[0]) and out[1] == 1.0 and out[2] == 0.0
    out = flambeau._foreach_maximum(x, [flambeau.tensor([0.0, float("nan"), 0.0])])[0].numpy()
    assert np.isnan(out[0]) and np.isnan(out[1]) and out[2] == 0.0


def test_complex_scalar_falls_back():
    out = flambeau._foreach_add(lst((2,)), 1j)
    assert out[0].dtype == flambeau.complex64


def test_addcdiv_tensor_scalars_must_be_1d():
    a = lst((3,))
    with pytest.raises(RuntimeError, match="1-D"):
        flambeau._foreach_addcdiv(a, a, a, flambeau.ones(1, 2))


def test_requires_grad_inputs_under_no_grad():
    from flambeau.autograd import no_grad

    p = flambeau.ones(3, requires_grad=True)
    with no_grad():
        flambeau._foreach_add_([p], [flambeau.ones(3)], alpha=-0.5)
    np.testing.assert_allclose(p.detach().numpy(), 0.5)
