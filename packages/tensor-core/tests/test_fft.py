"""flambeau.fft beyond the operator table rows: every transform against dense DFT
matrices (a reference independent of NumPy's pocketfft, which the CPU kernels run),
dtype rules, errors, out=, fftfreq/rfftfreq, fftshift/ifftshift, the primitives'
checks, and calls from several threads."""

import threading

import numpy as np
import pytest

import flambeau
from flambeau import fft

RNG = np.random.default_rng(0)
NORMS = (None, "backward", "ortho", "forward")
TORCH_NAMES = (
    "fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft ihfft hfft2 "
    "ihfft2 hfftn ihfftn fftfreq rfftfreq fftshift ifftshift"
).split()


def randn(*shape, dtype=np.float64):
    x = RNG.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


# ---- dense DFT matrices --------------------------------------------------------


def dft(n, sign):
    k = np.arange(n)
    return np.exp(sign * 2j * np.pi * np.outer(k, k) / n)


def scale(norm, n, forward):
    """The factor norm puts on a forward (exp(-...)) or backward transform."""
    if norm == "ortho":
        return 1 / np.sqrt(n)
    scaled = norm == "forward" if forward else norm in (None, "backward")
    return 1 / n if scaled else 1.0


def fit(x, n, axis):
    """x cropped or zero-padded to n along axis."""
    x = np.moveaxis(x, axis, -1)[..., :n]
    x = np.concatenate([x, np.zeros(x.shape[:-1] + (n - x.shape[-1],), x.dtype)], -1)
    return np.moveaxis(x, -1, axis)


def matrix_dft(x, n, axis, forward, norm):
    """The DFT of x along axis (cropped or padded to n) as a matrix product."""
    x = np.moveaxis(fit(x.astype(np.complex128), n, axis), axis, -1)
    y = x @ dft(n, -1 if forward else 1).T * scale(norm, n, forward)
    return np.moveaxis(y, -1, axis)


def hermitian_full(half, n, axis):
    """The n-point spectrum whose first n // 2 + 1 entries half (cropped or padded to
    them) gives: the rest mirrored and conjugated; DC and Nyquist imaginary parts drop."""
    h = np.moveaxis(fit(half.astype(np.complex128), n // 2 + 1, axis), axis, -1).copy()
    h[..., 0] = h[..., 0].real
    if n % 2 == 0:
        h[..., -1] = h[..., -1].real
    mirror = np.conj(h[..., 1 : (n + 1) // 2][..., ::-1])
    return np.moveaxis(np.concatenate([h, mirror], -1), -1, axis)


def dense(name, x, n, axis, norm):
    """Each 1-D transform of flambeau.fft by dense matrices."""
    if name == "fft":
        return matrix_dft(x, n, axis, True, norm)
    if name == "ifft":
        return matrix_dft(x, n, axis, False, norm)
    if name == "rfft":
        return np.moveaxis(
            np.moveaxis(matrix_dft(x, n, axis, True, norm), axis, -1)[..., : n // 2 + 1], -1, axis
        )
    if name == "ihfft":
        full = matrix_dft(x, n, axis, False, norm)
        return np.moveaxis(np.moveaxis(full, axis, -1)[..., : n // 2 + 1], -1, axis)
    if name == "irfft":
        return matrix_dft(hermitian_full(x, n, axis), n, axis, False, norm).real
    if name == "hfft":
        return matrix_dft(hermitian_full(x, n, axis), n, axis, True, norm).real
    raise AssertionError(name)


ONE_D = ("fft", "ifft", "rfft", "ihfft", "irfft", "hfft")


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 1, 4, 7, 12])
def test_1d_transforms_match_dense_dft_matrices(name, norm, n):
    real_in = name in ("rfft", "ihfft")
    x = randn(3, 6, dtype=np.float64 if real_in else np.complex128)
    got = getattr(fft, name)(flambeau.from_numpy(x), n=n, dim=-1, norm=norm).numpy()
    size = n if n is not None else (2 * (6 - 1) if name in ("irfft", "hfft") else 6)
    np.testing.assert_allclose(got, dense(name, x, size, -1, norm), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
@pytest.mark.parametrize("norm", NORMS)
def test_nd_transforms_are_1d_transforms_in_turn(name, norm):
    """fftn over dims (0, 2) with s: the 1-D matrices one dim at a time, the half
    spectrum (or Hermitian) step on the last dim, plain complex DFTs on the others."""
    real_in = name in ("rfft", "ihfft")
    x = randn(4, 3, 5, dtype=np.float64 if real_in else np.complex128)
    s, dims = (3, 6), (0, 2)
    got = getattr(fft, name + "n")(flambeau.from_numpy(x), s=s, dim=dims, norm=norm).numpy()
    forward = name in ("fft", "rfft", "hfft")
    if name in ("fft", "ifft"):
        want = matrix_dft(matrix_dft(x, 3, 0, forward, norm), 6, 2, forward, norm)
    elif name in ("rfft", "ihfft"):  # the last dim is the real one
        want = matrix_dft(dense(name, x, 6, 2, norm), 3, 0, forward, norm)
    else:  # the other dims first, then the Hermitian one
        want = dense(name, matrix_dft(x, 3, 0, forward, norm), 6, 2, norm)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_single_precision_stays_single_and_is_accurate(dtype):
    x = randn(8, 30, dtype=np.dtype(dtype))
    got = fft.fft(flambeau.from_numpy(x))
    assert got.dtype == flambeau.complex64
    want = matrix_dft(x.astype(np.complex128), 30, -1, True, None)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-4)


# ---- dtypes --------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, in_dtype, out_dtype",
    [
        ("fft", flambeau.float32, flambeau.complex64),
        ("fft", flambeau.float64, flambeau.complex128),
        ("fft", flambeau.complex64, flambeau.complex64),
        ("fft", flambeau.int64, flambeau.complex64),
        ("fft", flambeau.bool, flambeau.complex64),
        ("rfft", flambeau.int32, flambeau.complex64),
        ("rfft", flambeau.float64, flambeau.complex128),
        ("irfft", flambeau.int64, flambeau.float32),
        ("irfft", flambeau.complex128, flambeau.float64),
        ("hfft", flambeau.float32, flambeau.float32),
        ("ihfft", flambeau.uint8, flambeau.complex64),
    ],
)
def test_result_dtypes(name, in_dtype, out_dtype):
    x = flambeau.ones(4, 6).to(in_dtype)
    assert getattr(fft, name)(x).dtype == out_dtype


def test_integer_input_uses_the_default_dtype():
    x = flambeau.arange(6)
    old = flambeau.get_default_dtype()
    flambeau.set_default_dtype(flambeau.float64)
    try:
        assert fft.fft(x).dtype == flambeau.complex128
    finally:
        flambeau.set_default_dtype(old)
    np.testing.assert_allclose(fft.fft(x).numpy(), np.fft.fft(np.arange(6)), rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize(
    "dtype, name", [(flambeau.float16, "Half"), (flambeau.bfloat16, "BFloat16")]
)
@pytest.mark.parametrize("fn", [fft.fft, fft.rfft, fft.irfft, fft.fftn, fft.hfft2])
def test_half_precision_is_unsupported_as_on_torch_cpu(dtype, name, fn):
    with pytest.raises(RuntimeError, match=f"Unsupported dtype {name}"):
        fn(flambeau.ones(4, 4, dtype=dtype))


# ---- errors --------------------------------------------------------------------

X = flambeau.ones(4, 6)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: fft.fft(X, dim=2), IndexError, "out of range"),
        (lambda: fft.fft(X, dim=-3), IndexError, "out of range"),
        (lambda: fft.fft(flambeau.tensor(1.0)), IndexError, "tensor has no dimensions"),
        (lambda: fft.fft(X, n=0), RuntimeError, r"Invalid number of data points \(0\)"),
        (lambda: fft.rfft(X, n=-1), RuntimeError, r"Invalid number of data points \(-1\)"),
        (lambda: fft.fft(flambeau.ones(0)), RuntimeError, r"data points \(0\)"),
        (lambda: fft.irfft(flambeau.ones(1)), RuntimeError, r"data points \(0\)"),
        (lambda: fft.fftn(X, s=(-2, 3)), RuntimeError, r"data points \(-2\)"),
        (lambda: fft.fft2(X, dim=(0, 0)), RuntimeError, "FFT dims must be unique"),
        (lambda: fft.fftn(X, dim=(0, 1, -2)), RuntimeError, "FFT dims must be unique"),
        (lambda: fft.fftn(X, s=(3,), dim=(0, 1)), RuntimeError, "same length"),
        (lambda: fft.fft2(X, s=3), RuntimeError, "same length"),
        (lambda: fft.fftn(X, s=(3, 4, 5)), RuntimeError, "only has 2 dimensions"),
        (lambda: fft.fft(X, norm="bad"), RuntimeError, 'Invalid normalization mode: "bad"'),
        (lambda: fft.rfft(X.to(flambeau.complex64)), RuntimeError, "real input tensor"),
        (lambda: fft.ihfft2(X.to(flambeau.complex64)), RuntimeError, "real input tensor"),
        (lambda: fft.rfftn(X, dim=()), RuntimeError, "rfftn must transform at least one axis"),
        (lambda: fft.hfftn(flambeau.tensor(1.0)), RuntimeError, "at least one axis"),
        (lambda: fft.fft(X, n=2.5), TypeError, "n"),
    ],
)
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_empty_batch_gives_an_empty_result():
    assert tuple(fft.fft(flambeau.ones(0, 3)).shape) == (0, 3)
    assert tuple(fft.rfft(flambeau.ones(2, 0, 6)).shape) == (2, 0, 4)
    assert tuple(fft.irfft(flambeau.ones(0, 4, dtype=flambeau.complex64)).shape) == (0, 6)


def test_fftn_without_dims_converts_to_complex():
    x = flambeau.from_numpy(randn(2, 3))
    for y in (fft.fftn(x, dim=()), fft.ifftn(x, s=())):
        assert y.dtype == flambeau.complex128
        np.testing.assert_array_equal(y.numpy(), x.numpy())
    assert fft.fftn(flambeau.tensor(2.0)).item() == 2


def test_noncontiguous_input():
    base = randn(6, 10, dtype=np.complex128)
    t = flambeau.from_numpy(base)[:, ::2].t()
    np.testing.assert_allclose(fft.fft(t).numpy(), np.fft.fft(base[:, ::2].T), atol=1e-12)


# ---- out= -----------------------------------------------------------------------


def test_out_is_resized_written_and_returned():
    x = flambeau.from_numpy(randn(3, 5))
    out = flambeau.empty(0, dtype=flambeau.complex128)
    assert fft.rfft(x, out=out) is out
    np.testing.assert_allclose(out.numpy(), np.fft.rfft(x.numpy()), atol=1e-12)
    real_out = flambeau.empty(0, dtype=flambeau.float64)
    assert fft.irfft(out, n=5, out=real_out) is real_out
    np.testing.assert_allclose(real_out.numpy(), x.numpy(), atol=1e-12)


def test_out_of_wider_dtype_gets_the_cast_result():
    x = flambeau.from_numpy(randn(4).astype(np.float32))
    out = flambeau.empty(4, dtype=flambeau.complex128)
    fft.fft(x, out=out)
    np.testing.assert_allclose(out.numpy(), np.fft.fft(x.numpy()), rtol=1e-5, atol=1e-5)


def test_out_dtype_errors():
    with pytest.raises(RuntimeError, match="fft expects a complex output tensor, but got Float"):
        fft.fft(X, out=flambeau.empty(0))
    with pytest.raises(RuntimeError, match="rfft2 expects a complex output tensor"):
        fft.rfft2(X, out=flambeau.empty(0, dtype=flambeau.float64))
    with pytest.raises(RuntimeError, match="irfft expects a floating point output tensor"):
        fft.irfft(X, out=flambeau.empty(0, dtype=flambeau.complex64))


# ---- fftfreq, rfftfreq, fftshift, ifftshift ---------------------------------------


@pytest.mark.parametrize("n", [1, 4, 5])
@pytest.mark.parametrize("d", [1.0, 0.5, 3])
def test_fftfreq_and_rfftfreq_match_numpy(n, d):
    np.testing.assert_allclose(fft.fftfreq(n, d).numpy(), np.fft.fftfreq(n, d), rtol=1e-6)
    np.testing.assert_allclose(fft.rfftfreq(n, d=d).numpy(), np.fft.rfftfreq(n, d), rtol=1e-6)
    assert fft.fftfreq(n, d).dtype == flambeau.float32
    f64 = fft.fftfreq(n, d, dtype=flambeau.float64)
    np.testing.assert_allclose(f64.numpy(), np.fft.fftfreq(n, d), rtol=1e-15)


def test_fftfreq_keywords():
    assert tuple(fft.fftfreq(0).shape) == (0,) and tuple(fft.rfftfreq(0).shape) == (1,)
    assert fft.fftfreq(4, requires_grad=True).requires_grad
    assert fft.rfftfreq(4, dtype=flambeau.float16).dtype == flambeau.float16
    assert fft.fftfreq(4, dtype=flambeau.complex64).dtype == flambeau.complex64
    out = flambeau.empty(2, dtype=flambeau.float64)
    assert fft.fftfreq(5, 2.0, out=out) is out
    np.testing.assert_allclose(out.numpy(), np.fft.fftfreq(5, 2.0))
    with pytest.raises(RuntimeError, match="requires a floating point or complex dtype"):
        fft.fftfreq(4, dtype=flambeau.int64)
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        fft.rfftfreq(-1)
    with pytest.raises(TypeError, match="must be int, not float"):
        fft.fftfreq(4.5)


@pytest.mark.parametrize("shape", [(5,), (4, 7), (2, 3, 6)])
@pytest.mark.parametrize("dim", [None, 0, -1, (0, -1)])
def test_fftshift_and_ifftshift_match_numpy(shape, dim):
    x = np.arange(np.prod(shape)).reshape(shape)
    t = flambeau.from_numpy(x)
    np.testing.assert_array_equal(fft.fftshift(t, dim).numpy(), np.fft.fftshift(x, dim))
    np.testing.assert_array_equal(fft.ifftshift(t, dim=dim).numpy(), np.fft.ifftshift(x, dim))


def test_fftshift_errors():
    with pytest.raises(IndexError):
        fft.fftshift(X, dim=5)
    with pytest.raises(IndexError, match="no dimensions"):
        fft.fftshift(flambeau.tensor(1.0), dim=0)


# ---- the primitives ------------------------------------------------------------


def test_primitive_checks():
    c = flambeau.ones(3, 4, dtype=flambeau.complex64)
    with pytest.raises(RuntimeError, match="Only supports complex dtypes, but found: Float"):
        flambeau._fft_c2c(X, [0], 0, True)
    with pytest.raises(RuntimeError, match="Only supports floating-point dtypes"):
        flambeau._fft_r2c(c, [0], 0, True)
    with pytest.raises(RuntimeError, match="normalization must be 0"):
        flambeau._fft_c2c(c, [0], 3, True)
    with pytest.raises(RuntimeError, match="at least one dim"):
        flambeau._fft_c2r(c, [], 0, 6)
    with pytest.raises(RuntimeError, match=r"expected dim 1 to hold 5 \(last_dim_size // 2 \+ 1\)"):
        flambeau._fft_c2r(c, [0, 1], 0, 9)
    assert tuple(flambeau._fft_c2r(c, [0, 1], 0, 6).shape) == (3, 6)


def test_the_namespace_has_torch_fft_names():
    assert sorted(fft.__all__) == sorted(TORCH_NAMES)
    assert all(callable(getattr(flambeau.fft, n)) for n in TORCH_NAMES)


def test_transforms_from_several_threads():
    """The CPU kernel takes Python's lock itself; threads computing at once agree with a
    serial run."""
    xs = [flambeau.from_numpy(randn(16, 64)) for _ in range(8)]
    want = [fft.rfft(x).numpy() for x in xs]
    got = [None] * len(xs)

    def work(i):
        for _ in range(20):
            got[i] = fft.rfft(xs[i]).numpy()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
