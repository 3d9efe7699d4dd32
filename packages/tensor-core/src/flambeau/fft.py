"""flambeau.fft: PyTorch's ``torch.fft`` functions.

The transforms are core operators declared in ``ops/fft.yaml`` under their aten
names (``fft_fft``), bound in ``flambeau._C`` under that name, and re-exported
here under PyTorch's (``flambeau.fft.fft``). The helpers fftfreq, rfftfreq,
fftshift and ifftshift are composed here of other operators (arange, roll).
"""

# ruff: noqa: I001  (the re-exports read as one table, in PyTorch's names)
from __future__ import annotations

import math

from flambeau import _C
from flambeau.overrides import _dispatch_on
from flambeau._C import (
    fft_fft as fft,
    fft_fft2 as fft2,
    fft_fftn as fftn,
    fft_hfft as hfft,
    fft_hfft2 as hfft2,
    fft_hfftn as hfftn,
    fft_ifft as ifft,
    fft_ifft2 as ifft2,
    fft_ifftn as ifftn,
    fft_ihfft as ihfft,
    fft_ihfft2 as ihfft2,
    fft_ihfftn as ihfftn,
    fft_irfft as irfft,
    fft_irfft2 as irfft2,
    fft_irfftn as irfftn,
    fft_rfft as rfft,
    fft_rfft2 as rfft2,
    fft_rfftn as rfftn,
)

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "hfft2",
    "hfftn",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "ihfft2",
    "ihfftn",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]


def _frequencies(name, n, d, count, out, dtype, layout, device, requires_grad):
    """k / (d * n) for k = 0 .. count-1, the upper half of fftfreq's k wrapped to negative."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(
            f"fft_{name}(): argument 'n' (position 1) must be int, not {type(n).__name__}"
        )
    if layout is not None and str(layout) not in ("strided", "torch.strided", "flambeau.strided"):
        raise RuntimeError(f"{name}: only the strided layout is supported, got {layout}")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if dtype is None:
        dtype = out.dtype if out is not None else _C.get_default_dtype()
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    # Computed in the (real) dtype itself, as PyTorch: k, then k times 1 / (n d).
    real = {_C.complex64: _C.float32, _C.complex128: _C.float64}.get(dtype, dtype)
    k = _C.arange(count, dtype=real, device=device)
    if name == "fftfreq":
        k[(n + 1) // 2 :] -= n
    nd = n * float(d)
    scale = 1.0 / nd if nd != 0 else math.copysign(math.inf, nd)
    if out is not None:
        result = _C.mul(k, scale, out=out)  # resizes out as any out= does
    else:
        result = (k * scale).to(dtype)
    if requires_grad:
        result.requires_grad_(True)
    return result


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of fft(x) for a signal of size n and sample spacing d:
    [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n).

    >>> flambeau.fft.fftfreq(5)
    tensor([ 0.0000,  0.2000,  0.4000, -0.4000, -0.2000])
    """
    return _frequencies("fftfreq", n, d, n, out, dtype, layout, device, requires_grad)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of rfft(x) for a signal of size n and sample spacing d:
    [0, 1, ..., n // 2] / (d * n).

    >>> flambeau.fft.rfftfreq(6)
    tensor([0.0000, 0.1667, 0.3333, 0.5000])
    """
    count = n // 2 + 1 if isinstance(n, int) and n >= 0 else n
    return _frequencies("rfftfreq", n, d, count, out, dtype, layout, device, requires_grad)


def _shift(input, dim, sign):
    if dim is None:
        dim = tuple(range(input.dim()))
    elif isinstance(dim, int):
        dim = (dim,)
    dim = tuple(dim)
    shifts = []
    for d in dim:
        if input.dim() == 0:
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        size = input.size(d)
        shifts.append(size // 2 if sign > 0 else -(size // 2))
    if not dim:
        raise RuntimeError("`shifts` required")
    return _C.roll(input, shifts, dim)


@_dispatch_on("input", name="fft_fftshift")
def fftshift(input, dim=None):
    """Moves the zero-frequency term of an fftn's output to the centre of dim (all
    dims by default): a roll by size // 2.

    >>> flambeau.fft.fftshift(flambeau.fft.fftfreq(5))
    tensor([-0.4000, -0.2000,  0.0000,  0.2000,  0.4000])
    """
    return _shift(input, dim, 1)


@_dispatch_on("input", name="fft_ifftshift")
def ifftshift(input, dim=None):
    """The inverse of fftshift: a roll by -(size // 2).

    >>> x = flambeau.arange(5)
    >>> flambeau.fft.fftshift(x)
    tensor([3, 4, 0, 1, 2])
    >>> flambeau.fft.ifftshift(flambeau.fft.fftshift(x))
    tensor([0, 1, 2, 3, 4])
    """
    return _shift(input, dim, -1)
