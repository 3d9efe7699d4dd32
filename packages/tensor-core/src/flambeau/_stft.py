"""The short-time Fourier transform and its inverse (torch.stft, torch.istft, and
their Tensor methods).

Both are composed of table operators (pad, unfold, the flambeau.fft transforms,
index_add), so autograd records them piece by piece: gradients reach the input
and the window alike. Checks and messages follow PyTorch's.
"""

from __future__ import annotations

import warnings

from flambeau import _C
from flambeau._autocast_policy import autocast_policy
from flambeau.overrides import _dispatch_on

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_signal(x, pad, mode):
    """x (..., L) padded by `pad` at both ends of its last dim, as torch.stft's centring:
    viewed with three dims for pad's batched (N, C, L) form."""
    shape = tuple(x.shape)
    x3 = x.reshape((1,) * (3 - x.dim()) + shape) if x.dim() < 3 else x
    if x.is_complex() and mode != "constant":  # pad's other modes take real input
        padded = _C.complex(_C.pad(x3.real, [pad, pad], mode), _C.pad(x3.imag, [pad, pad], mode))
    else:
        padded = _C.pad(x3, [pad, pad], mode)
    return padded.reshape(shape[:-1] + (shape[-1] + 2 * pad,))


def _centred(window, win_length, n_fft):
    """The window of win_length zero-padded on both sides to n_fft (left: the floor half)."""
    left = (n_fft - win_length) // 2
    return _C.constant_pad_nd(window, [left, n_fft - win_length - left])


def _rectangular(n, like, advice, stacklevel=4):
    """The window stft and istft use when given none, with PyTorch's warning (stacklevel:
    the caller's frame, above the function and the wrappers it is called through)."""
    warnings.warn(
        f"A window was not provided. A rectangular window will be applied. {advice} To "
        "suppress this warning and use a rectangular window, explicitly set "
        "`window=flambeau.ones(n_fft)`.",
        UserWarning,
        stacklevel=stacklevel,
    )
    real = like.real.dtype if like.is_complex() else like.dtype
    return _C.ones(n, dtype=real, device=like.device)


def _check_window(window, win_length, op, message):
    if window is not None and (window.dim() != 1 or window.shape[0] != win_length):
        raise RuntimeError(f"{op}: {message}, but got window with size {list(window.shape)}")


@_dispatch_on("input")
@autocast_policy("fp32")
def stft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    pad_mode="reflect",
    normalized=False,
    onesided=None,
    return_complex=None,
    align_to_window=None,
):
    """Short-time Fourier transform: the FFT of windowed frames of input (L,) or (B, L).

    Returns (B?, N, T) complex, N = n_fft // 2 + 1 when onesided (else n_fft) and
    T = 1 + L // hop_length when center (else 1 + (L - n_fft) // hop_length); with
    return_complex=False, its view_as_real (B?, N, T, 2), as PyTorch (deprecated).

    >>> x, window = flambeau.arange(16.0), flambeau.hann_window(8)
    >>> spec = flambeau.stft(x, 8, hop_length=4, window=window, return_complex=True)
    >>> spec.shape, spec.dtype
    (flambeau.Size([5, 5]), flambeau.complex64)
    >>> spec[0, :3].real
    tensor([ 4.5858, 16.0000, 32.0000])
    """
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError("stft: expected a tensor of floating point or complex values")
    if center:
        if pad_mode not in _PAD_MODES:
            raise NotImplementedError(f"Unrecognised padding mode {pad_mode}")
        input = _pad_signal(input, n_fft // 2, pad_mode)
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.dim()}D")
    complex_in = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        if not complex_in:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release."
            )
        return_complex = True
    elif not return_complex:
        warnings.warn(
            "stft with return_complex=False is deprecated. In a future release, stft will "
            "return complex tensors for all inputs, and return_complex=False will raise an "
            "error. Note: you can still call flambeau.view_as_real on the complex output to "
            "recover the old return format.",
            UserWarning,
            stacklevel=4,
        )
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    length = input.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop_length}")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(
            f"stft: expected 0 < win_length <= n_fft, but got win_length={win_length}"
        )
    _check_window(
        window,
        win_length,
        "stft",
        f"expected a 1D window tensor of size equal to win_length={win_length}",
    )
    if onesided is None:
        onesided = not complex_in
    elif onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if window is None:
        window = _rectangular(
            win_length,
            input,
            "A rectangular window is known to cause spectral leakage; flambeau.hann_window or "
            "flambeau.hamming_window are recommended.",
            stacklevel=5,  # stft runs under its dispatching and autocast wrappers
        )
    if align_to_window and win_length < n_fft:
        # Frames start where their window starts: the window's zero margins lie outside
        # the signal, so the signal is padded by them.
        input = _centred(input, length, length + n_fft - win_length)
    frames = input.unfold(-1, n_fft, hop_length) * _centred(window, win_length, n_fft)
    norm = "ortho" if normalized else "backward"
    spectrum = (_C.fft_rfft if onesided else _C.fft_fft)(frames, dim=-1, norm=norm)
    spectrum = spectrum.transpose(-1, -2)
    return spectrum if return_complex else _C.view_as_real(spectrum)


def _overlap_add(frames, hop_length, total):
    """Sums frames (..., T, n) into a signal (..., total), frame t starting at t * hop."""
    n_frames, n = frames.shape[-2], frames.shape[-1]
    starts = _C.arange(n_frames, device=frames.device) * hop_length
    index = (starts.unsqueeze(1) + _C.arange(n, device=frames.device)).reshape(-1)
    lead = tuple(frames.shape[:-2])
    signal = _C.zeros(lead + (total,), dtype=frames.dtype, device=frames.device)
    return _C.index_add(signal, -1, index, frames.reshape(lead + (n_frames * n,)))


@_dispatch_on("input", "window")
def istft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    normalized=False,
    onesided=None,
    length=None,
    return_complex=False,
):
    """Inverse short-time Fourier transform: the least-squares signal whose stft is
    input (B?, N, T), by overlap-adding the windowed inverse FFTs of its frames and
    dividing by the overlap-added squared window (which must not vanish: NOLA).

    >>> x = flambeau.sin(flambeau.arange(32.0))
    >>> window = flambeau.hann_window(8)
    >>> spec = flambeau.stft(x, 8, hop_length=2, window=window, return_complex=True)
    >>> y = flambeau.istft(spec, 8, hop_length=2, window=window, length=32)
    >>> flambeau.allclose(x, y, atol=1e-5)
    True
    """
    op = "istft"
    if not isinstance(input, _C.Tensor) or not input.is_complex():
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft with "
            "return_complex=True."
        )
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"{op}: expected a complex tensor of 2 (N, T) or 3 (B, N, T) dimensions, but got "
            f"{input.dim()}"
        )
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    fft_size, n_frames = input.shape[-2], input.shape[-1]
    if input.numel() == 0:
        raise RuntimeError(f"{op}: input tensor cannot be empty.")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{op}: expected 0 < win_length <= n_fft, but got {win_length}")
    if not 0 < hop_length <= win_length:
        raise RuntimeError(f"{op}: expected 0 < hop_length <= win_length, but got {hop_length}")
    if onesided is None:
        onesided = fft_size != n_fft
    expected = n_fft // 2 + 1 if onesided else n_fft
    if fft_size != expected:
        raise RuntimeError(
            f"{op}: expected the frequency dimension (3rd to the last) of the input tensor to "
            f"match {'n_fft / 2 + 1' if onesided else 'n_fft'} when onesided={onesided}, but "
            f"got {fft_size}"
        )
    _check_window(
        window,
        win_length,
        op,
        "Invalid window shape. window has to be 1D and length of `win_length`",
    )
    if window is None:
        window = _rectangular(
            win_length,
            input,
            "Please provide the same window used by stft to make the inversion lossless.",
        )
    window = _centred(window, win_length, n_fft)

    spectra = input.transpose(-1, -2)  # (B?, T, N)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = _C.fft_ifft(spectra, dim=-1, norm=norm)
    else:
        if window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            spectra = spectra.narrow(-1, 0, n_fft // 2 + 1)
        frames = _C.fft_irfft(spectra, n=n_fft, dim=-1, norm=norm)

    total = n_fft + hop_length * (n_frames - 1)
    signal = _overlap_add(frames * window, hop_length, total)
    envelope = _overlap_add((window * window).expand(n_frames, n_fft), hop_length, total)

    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = total - n_fft // 2 if center else total
    stop = min(end, total)
    signal = signal.narrow(-1, start, max(stop - start, 0))
    envelope = envelope.narrow(-1, start, max(stop - start, 0))
    if envelope.numel() and envelope.abs().min().item() < 1e-11:
        raise RuntimeError(
            f"{op}: window overlap add min: {envelope.abs().min().item():g}: the squared window, "
            "overlap-added, must not vanish anywhere (NOLA)"
        )
    signal = signal / envelope
    if end > total:
        warnings.warn(
            "The length of signal is shorter than the length parameter. Result is being padded "
            "with zeros in the tail. Please check your center and hop_length settings.",
            UserWarning,
            stacklevel=3,
        )
        signal = _C.constant_pad_nd(signal, [0, end - total])
    return signal


def install():
    _C.Tensor.stft = stft
    _C.Tensor.istft = istft
