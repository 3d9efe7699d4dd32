"""Formulas of the special functions (the core's ops/special.yaml).

As in PyTorch: the Bessel functions of torch.special and the orthogonal
polynomials are not differentiable (their results never require grad), and zeta,
igamma and igammac have a derivative in their second argument only (asking for
the first raises).
"""

from __future__ import annotations

import math

import flambeau as F

from .complex import conj
from .helpers import needs_grad
from .registry import formula, nondifferentiable

nondifferentiable(
    "special_airy_ai",
    "special_bessel_j0",
    "special_bessel_j1",
    "special_bessel_y0",
    "special_bessel_y1",
    "special_modified_bessel_i0",
    "special_modified_bessel_i1",
    "special_modified_bessel_k0",
    "special_modified_bessel_k1",
    "special_scaled_modified_bessel_k0",
    "special_scaled_modified_bessel_k1",
    "special_spherical_bessel_j0",
    "special_chebyshev_polynomial_t",
    "special_chebyshev_polynomial_u",
    "special_chebyshev_polynomial_v",
    "special_chebyshev_polynomial_w",
    "special_shifted_chebyshev_polynomial_t",
    "special_shifted_chebyshev_polynomial_u",
    "special_shifted_chebyshev_polynomial_v",
    "special_shifted_chebyshev_polynomial_w",
    "special_hermite_polynomial_h",
    "special_hermite_polynomial_he",
    "special_laguerre_polynomial_l",
    "special_legendre_polynomial_p",
)

_SQRT_2PI = math.sqrt(2 * math.pi)


def _nonzero(x):
    """x with its zeros replaced by 1: a safe divisor where the formula's x = 0 branch
    is taken from elsewhere (keeps NaN out of the double backward)."""
    return F.where(x == 0, F.ones_like(x), x)


def _as_tensor(v, like):
    return v if isinstance(v, F.Tensor) else F.full((), v, dtype=like.dtype)


def _no_derivative(op: str, a):
    if needs_grad(a["input"]):
        raise NotImplementedError(f"the derivative for '{op}' is not implemented.")


@formula("i0")
def _i0(g, a):
    return {"input": g * F.special.i1(a["input"])}


@formula("special_i1")
def _i1(g, a):
    # I1' = I0 - I1 / x, 1/2 at 0.
    x = a["input"]
    xs = _nonzero(x)
    return {"input": g * F.where(x == 0, 0.5, F.i0(x) - F.special.i1(xs) / xs)}


@formula("special_i0e", needs_result=True)
def _i0e(g, a):
    x = a["input"]
    return {"input": g * (F.special.i1e(x) - F.sgn(x) * a["result"])}


@formula("special_i1e")
def _i1e(g, a):
    # (e^-|x| I1)' = i0e - i1e (sgn(x) + 1/x), 1/2 at 0.
    x = a["input"]
    xs = _nonzero(x)
    slope = F.special.i0e(x) - F.special.i1e(xs) * (F.sgn(x) + 1 / xs)
    return {"input": g * F.where(x == 0, 0.5, slope)}


@formula("special_entr")
def _entr(g, a):
    return {"input": -g * (1 + F.log(a["input"]))}


@formula("special_erfcx", needs_result=True)
def _erfcx(g, a):
    return {"input": g * (2 * a["input"] * a["result"] - 2 / math.sqrt(math.pi))}


@formula("special_ndtr")
def _ndtr(g, a):
    x = a["input"]
    return {"input": g * F.exp(-0.5 * x * x) / _SQRT_2PI}


@formula("special_ndtri", needs_input=False, needs_result=True)
def _ndtri(g, a):
    r = a["result"]
    return {"input": g * _SQRT_2PI * F.exp(0.5 * r * r)}


@formula("special_log_ndtr", needs_result=True)
def _log_ndtr(g, a):
    x = a["input"]
    return {"input": g * F.exp(-(a["result"] + 0.5 * x * x)) / _SQRT_2PI}


def _xlog_formula(log_fn, pole):
    """xlogy (pole 0) and xlog1py (pole -1): d/dx = log_fn(y), 0 where x == 0 and y is at
    or below the pole; d/dy = x / (y - pole)."""

    def fn(g, a):
        x, y = a["input"], a["other"]
        out = {}
        if needs_grad(x):
            yt = _as_tensor(y, g)
            slope = log_fn(g, yt)
            out["input"] = F.where((x == 0) & (yt <= pole), F.zeros_like(slope), slope)
        if needs_grad(y):
            out["other"] = g * x / (y - pole)
        return out

    return fn


formula("xlogy")(_xlog_formula(F.xlogy, 0.0))
formula("special_xlog1py")(_xlog_formula(lambda g, y: F.special.xlog1py(g, y), -1.0))


@formula("special_zeta")
def _zeta(g, a):
    _no_derivative("zeta", a)
    if not needs_grad(a["other"]):
        return {}
    s = _as_tensor(a["input"], g)
    return {"other": -g * s * F.special.zeta(s + 1, a["other"])}


def _igamma_slope(a):
    """d/dx P(s, x) = x^(s-1) e^-x / Gamma(s)."""
    x = a["other"]
    s = _as_tensor(a["input"], x)
    return F.exp((s - 1) * F.log(x) - x - F.lgamma(s))


@formula("igamma")
def _igamma(g, a):
    _no_derivative("igamma: input", a)
    return {"other": g * _igamma_slope(a)} if needs_grad(a["other"]) else {}


@formula("igammac")
def _igammac(g, a):
    _no_derivative("igammac: input", a)
    return {"other": -g * _igamma_slope(a)} if needs_grad(a["other"]) else {}


@formula("sinc")
def _sinc(g, a):
    # (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at 0.
    x = a["input"]
    xs = _nonzero(x)
    px = math.pi * xs
    slope = (px * F.cos(px) - F.sin(px)) / (px * xs)
    return {"input": g * conj(F.where(x == 0, F.zeros_like(slope), slope))}


@formula("mvlgamma")
def _mvlgamma(g, a):
    x, p = a["input"], a["p"]
    return {"input": g * sum(F.digamma(x - i / 2) for i in range(p))}
