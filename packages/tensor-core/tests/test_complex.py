"""Complex-number operators: views sharing memory, properties, errors."""

import numpy as np
import pytest

import flambeau


def cplx(shape, dtype=np.complex128, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def test_view_as_real_shares_storage_and_geometry():
    z = flambeau.from_numpy(cplx((3, 4), np.complex64))
    v = flambeau.view_as_real(z[:, 1:3])
    assert v.dtype == flambeau.float32
    assert tuple(v.shape) == (3, 2, 2)
    assert v.stride() == (8, 2, 1)
    assert v.storage_offset() == 2
    v[0, 0, 1] = 7.0
    assert z[0, 1].item() == pytest.approx(complex(z[0, 1].item().real, 7.0))
    t = flambeau.view_as_real(z.t())
    assert t.stride() == (2, 8, 1)
    np.testing.assert_array_equal(t.numpy()[..., 0], z.numpy().T.real)


def test_view_as_complex_roundtrip_and_sharing():
    x = flambeau.arange(12.0, dtype=flambeau.float64).reshape(3, 2, 2)
    z = flambeau.view_as_complex(x)
    assert z.dtype == flambeau.complex128 and tuple(z.shape) == (3, 2)
    z.mul_(2)
    np.testing.assert_array_equal(x.numpy(), 2 * np.arange(12.0).reshape(3, 2, 2))
    back = flambeau.view_as_real(z)
    assert back._is_view_of(x) and back.stride() == x.stride()
    # Offsets and strides count complex elements.
    w = flambeau.view_as_complex(x[1:])
    assert w.storage_offset() == 2 and w.stride() == (2, 1)
    # Stride-0 (expanded) dims are even strides too.
    e = flambeau.view_as_complex(flambeau.zeros(3, 2).expand(2, 3, 2))
    assert e.stride() == (0, 1)


@pytest.mark.parametrize(
    "make_x, message",
    [
        (lambda: flambeau.arange(6.0).reshape(2, 3), "last dimension of size 2"),
        (lambda: flambeau.arange(6.0).reshape(3, 2).t(), "last dimension of size 2"),
        (lambda: flambeau.arange(8.0).reshape(2, 4)[:, ::2], "stride 1"),
        (lambda: flambeau.arange(9.0).reshape(3, 3)[:, :2], "stride divisible by 2"),
        (lambda: flambeau.arange(7.0)[1:].reshape(3, 2), "storage_offset divisible by 2"),
        (lambda: flambeau.tensor(1.0), "one or more dimensions"),
        (lambda: flambeau.arange(6).reshape(3, 2), "float16, float32 and float64"),
        (lambda: flambeau.zeros(3, 2, dtype=flambeau.bfloat16), "float16, float32 and float64"),
    ],
)
def test_view_as_complex_errors(make_x, message):
    with pytest.raises(RuntimeError, match=message):
        flambeau.view_as_complex(make_x())


def test_view_as_real_rejects_real():
    with pytest.raises(RuntimeError, match="only supported for complex tensors"):
        flambeau.view_as_real(flambeau.ones(3))


def test_real_imag_views_and_setters():
    z = flambeau.from_numpy(cplx((2, 3)))
    ref = z.numpy().copy()
    r, i = z.real, z.imag
    assert r.dtype == flambeau.float64 and r._is_view_of(z)
    assert r.stride() == (6, 2) and i.storage_offset() == 1
    np.testing.assert_array_equal(r.numpy(), ref.real)
    np.testing.assert_array_equal(i.numpy(), ref.imag)
    z.real.mul_(2)
    np.testing.assert_array_equal(z.numpy(), 2 * ref.real + 1j * ref.imag)
    z.imag = flambeau.zeros(3)
    np.testing.assert_array_equal(z.numpy().imag, np.zeros((2, 3)))
    z.real = 5
    np.testing.assert_array_equal(z.numpy().real, np.full((2, 3), 5.0))
    # Views of a non-contiguous complex tensor.
    zt = flambeau.from_numpy(cplx((4, 3)))
    np.testing.assert_array_equal(zt.t().imag.numpy(), zt.numpy().T.imag)
    np.testing.assert_array_equal(zt[1:, ::2].real.numpy(), zt.numpy()[1:, ::2].real)


def test_real_of_real_is_itself_and_imag_errors():
    x = flambeau.ones(3)
    assert x.real is x
    assert flambeau.real(x) is x
    with pytest.raises(RuntimeError, match="imag is not implemented"):
        _ = x.imag
    with pytest.raises(RuntimeError, match="imag is not implemented"):
        flambeau.imag(x)


def test_conj_and_friends():
    x = flambeau.ones(3)
    assert flambeau.conj(x) is x and x.conj() is x
    assert flambeau.conj_physical(x) is x and x.resolve_conj() is x
    assert x.conj_physical_() is x
    assert not x.is_conj() and not flambeau.is_conj(x)
    z = flambeau.from_numpy(cplx(4))
    ref = z.numpy().copy()
    c = z.conj()
    assert not c._is_view_of(z) and not c.is_conj()
    np.testing.assert_array_equal(c.numpy(), np.conj(ref))
    assert z.resolve_conj() is z
    assert z.conj_physical_() is z
    np.testing.assert_array_equal(z.numpy(), np.conj(ref))
    out = flambeau.empty(0, dtype=flambeau.float64)
    flambeau.conj_physical(flambeau.arange(3.0), out=out)
    np.testing.assert_array_equal(out.numpy(), [0.0, 1.0, 2.0])
    with pytest.raises(RuntimeError):
        flambeau.conj_physical(z, out=flambeau.empty(0, dtype=flambeau.float64))


def test_abs_of_complex_is_real_magnitude():
    z = flambeau.tensor([3 + 4j, -1j], dtype=flambeau.complex64)
    a = z.abs()
    assert a.dtype == flambeau.float32
    np.testing.assert_allclose(a.numpy(), [5.0, 1.0])


def test_angle():
    np.testing.assert_allclose(
        flambeau.angle(flambeau.tensor([1j, -1 + 0j, 0j])).numpy(), [np.pi / 2, np.pi, 0.0]
    )
    a = flambeau.angle(flambeau.tensor([-1, 2, 0]))
    assert a.dtype == flambeau.float32
    np.testing.assert_allclose(a.numpy(), [np.pi, 0, 0], rtol=1e-6)
    assert flambeau.angle(flambeau.tensor([-0.0])).item() == 0.0
    assert flambeau.angle(flambeau.tensor([True])).dtype == flambeau.float32
    assert flambeau.angle(flambeau.zeros(2, dtype=flambeau.float16)).dtype == flambeau.float16


def test_complex_and_polar():
    re = flambeau.tensor([[1.0], [2.0]])
    im = flambeau.tensor([0.0, 1.0])
    c = flambeau.complex(re, im)
    assert c.dtype == flambeau.complex64 and tuple(c.shape) == (2, 2)
    np.testing.assert_array_equal(c.numpy(), [[1, 1 + 1j], [2, 2 + 1j]])
    f64 = flambeau.float64
    p = flambeau.polar(flambeau.tensor([2.0], dtype=f64), flambeau.tensor([np.pi], dtype=f64))
    assert p.dtype == flambeau.complex128
    np.testing.assert_allclose(p.numpy(), [-2.0 + 0j], atol=1e-12)
    # A negative magnitude is allowed (abs * cis(angle)).
    q = flambeau.polar(flambeau.tensor([-1.0]), flambeau.tensor([0.0]))
    np.testing.assert_allclose(q.numpy(), [-1.0 + 0j])
    for fn in (flambeau.complex, flambeau.polar):
        with pytest.raises(RuntimeError, match="same dtype"):
            fn(flambeau.ones(2), flambeau.ones(2, dtype=flambeau.float64))
        with pytest.raises(RuntimeError, match="float32 or float64"):
            fn(flambeau.ones(2, dtype=flambeau.int64), flambeau.ones(2, dtype=flambeau.int64))
        with pytest.raises(RuntimeError):
            fn(flambeau.ones(2), flambeau.ones(3))
        with pytest.raises(RuntimeError):  # complex results do not fit a float out=
            fn(flambeau.ones(2), flambeau.ones(2), out=flambeau.empty(2))


def test_matrix_transposes():
    z = flambeau.from_numpy(cplx((2, 3, 4)))
    np.testing.assert_array_equal(z.mT.numpy(), np.swapaxes(z.numpy(), -1, -2))
    np.testing.assert_array_equal(z.mH.numpy(), np.conj(np.swapaxes(z.numpy(), -1, -2)))
    np.testing.assert_array_equal(z.adjoint().numpy(), z.mH.numpy())
    np.testing.assert_array_equal(z[0].H.numpy(), np.conj(z[0].numpy().T))
    np.testing.assert_array_equal(z[0].T.numpy(), z[0].numpy().T)
    x = flambeau.ones(2, 3)
    assert x.mT._is_view_of(x) and x.mH._is_view_of(x)
    for get in (lambda t: t.mT, lambda t: t.mH, lambda t: t.adjoint(), lambda t: t.H):
        with pytest.raises(RuntimeError, match="matrices"):
            get(flambeau.ones(3))


def test_isreal():
    z = flambeau.tensor([1 + 0j, 1j, 0j])
    np.testing.assert_array_equal(flambeau.isreal(z).numpy(), [True, False, True])


def test_out_variants():
    out = flambeau.empty(0, dtype=flambeau.float64)
    r = flambeau.angle(flambeau.tensor([1j, -1 + 0j], dtype=flambeau.complex64), out=out)
    assert r is out and out.dtype == flambeau.float64
    np.testing.assert_allclose(out.numpy(), [np.pi / 2, np.pi], rtol=1e-6)
    a, b = flambeau.tensor([1.0, 2.0]), flambeau.tensor([0.5, -1.0])
    for fn, ref in ((flambeau.complex, [1 + 0.5j, 2 - 1j]), (flambeau.polar, None)):
        out = flambeau.empty(0, dtype=flambeau.complex128)
        assert fn(a, b, out=out) is out and tuple(out.shape) == (2,)
        expected = ref if ref is not None else a.numpy() * np.exp(1j * b.numpy())
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    with pytest.raises(RuntimeError):  # float results do not fit an integer out=
        flambeau.angle(flambeau.tensor([1j]), out=flambeau.empty(1, dtype=flambeau.int64))
