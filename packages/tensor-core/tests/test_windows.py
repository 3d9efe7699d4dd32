"""Window functions beyond their table rows: NumPy's symmetric windows, periodic
windows as symmetric ones a point longer, keyword arguments and errors."""

import numpy as np
import pytest

import flambeau

WINDOWS = {
    "hann_window": np.hanning,
    "hamming_window": np.hamming,
    "blackman_window": np.blackman,
    "bartlett_window": np.bartlett,
    "kaiser_window": lambda n: np.kaiser(n, 12.0),
}


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("n", [1, 2, 5, 16])
def test_symmetric_windows_match_numpy(name, n):
    got = getattr(flambeau, name)(n, periodic=False, dtype=flambeau.float64)
    np.testing.assert_allclose(got.numpy(), WINDOWS[name](n), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("n", [2, 5, 16])
def test_periodic_window_is_the_symmetric_one_point_longer(name, n):
    fn = getattr(flambeau, name)
    periodic = fn(n, dtype=flambeau.float64)  # periodic=True is the default
    symmetric = fn(n + 1, False, dtype=flambeau.float64)
    np.testing.assert_allclose(periodic.numpy(), symmetric.numpy()[:-1], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", WINDOWS)
def test_keywords(name):
    fn = getattr(flambeau, name)
    assert fn(4).dtype == flambeau.float32
    assert fn(0).shape == (0,)
    w = fn(window_length=4, dtype=flambeau.float64, device="cpu", requires_grad=True)
    assert w.requires_grad and w.is_leaf and w.dtype == flambeau.float64
    assert fn(3, dtype=flambeau.bfloat16).dtype == flambeau.bfloat16


@pytest.mark.parametrize("name", WINDOWS)
def test_errors(name):
    fn = getattr(flambeau, name)
    with pytest.raises(RuntimeError, match=f"{name} requires non-negative window_length"):
        fn(-1)
    with pytest.raises(RuntimeError, match=f"{name} expects floating point dtypes"):
        fn(4, dtype=flambeau.int64)
    with pytest.raises(NotImplementedError, match="complex"):
        fn(4, dtype=flambeau.complex64)


def test_hamming_and_kaiser_parameters():
    w = flambeau.hamming_window(6, True, 0.5, 0.5, dtype=flambeau.float64)
    np.testing.assert_allclose(w.numpy(), flambeau.hann_window(6, dtype=flambeau.float64).numpy())
    k = flambeau.kaiser_window(7, False, 5.0, dtype=flambeau.float64)
    np.testing.assert_allclose(k.numpy(), np.kaiser(7, 5.0), rtol=1e-12)
    # I0(beta) overflows double past beta ~ 700; the window stays finite and peaks at 1
    for beta in (1000.0, 1e6, -1e300):
        big = flambeau.kaiser_window(9, False, beta, dtype=flambeau.float64).numpy()
        assert np.isfinite(big).all() and big[4] == 1.0 and big[0] < 1e-100
    # either side of the switch from I0's series to its asymptotic expansion
    for beta in (29.9, 30.0, 30.1, 300.0):
        np.testing.assert_allclose(
            flambeau.kaiser_window(9, False, beta, dtype=flambeau.float64).numpy(),
            np.kaiser(9, beta),
            rtol=1e-12,
        )
    assert np.isnan(flambeau.kaiser_window(4, beta=float("inf")).numpy()).all()
