"""Formulas of the core's ops/pointwise_numeric.yaml: gcd, lcm and signbit have integer
or bool results; heaviside has no derivative (PyTorch raises); nextafter is the identity
in its first argument; frexp differentiates its mantissa."""

from __future__ import annotations

import math

import flambeau as F

from .complex import conj
from .helpers import needs_grad
from .registry import formula, nondifferentiable

nondifferentiable("gcd", "lcm", "signbit")


@formula("heaviside", needs_input=False)
def _heaviside(g, a):
    raise RuntimeError("the derivative for 'heaviside' is not implemented")


@formula("nextafter", needs_input=False)
def _nextafter(g, a):
    return {"input": g, "other": g * 0}


@formula("ldexp")
def _ldexp(g, a):
    # input * 2^other: d/dinput = 2^other, d/dother = input * 2^other * log(2).
    x, e = a["input"], a["other"]
    if isinstance(e, F.Tensor):
        # An integer exponent in float64: in the default float32, 2^128 would overflow.
        scale = F.exp2(e if e.is_floating_point() or e.is_complex() else e.double())
    else:
        scale = 2.0**e
    out = {"input": g * conj(scale)}
    if needs_grad(e):
        out["other"] = g * conj(x * scale * math.log(2.0))
    return out


@formula("frexp", needs_input=False, needs_result=(1,), differentiable_outputs=(True, False))
def _frexp(g, a):
    # mantissa = input / 2^exponent, the exponent piecewise constant.
    gm = g[0] if isinstance(g, tuple) else g
    if gm is None:
        return {}
    return {"input": gm / F.exp2(a["results"][1])}


@formula("float_power")
def _float_power(g, a):
    # pow's derivatives, on the operands as float_power computes them (float64 or
    # complex128: g's dtype).
    x, e = a["input"], a["exponent"]
    xd = x.to(g.dtype) if isinstance(x, F.Tensor) else F.full((), x, dtype=g.dtype)
    ed = e.to(g.dtype) if isinstance(e, F.Tensor) else e
    out = {}
    if isinstance(x, F.Tensor):
        out["input"] = (
            g * 0 if not isinstance(e, F.Tensor) and e == 0 else g * conj(ed * xd.pow(ed - 1))
        )
    if needs_grad(e):
        # 0 ** e has zero slope in e where e >= 0 (log(0) would give nan there).
        nonneg = ed.real >= 0 if ed.is_complex() else ed >= 0
        slope = F.where((xd == 0) & nonneg, 0, F.log(xd))
        out["exponent"] = g * conj(xd.pow(ed) * slope)
    return out


@formula("deg2rad", needs_input=False)
def _deg2rad(g, a):
    return {"input": g * (math.pi / 180.0)}


@formula("rad2deg", needs_input=False)
def _rad2deg(g, a):
    return {"input": g * (180.0 / math.pi)}
