"""Inputs for the GPU kernel tests: seeded samples of every dtype, with NaN and ties
where they matter, and the views (transposed, sliced, broadcast) kernels must walk."""

from __future__ import annotations

import flambeau

DEVICE = "cuda"

FLOATS = [flambeau.float32, flambeau.float64, flambeau.float16, flambeau.bfloat16]
INTS = [flambeau.uint8, flambeau.int8, flambeau.int16, flambeau.int32, flambeau.int64]
REALS = FLOATS + INTS


def sample(dtype, shape=(7, 5, 3), seed=1, scale=4.0, nan=False):
    """Seeded values of `dtype`: normal * scale, rounded for integers (uint8: absolute
    values), bool from the sign; with `nan`, a few NaN in floating samples."""
    g = flambeau.Generator().manual_seed(seed)
    x = flambeau.randn(shape, generator=g) * scale
    if dtype == flambeau.bool:
        return x > 0
    if not dtype.is_floating_point:
        x = x.round()
        if dtype == flambeau.uint8:
            x = x.abs()
        return x.to(dtype)
    x = x.to(dtype)
    if nan and x.numel() > 3:
        flat = x.reshape(-1)
        flat[:: max(x.numel() // 3, 1)] = float("nan")
    return x


def views(x):
    """(name, view of x) pairs: x itself, transposed, every other element of the last
    dim, and a broadcast of its first row (for rank >= 2)."""
    out = [("dense", x)]
    if x.dim() >= 2:
        out.append(("transposed", x.transpose(0, 1)))
        out.append(("broadcast", x[:1].expand(x.shape)))
    if x.dim() >= 1 and x.shape[-1] > 1:
        out.append(("sliced", x[..., ::2]))
    return out


def tolerance(dtype):
    """(rtol, atol) for a result of `dtype` computed on another device."""
    if dtype == flambeau.float16:
        return 2e-3, 2e-3
    if dtype == flambeau.bfloat16:
        return 1.6e-2, 1.6e-2
    if dtype == flambeau.float32:
        return 2e-5, 2e-5
    return 1e-12, 1e-12


def assert_close(got, want, rtol=None, atol=None):
    """got (any device) equals want (CPU): same dtype and shape, values within the
    dtype's tolerance (exactly for integers and bool), NaN where want has NaN."""
    got = got.cpu()
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    if not want.dtype.is_floating_point:
        assert flambeau.equal(got, want), (got, want)
        return
    default_rtol, default_atol = tolerance(want.dtype)
    ok = flambeau.isclose(
        got.double(),
        want.double(),
        rtol=default_rtol if rtol is None else rtol,
        atol=default_atol if atol is None else atol,
        equal_nan=True,
    )
    assert bool(ok.all()), (got[~ok][:5], want[~ok][:5])


# The float functions the package's unary kernel computes.
UNARY_FLOAT = [
    "exp",
    "exp2",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "sigmoid",
    "erf",
    "erfc",
    "reciprocal",
    "frac",
]
