"""Formulas of the FFT operators (tensor-core's ops/fft.yaml).

Every transform is linear, so its gradient is its adjoint applied to the output's
gradient. The three primitives' adjoints are PyTorch's:

- _fft_c2c: the transform in the other direction with the same normalization;
- _fft_r2c: the onesided half spectrum zero-padded to the full one, the c2c
  backward transform, and its real part (the input is real);
- _fft_c2r: the r2c transform of the gradient, with the interior frequencies,
  which stand for their conjugate mirror images too, doubled.

A public function (fft_rfft2, ...) crops or zero-pads its input to the signal
sizes, maybe conjugates (hfft, ihfft), and runs a primitive: its gradient is the
primitive's adjoint, conjugated back, cropped or zero-padded to the input's
sizes (the adjoint of cropping is zero-padding, and the other way round).
"""

from __future__ import annotations

import flambeau as F

from .registry import formula, nondifferentiable

# Normalizations (aten's fft_norm_mode): none, by 1/sqrt(n), by 1/n.
_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2


def _resize(t, dims, sizes):
    """t cropped or zero-padded at the end of each dims[i] to sizes[i]."""
    pad = [0] * (2 * t.dim())
    for d, size in zip(dims, sizes):
        pad[2 * (t.dim() - 1 - d) + 1] = size - t.shape[d]
    return F.constant_pad_nd(t, pad) if any(pad) else t


def _c2c_adjoint(g, dims, normalization, forward):
    return F._fft_c2c(g, dims, normalization, not forward)


def _r2c_adjoint(g, dims, normalization, onesided, last_size):
    """last_size: the signal's size along dims[-1] (the full spectrum's)."""
    if onesided:
        g = _resize(g, dims[-1:], [last_size])
    return F._fft_c2c(g, dims, normalization, False).real


def _c2r_adjoint(g, dims, normalization, last_dim_size):
    gi = F._fft_r2c(g, dims, normalization, True)
    last = dims[-1]
    half = gi.shape[last]
    interior = last_dim_size - half  # bins 1 .. interior have a mirror image
    if interior > 0:
        weights = [1.0] + [2.0] * interior + [1.0] * (half - 1 - interior)
        shape = [1] * gi.dim()
        shape[last] = half
        gi = gi * F.tensor(weights, dtype=g.dtype).reshape(shape)
    return gi


def _wrapped(dims, ndim):
    return [d % ndim for d in dims]


@formula("_fft_c2c", needs_input=False)
def _fft_c2c(g, a):
    dims = _wrapped(a["dim"], a["self"].dim())
    return {"self": _c2c_adjoint(g, dims, a["normalization"], a["forward"])}


@formula("_fft_r2c", needs_input=False)
def _fft_r2c(g, a):
    x = a["self"]
    dims = _wrapped(a["dim"], x.dim())
    return {"self": _r2c_adjoint(g, dims, a["normalization"], a["onesided"], x.shape[dims[-1]])}


@formula("_fft_c2r", needs_input=False)
def _fft_c2r(g, a):
    dims = _wrapped(a["dim"], a["self"].dim())
    return {"self": _c2r_adjoint(g, dims, a["normalization"], a["last_dim_size"])}


# ---- the public functions ----------------------------------------------------


def _as_list(v):
    return [v] if isinstance(v, int) else list(v)


def _dims(a, ndim):
    """The dims a public function transformed, as its frontend picks them."""
    if "n" in a:  # fft, rfft, ...: one dim
        return [a["dim"] % ndim]
    dim, s = a["dim"], a["s"]
    if dim is not None:
        return _wrapped(_as_list(dim), ndim)
    if s is not None:
        return list(range(ndim - len(_as_list(s)), ndim))
    return list(range(ndim))


def _normalization(norm, forward):
    """As the frontends map norm: "backward" (the default) leaves forward transforms
    unscaled and scales the others by 1/n; "forward" the other way round."""
    if norm == "ortho":
        return _BY_ROOT_N
    scaled = norm == "forward" if forward else norm in (None, "backward")
    return _BY_N if scaled else _NONE


def _last_signal_size(a, x, last, half_spectrum):
    """The signal's size along the last transformed dim: n or s[-1] when given (not
    -1), else the input's size, or 2 * (size - 1) when the input is a half spectrum."""
    n = a["n"] if "n" in a else (None if a["s"] is None else _as_list(a["s"])[-1])
    if n not in (None, -1):
        return n
    return 2 * (x.shape[last] - 1) if half_spectrum else x.shape[last]


def _c2c_public(forward):
    def backward(g, a):
        x = a["input"]
        dims = _dims(a, x.dim())
        gi = _c2c_adjoint(g, dims, _normalization(a["norm"], forward), forward)
        return {"input": _resize(gi, dims, [x.shape[d] for d in dims])}

    return backward


def _r2c_public(forward, conjugated):
    def backward(g, a):
        x = a["input"]
        dims = _dims(a, x.dim())
        if conjugated:
            g = g.conj()
        size = _last_signal_size(a, x, dims[-1], False)
        gi = _r2c_adjoint(g, dims, _normalization(a["norm"], forward), True, size)
        return {"input": _resize(gi, dims, [x.shape[d] for d in dims])}

    return backward


def _c2r_public(forward, conjugated):
    def backward(g, a):
        x = a["input"]
        dims = _dims(a, x.dim())
        last_dim_size = _last_signal_size(a, x, dims[-1], True)
        gi = _c2r_adjoint(g, dims, _normalization(a["norm"], forward), last_dim_size)
        if conjugated:
            gi = gi.conj()
        return {"input": _resize(gi, dims, [x.shape[d] for d in dims])}

    return backward


for _suffix in ("", "2", "n"):
    formula(f"fft_fft{_suffix}", needs_input=False)(_c2c_public(True))
    formula(f"fft_ifft{_suffix}", needs_input=False)(_c2c_public(False))
    formula(f"fft_rfft{_suffix}", needs_input=False)(_r2c_public(True, False))
    formula(f"fft_ihfft{_suffix}", needs_input=False)(_r2c_public(False, True))
    formula(f"fft_irfft{_suffix}", needs_input=False)(_c2r_public(False, False))
    formula(f"fft_hfft{_suffix}", needs_input=False)(_c2r_public(True, True))

# Window functions make new tensors, as zeros does.
nondifferentiable(
    "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"
)
