"""flambeau.signal.windows against scipy.signal.windows, and PyTorch's arguments,
defaults and errors (torch.signal.windows is the contract)."""

import subprocess
import sys

import numpy as np
import pytest

import flambeau
from flambeau.signal import windows

scipy_windows = pytest.importorskip("scipy.signal.windows")

LENGTHS = (0, 1, 2, 3, 4, 7, 10, 16)
DTYPES = ("float32", "float64")
# (flambeau keyword arguments, scipy positional parameters) per window.
PARAMETERS = {
    "bartlett": [({}, ())],
    "blackman": [({}, ())],
    "cosine": [({}, ())],
    "hamming": [({}, ())],
    "hann": [({}, ())],
    "nuttall": [({}, ())],
    "exponential": [({}, (None, 1.0)), ({"tau": 3.0}, (None, 3.0))],
    "gaussian": [({}, (1.0,)), ({"std": 0.4}, (0.4,)), ({"std": 6.0}, (6.0,))],
    "kaiser": [({}, (12.0,)), ({"beta": 0.0}, (0.0,)), ({"beta": 5.0}, (5.0,))],
    "general_cosine": [
        ({"a": [0.5, 0.5]}, ([0.5, 0.5],)),
        ({"a": (0.42, 0.5, 0.08)}, ([0.42, 0.5, 0.08],)),
    ],
    "general_hamming": [({}, (0.54,)), ({"alpha": 0.6}, (0.6,))],
}
CASES = [(name, kw, params) for name, rows in PARAMETERS.items() for kw, params in rows]
TOLERANCE = {"float32": 2e-6, "float64": 1e-12}


def assert_matches(result, expected, dtype):
    assert result.dtype == getattr(flambeau, dtype)
    assert tuple(result.shape) == expected.shape
    np.testing.assert_allclose(result.numpy(), expected, rtol=0, atol=TOLERANCE[dtype])


@pytest.mark.parametrize("sym", [True, False], ids=["sym", "periodic"])
@pytest.mark.parametrize("M", LENGTHS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("name", "kwargs", "scipy_params"), CASES)
def test_window_matches_scipy(name, kwargs, scipy_params, dtype, M, sym):
    result = getattr(windows, name)(M, sym=sym, dtype=getattr(flambeau, dtype), **kwargs)
    expected = getattr(scipy_windows, name)(M, *scipy_params, sym=sym)
    assert_matches(result, expected, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M", [2, 5, 8])
def test_periodic_exponential_with_a_center(M, dtype):
    result = windows.exponential(M, center=1.5, tau=2.0, sym=False, dtype=getattr(flambeau, dtype))
    assert_matches(result, scipy_windows.exponential(M, 1.5, 2.0, sym=False), dtype)


def test_one_point_exponential_honours_its_center():
    # PyTorch evaluates the formula at n = 0 (scipy returns [1.0] for any center).
    w = windows.exponential(1, center=1.5, tau=2.0, sym=False, dtype=flambeau.float64)
    np.testing.assert_allclose(w.numpy(), [np.exp(-0.75)], atol=1e-15)


def test_kaiser_with_a_large_beta_has_no_nan():
    for M in range(2, 40):
        for sym in (True, False):
            w = windows.kaiser(M, beta=30.0, sym=sym, dtype=flambeau.float32)
            assert not bool(flambeau.isnan(w).any())
            np.testing.assert_allclose(
                w.numpy(), scipy_windows.kaiser(M, 30.0, sym=sym), rtol=1e-5, atol=1e-9
            )


@pytest.mark.parametrize("name", list(PARAMETERS))
def test_lengths_zero_and_one(name):
    kwargs = {"a": [0.5, 0.5]} if name == "general_cosine" else {}
    window = getattr(windows, name)
    empty = window(0, dtype=flambeau.float64, **kwargs)
    assert tuple(empty.shape) == (0,) and empty.dtype == flambeau.float64
    for sym in (True, False):
        assert window(1, sym=sym, **kwargs).tolist() == [1.0]


@pytest.mark.parametrize("name", list(PARAMETERS))
def test_default_dtype_and_torch_keywords(name):
    kwargs = {"a": [0.5, 0.5]} if name == "general_cosine" else {}
    window = getattr(windows, name)
    assert window(5, **kwargs).dtype == flambeau.float32
    previous = flambeau.get_default_dtype()
    flambeau.set_default_dtype(flambeau.float64)
    try:
        assert window(5, **kwargs).dtype == flambeau.float64
    finally:
        flambeau.set_default_dtype(previous)
    # Every factory keyword of PyTorch's signature, by name.
    w = window(
        M=6,
        sym=False,
        dtype=flambeau.float64,
        layout=flambeau.strided,
        device="cpu",
        requires_grad=False,
        **kwargs,
    )
    assert tuple(w.shape) == (6,) and w.device == flambeau.device("cpu")
    with pytest.raises(TypeError):
        window(5, False, **kwargs)  # everything after M is keyword-only


def test_requires_grad():
    assert windows.hann(5, requires_grad=True).requires_grad
    assert windows.kaiser(5, requires_grad=True).requires_grad
    empty = windows.gaussian(0, requires_grad=True)
    assert empty.requires_grad and empty.is_leaf
    assert not windows.bartlett(5).requires_grad


def test_defaults_are_pytorchs():
    np.testing.assert_allclose(windows.kaiser(9).numpy(), scipy_windows.kaiser(9, 12.0), atol=2e-6)
    np.testing.assert_allclose(
        windows.general_hamming(9).numpy(), scipy_windows.hamming(9), atol=2e-6
    )
    np.testing.assert_allclose(
        windows.exponential(9).numpy(), scipy_windows.exponential(9, tau=1.0), atol=2e-6
    )
    np.testing.assert_allclose(
        windows.gaussian(9).numpy(), scipy_windows.gaussian(9, 1.0), atol=2e-6
    )


ERRORS = [
    (
        lambda: windows.hann(-1),
        ValueError,
        "general_cosine requires non-negative window length, got M=-1",
    ),
    (
        lambda: windows.nuttall(-2),
        ValueError,
        "general_cosine requires non-negative window length, got M=-2",
    ),
    (
        lambda: windows.blackman(-1),
        ValueError,
        "blackman requires non-negative window length, got M=-1",
    ),
    (
        lambda: windows.bartlett(-1),
        ValueError,
        "bartlett requires non-negative window length, got M=-1",
    ),
    (
        lambda: windows.kaiser(-3),
        ValueError,
        "kaiser requires non-negative window length, got M=-3",
    ),
    (
        lambda: windows.hamming(3, dtype=flambeau.int64),
        ValueError,
        "general_cosine expects float32 or float64 dtypes, got: flambeau.int64",
    ),
    (
        lambda: windows.cosine(3, dtype=flambeau.float16),
        ValueError,
        "cosine expects float32 or float64 dtypes, got: flambeau.float16",
    ),
    (
        lambda: windows.gaussian(3, dtype=flambeau.bfloat16),
        ValueError,
        "gaussian expects float32 or float64 dtypes, got: flambeau.bfloat16",
    ),
    (
        lambda: windows.hann(3, layout=flambeau.sparse_coo),
        ValueError,
        "general_cosine is implemented for strided tensors only, got: flambeau.sparse_coo",
    ),
    (lambda: windows.exponential(3, tau=0), ValueError, "Tau must be positive, got: 0 instead."),
    (
        lambda: windows.exponential(3, tau=-1.5, sym=False),
        ValueError,
        "Tau must be positive, got: -1.5 instead.",
    ),
    (
        lambda: windows.exponential(3, center=1.0),
        ValueError,
        "Center must be None for symmetric windows",
    ),
    (
        lambda: windows.gaussian(3, std=0),
        ValueError,
        "Standard deviation must be positive, got: 0 instead.",
    ),
    (
        lambda: windows.gaussian(3, std=-1.0),
        ValueError,
        "Standard deviation must be positive, got: -1.0 instead.",
    ),
    (lambda: windows.kaiser(3, beta=-1), ValueError, "beta must be non-negative, got: -1 instead."),
    (lambda: windows.general_cosine(3, a=[]), ValueError, "Coefficients cannot be empty"),
    (lambda: windows.general_cosine(3, a=5), TypeError, "Coefficients must be a list/tuple"),
    (lambda: windows.general_cosine(3), TypeError, "missing 1 required keyword-only argument: 'a'"),
]


@pytest.mark.parametrize(("call", "error", "message"), ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)


def test_checks_come_in_pytorchs_order():
    # The length before the parameters; M of 0 and 1 skip the coefficients' checks.
    with pytest.raises(ValueError, match="non-negative window length"):
        windows.exponential(-1, tau=-1)
    assert windows.general_cosine(1, a=5).tolist() == [1.0]
    assert windows.general_cosine(0, a=[]).numel() == 0


def test_general_cosine_accepts_any_iterable():
    w = windows.general_cosine(6, a=(c for c in (0.5, 0.5)), sym=False, dtype=flambeau.float64)
    np.testing.assert_allclose(w.numpy(), scipy_windows.hann(6, sym=False), atol=1e-12)


def test_signal_loads_on_first_access():
    code = (
        "import sys, flambeau; assert 'flambeau.signal' not in sys.modules; "
        "print(flambeau.signal.windows.hann(3).tolist())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[0.0, 1.0, 0.0]"
    assert windows.__all__ == sorted(PARAMETERS)
