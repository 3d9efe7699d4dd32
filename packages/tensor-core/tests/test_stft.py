"""flambeau.stft and flambeau.istft against a reference that frames, windows and
transforms with NumPy (and overlap-adds for the inverse); round trips; PyTorch's
argument checks."""

import warnings

import numpy as np
import pytest

import flambeau

RNG = np.random.default_rng(0)
NP_PAD = {"reflect": "reflect", "constant": "constant", "replicate": "edge", "circular": "wrap"}


def centred(window, n_fft):
    w = np.zeros(n_fft, dtype=window.dtype)
    left = (n_fft - window.size) // 2
    w[left : left + window.size] = window
    return w


def ref_stft(x, n_fft, hop, window, center, pad_mode, normalized, onesided, align=False):
    """Frames x (..., L) at multiples of hop, windows them, and transforms each one."""
    if center:
        p = n_fft // 2
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(p, p)], mode=NP_PAD[pad_mode])
    w = centred(window, n_fft)
    if align:  # frames start where the window does
        left = (n_fft - window.size) // 2
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(left, n_fft - window.size - left)])
    count = 1 + (x.shape[-1] - n_fft) // hop
    frames = np.stack([x[..., t * hop : t * hop + n_fft] for t in range(count)], -2) * w
    spec = np.fft.rfft(frames, axis=-1) if onesided else np.fft.fft(frames, axis=-1)
    if normalized:
        spec = spec / np.sqrt(n_fft)
    return np.swapaxes(spec, -1, -2)


def ref_istft(spec, n_fft, hop, window, center, normalized, onesided, length):
    """Least-squares inverse: overlap-added windowed frames over the overlap-added
    squared window, trimmed as PyTorch's."""
    frames = np.swapaxes(spec, -1, -2)
    frames = np.fft.irfft(frames, n_fft) if onesided else np.fft.ifft(frames).real
    if normalized:
        frames = frames * np.sqrt(n_fft)
    w = centred(window, n_fft)
    count = frames.shape[-2]
    total = n_fft + hop * (count - 1)
    y = np.zeros(frames.shape[:-2] + (total,))
    env = np.zeros(total)
    for t in range(count):
        y[..., t * hop : t * hop + n_fft] += frames[..., t, :] * w
        env[t * hop : t * hop + n_fft] += w * w
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    y, env = y[..., start:end], env[start:end]
    y = y / env
    return np.concatenate([y, np.zeros(y.shape[:-1] + (end - start - y.shape[-1],))], -1)


def t(a):
    return flambeau.from_numpy(a)


STFT_CASES = [
    # n_fft, hop, win_length, center, pad_mode, normalized, onesided, align
    (8, 2, 8, True, "reflect", False, True, None),
    (8, 3, 6, True, "constant", True, True, None),
    (7, 3, 5, True, "circular", False, True, None),
    (7, 2, 7, True, "replicate", False, False, None),
    (8, 2, 5, False, "reflect", False, True, False),
    (8, 2, 4, False, "reflect", False, True, True),
    (16, 2, 5, False, "reflect", True, False, True),
]


@pytest.mark.parametrize("case", STFT_CASES)
@pytest.mark.parametrize("batched", [False, True])
def test_stft_matches_framed_numpy(case, batched):
    n_fft, hop, win, center, pad_mode, normalized, onesided, align = case
    x = RNG.standard_normal((3, 23) if batched else 23)
    window = np.hanning(win + 2)[1:-1]  # no zero ends
    got = flambeau.stft(
        t(x), n_fft, hop, win, t(window), center, pad_mode, normalized, onesided,
        return_complex=True, align_to_window=align,
    )  # fmt: skip
    want = ref_stft(x, n_fft, hop, window, center, pad_mode, normalized, onesided, bool(align))
    assert got.dtype == flambeau.complex128
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)


def test_stft_of_complex_input_is_twosided():
    z = RNG.standard_normal(20) + 1j * RNG.standard_normal(20)
    w = np.hanning(8)
    got = flambeau.stft(t(z), 8, window=t(w))  # return_complex defaults to True
    np.testing.assert_allclose(got.numpy(), ref_stft(z, 8, 2, w, True, "reflect", False, False))
    with pytest.raises(RuntimeError, match="Cannot have onesided output"):
        flambeau.stft(t(z), 8, window=t(w), onesided=True)


def test_stft_dtypes_and_real_output_form():
    x = flambeau.from_numpy(RNG.standard_normal(20).astype(np.float32))
    w64 = flambeau.hann_window(8, dtype=flambeau.float64)
    assert flambeau.stft(x, 8, return_complex=True, window=w64).dtype == flambeau.complex128
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        real = flambeau.stft(x, 8, window=flambeau.hann_window(8), return_complex=False)
    assert tuple(real.shape) == (5, 11, 2) and real.dtype == flambeau.float32
    spec = x.stft(8, window=flambeau.hann_window(8), return_complex=True)
    np.testing.assert_array_equal(flambeau.view_as_real(spec).numpy(), real.numpy())


def test_stft_without_window_warns_and_uses_a_rectangle():
    x = RNG.standard_normal(16)
    with pytest.warns(UserWarning, match="A window was not provided"):
        got = flambeau.stft(t(x), 4, return_complex=True)
    np.testing.assert_allclose(got.numpy(), ref_stft(x, 4, 1, np.ones(4), True, "reflect", 0, 1))


X = flambeau.ones(20)
W8 = flambeau.hann_window(8)


RC = {"window": W8, "return_complex": True}


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"window": W8}, RuntimeError, "return_complex parameter be given for real inputs"),
        ({**RC, "n_fft": 30, "center": False}, RuntimeError, r"expected 0 < n_fft <= 20"),
        ({**RC, "hop_length": 0}, RuntimeError, "expected hop_length > 0"),
        ({**RC, "n_fft": 2, "window": None}, RuntimeError, "but got hop_length=0"),
        ({**RC, "win_length": 9}, RuntimeError, "expected 0 < win_length <= n_fft"),
        ({**RC, "window": flambeau.ones(7)}, RuntimeError, "size equal to win_length=8"),
        ({**RC, "window": flambeau.ones(2, 4)}, RuntimeError, "1D window tensor"),
        ({**RC, "pad_mode": "bogus"}, NotImplementedError, "Unrecognised padding mode"),
        ({**RC, "align_to_window": True}, RuntimeError, "only be set when center = false"),
    ],
)
def test_stft_errors(kwargs, error, message):
    kwargs = {"n_fft": 8, **kwargs}
    with pytest.raises(error, match=message):
        flambeau.stft(X, **kwargs)


def test_stft_input_checks():
    with pytest.raises(RuntimeError, match="expected a 1D or 2D tensor"):
        flambeau.stft(flambeau.ones(2, 3, 20), 8, window=W8, return_complex=True)
    with pytest.raises(RuntimeError, match="floating point or complex"):
        flambeau.stft(flambeau.arange(20), 8, window=W8, return_complex=True)


ISTFT_CASES = [
    # n_fft, hop, win_length, center, normalized, onesided, length
    (8, 2, 8, True, False, True, None),
    (8, 3, 6, True, True, True, 23),
    (9, 2, 7, True, False, True, 11),
    (8, 2, 8, True, False, False, None),
    (8, 3, 8, False, False, True, None),
    (8, 2, 8, True, False, True, 30),
]


@pytest.mark.parametrize("case", ISTFT_CASES)
def test_istft_matches_overlap_add_reference(case):
    n_fft, hop, win, center, normalized, onesided, length = case
    x = RNG.standard_normal((2, 23))
    window = np.hamming(win)  # non-zero ends: the envelope never vanishes
    spec = ref_stft(x, n_fft, hop, window, center, "reflect", normalized, onesided)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = flambeau.istft(t(spec), n_fft, hop, win, t(window), center, normalized, None, length)
    want = ref_istft(spec, n_fft, hop, window, center, normalized, onesided, length)
    assert got.dtype == flambeau.float64 and tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)


@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize("normalized", [True, False])
def test_round_trip(center, normalized):
    x = RNG.standard_normal((3, 40))
    w = flambeau.hamming_window(16, dtype=flambeau.float64)
    spec = flambeau.stft(t(x), 16, 4, window=w, center=center, normalized=normalized,
                         return_complex=True)  # fmt: skip
    back = flambeau.istft(spec, 16, 4, window=w, center=center, normalized=normalized, length=40)
    # center=False loses the tail past the last whole frame: compare what it keeps
    kept = 16 + 4 * (spec.shape[-1] - 1) if not center else 40
    np.testing.assert_allclose(back.numpy()[:, :kept], x[:, :kept], atol=1e-12)


def test_istft_without_window_warns_and_uses_a_rectangle():
    x = RNG.standard_normal(20)
    spec = ref_stft(x, 8, 2, np.ones(8), True, "reflect", False, True)
    with pytest.warns(UserWarning, match="provide the same window used by stft"):
        got = flambeau.istft(t(spec), 8)
    np.testing.assert_allclose(got.numpy(), x, atol=1e-12)


def test_round_trip_of_complex_signal_and_method_forms():
    z = RNG.standard_normal(30) + 1j * RNG.standard_normal(30)
    w = flambeau.hann_window(8, dtype=flambeau.float64)
    spec = t(z).stft(8, 2, window=w)
    back = spec.istft(8, 2, window=w, return_complex=True, length=30)
    assert back.dtype == flambeau.complex128
    np.testing.assert_allclose(back.numpy(), z, atol=1e-12)
    # return_complex=False keeps the real signal of the half spectrum
    real = flambeau.istft(spec, 8, 2, window=w, length=30)
    half = flambeau.istft(spec[: 8 // 2 + 1], 8, 2, window=w, length=30)
    np.testing.assert_allclose(real.numpy(), half.numpy(), atol=1e-12)


def test_istft_pads_a_long_length_with_a_warning():
    spec = flambeau.stft(flambeau.ones(20), 8, window=W8, return_complex=True)
    with pytest.warns(UserWarning, match="padded with zeros"):
        y = flambeau.istft(spec, 8, window=W8, length=25)
    # 8 + 2 * 10 samples overlap-add, of which the first 4 are centring: 24 are known
    assert tuple(y.shape) == (25,) and y[24].item() == 0


SPEC = flambeau.stft(X, 8, window=W8, return_complex=True)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: flambeau.istft(SPEC.real, 8, window=W8), "complex-valued input"),
        (lambda: flambeau.istft(flambeau.view_as_real(SPEC), 8, window=W8), "complex-valued"),
        (lambda: flambeau.istft(SPEC[0], 8, window=W8), "2 .* or 3 .* dimensions"),
        (lambda: flambeau.istft(SPEC[:, :0], 8, window=W8), "cannot be empty"),
        (lambda: flambeau.istft(SPEC, 8, 9, window=W8), "0 < hop_length <= win_length"),
        (lambda: flambeau.istft(SPEC, 8, win_length=9), "0 < win_length <= n_fft"),
        (lambda: flambeau.istft(SPEC, 8, window=flambeau.ones(7)), "Invalid window shape"),
        (lambda: flambeau.istft(SPEC, 10, window=W8), "frequency dimension"),
        (lambda: flambeau.istft(SPEC, 8, window=W8, onesided=False), "match n_fft when"),
        (lambda: flambeau.istft(SPEC, 8, window=flambeau.zeros(8)), "window overlap add min"),
        (lambda: flambeau.istft(SPEC, 8, window=W8, center=False), "window overlap add min"),
        (lambda: flambeau.istft(SPEC, 8, window=W8, return_complex=True), "onesided output"),
        (
            lambda: flambeau.istft(SPEC, 8, window=W8.to(flambeau.complex64)),
            "Complex windows are incompatible with return_complex=False",
        ),
    ],
)
def test_istft_errors(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()
