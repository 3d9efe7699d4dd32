"""Formulas of pointwise operators."""

from __future__ import annotations

import math

import flambeau as F
from flambeau import _C

from .complex import conj
from .helpers import first_name, needs_grad
from .registry import formula

native = _C._autograd_native_formula

# reads=: the arguments whose values each gradient reads (registry.Formula.reads); a call
# keeps only those of its wanted gradients. The arithmetic operators' formulas are
# compiled in the core (csrc/python/autograd_formulas_pointwise.cpp), where the engine
# runs them without a Python frame: add's gradients are g and g * conj(alpha); sub's
# g and -g * conj(alpha); rsub's the reverse; mul's g * conj(other) and g * conj(input);
# div's g / conj(other) and -g * conj(input / other**2) (none with a rounding mode);
# neg's -g.
_ADD_READS = {"input": (), "other": ("alpha",)}
_DIV_READS = {"input": ("other",), "other": ("input", "other")}

formula("add", needs_input=False, reads=_ADD_READS)(native("add"))
formula("sub", needs_input=False, reads=_ADD_READS)(native("sub"))
formula("rsub", needs_input=False, reads={"input": ("alpha",), "other": ()})(native("rsub"))
formula("mul", reads={"input": ("other",), "other": ("input",)})(native("mul"))
formula(
    "div",
    reads={k: (*v, "rounding_mode") for k, v in _DIV_READS.items()},
)(native("div"))
formula("true_divide", reads=_DIV_READS)(native("true_divide"))
formula("neg", needs_input=False, reads={"input": ()})(native("neg"))
formula("negative", needs_input=False, reads={"input": ()})(native("negative"))


def _mod(rounding_mode):
    """fmod (the quotient rounded toward zero) and remainder (toward -inf), a - q * b: the
    quotient is piecewise constant, so the gradients are g and -q * g."""

    def fn(g, a):
        x, y = a["input"], a["other"]
        if not isinstance(y, F.Tensor):
            return {"input": g}
        return {"input": g, "other": -g * F.div(x, y, rounding_mode=rounding_mode)}

    return fn


formula("fmod")(_mod("trunc"))
formula("remainder")(_mod("floor"))


@formula("positive", "clone", "contiguous", needs_input=False, reads={"input": (), "self": ()})
def _identity(g, a):
    return {first_name(a): g}


@formula("pow", reads={"input": ("input", "exponent"), "exponent": ("input", "exponent")})
def _pow(g, a):
    x, e = a["input"], a["exponent"]
    out = {}
    if isinstance(e, F.Tensor):
        if isinstance(x, F.Tensor):
            out["input"] = g * conj(e * x.pow(e - 1))
        else:  # a number raised to a tensor (pow(2.0, t))
            x = F.full((), x, dtype=g.dtype)
        if needs_grad(e):
            # 0 ** e has zero slope in e where e >= 0 (log(0) would give nan there). x ** e
            # is recomputed: x ** 2 saves no output (pow's overloads share one formula).
            slope = F.where((x == 0) & (e.real >= 0 if e.is_complex() else e >= 0), 0, F.log(x))
            out["exponent"] = g * conj(x.pow(e) * slope)
    elif e == 0:
        out["input"] = g * 0
    else:
        out["input"] = g * conj(e * x.pow(e - 1))
    return out


@formula("exp", needs_result=True, reads={"input": ()})
def _exp(g, a):
    return {"input": g * conj(a["result"])}


@formula("exp2", needs_result=True)
def _exp2(g, a):
    return {"input": g * conj(a["result"]) * math.log(2.0)}


@formula("expm1", needs_result=True)
def _expm1(g, a):
    return {"input": g * conj(a["result"] + 1)}


@formula("log", reads={"input": ("input",)})
def _log(g, a):
    return {"input": g / conj(a["input"])}


@formula("log2")
def _log2(g, a):
    return {"input": g / (conj(a["input"]) * math.log(2.0))}


@formula("log10")
def _log10(g, a):
    return {"input": g / (conj(a["input"]) * math.log(10.0))}


@formula("log1p")
def _log1p(g, a):
    return {"input": g / conj(a["input"] + 1)}


@formula("sqrt", needs_result=True, reads={"input": ()})
def _sqrt(g, a):
    return {"input": g / (2 * conj(a["result"]))}


@formula("rsqrt", needs_result=True, reads={"input": ()})
def _rsqrt(g, a):
    r = a["result"]
    return {"input": -0.5 * g * conj(r * r * r)}


@formula("square")
def _square(g, a):
    return {"input": 2 * g * conj(a["input"])}


@formula("reciprocal", needs_result=True)
def _reciprocal(g, a):
    r = a["result"]
    return {"input": -g * conj(r * r)}


@formula("abs", "absolute")
def _abs(g, a):
    return {"input": g * F.sgn(a["input"])}


@formula("sin", reads={"input": ("input",)})
def _sin(g, a):
    return {"input": g * conj(F.cos(a["input"]))}


@formula("cos", reads={"input": ("input",)})
def _cos(g, a):
    return {"input": -g * conj(F.sin(a["input"]))}


@formula("tan", needs_result=True)
def _tan(g, a):
    r = a["result"]
    return {"input": g * conj(1 + r * r)}


@formula("asin", "arcsin")
def _asin(g, a):
    x = a["input"]
    return {"input": g / conj(F.sqrt(1 - x * x))}


@formula("acos", "arccos")
def _acos(g, a):
    x = a["input"]
    return {"input": -g / conj(F.sqrt(1 - x * x))}


@formula("atan", "arctan")
def _atan(g, a):
    x = a["input"]
    return {"input": g / conj(1 + x * x)}


@formula("sinh")
def _sinh(g, a):
    return {"input": g * conj(F.cosh(a["input"]))}


@formula("cosh")
def _cosh(g, a):
    return {"input": g * conj(F.sinh(a["input"]))}


@formula("tanh", needs_result=True, reads={"input": ()})
def _tanh(g, a):
    r = a["result"]
    return {"input": g * conj(1 - r * r)}


@formula("asinh", "arcsinh")
def _asinh(g, a):
    x = a["input"]
    return {"input": g / conj(F.sqrt(x * x + 1))}


@formula("acosh", "arccosh")
def _acosh(g, a):
    x = a["input"]
    return {"input": g / conj(F.sqrt(x * x - 1))}


@formula("atanh", "arctanh")
def _atanh(g, a):
    x = a["input"]
    return {"input": g / conj(1 - x * x)}


@formula("sigmoid", needs_result=True, reads={"input": ()})
def _sigmoid(g, a):
    r = a["result"]
    return {"input": g * conj(r * (1 - r))}


@formula("logit")
def _logit(g, a):
    x, eps = a["input"], a.get("eps")
    grad = g / (x * (1 - x))
    if eps is not None:  # the input was clamped to [eps, 1 - eps]: flat outside
        grad = grad * ((x >= eps) & (x <= 1 - eps))
    return {"input": grad}


@formula("erf")
def _erf(g, a):
    x = a["input"]
    return {"input": g * (2 / math.sqrt(math.pi)) * F.exp(-x * x)}


@formula("erfc")
def _erfc(g, a):
    x = a["input"]
    return {"input": -g * (2 / math.sqrt(math.pi)) * F.exp(-x * x)}


@formula("erfinv")
def _erfinv(g, a):
    r = F.erfinv(a["input"])  # as PyTorch: the input is saved, not the result
    return {"input": g * (math.sqrt(math.pi) / 2) * F.exp(r * r)}


@formula("lgamma")
def _lgamma(g, a):
    return {"input": g * F.digamma(a["input"])}


@formula("digamma")
def _digamma(g, a):
    return {"input": g * F.polygamma(1, a["input"])}


@formula("polygamma")
def _polygamma(g, a):
    return {"input": g * F.polygamma(a["n"] + 1, a["input"])}


@formula("relu", needs_result=True, reads={"input": ()})
def _relu(g, a):
    return {"input": F.threshold_backward(g, a["result"], 0)}


@formula("frac", needs_input=False)
def _frac(g, a):
    return {"input": g}


@formula("sign", "floor", "ceil", "round", "trunc", "fix", needs_input=False)
def _zero_grad(g, a):
    return {"input": g * 0}


@formula("sgn", needs_result=True)
def _sgn(g, a):
    z, s = a["input"], a["result"]
    if not z.is_complex():
        return {"input": g * 0}
    # s = z/|z|: the gradient is (g - s^2 conj(g)) / (2|z|), and 0 at z = 0.
    r = z.abs()
    safe = F.where(r == 0, F.ones_like(r), r)
    return {"input": F.where(r == 0, F.zeros_like(z), (g - s * s * conj(g)) / (2 * safe))}


def _clamp_mask(x, lo, hi):
    mask = F.ones(tuple(x.shape), dtype=F.bool)
    if lo is not None:
        mask = mask & (x >= lo)
    if hi is not None:
        mask = mask & (x <= hi)
    return mask


@formula("clamp", "clip")
def _clamp(g, a):
    x, lo, hi = a["input"], a.get("min"), a.get("max")
    out = {"input": g * _clamp_mask(x, lo, hi)}
    if isinstance(lo, F.Tensor):
        out["min"] = g * (x < lo)
    if isinstance(hi, F.Tensor):
        out["max"] = g * (x > hi) * (x >= lo if lo is not None else 1)
    return out


@formula("clamp_min")
def _clamp_min(g, a):
    x, lo = a["input"], a["min"]
    out = {"input": g * (x >= lo)}
    if isinstance(lo, F.Tensor):
        out["min"] = g * (x < lo)
    return out


@formula("clamp_max")
def _clamp_max(g, a):
    x, hi = a["input"], a["max"]
    out = {"input": g * (x <= hi)}
    if isinstance(hi, F.Tensor):
        out["max"] = g * (x > hi)
    return out


@formula("lerp")
def _lerp(g, a):
    x, end, w = a["input"], a["end"], a["weight"]
    out = {"input": g * conj(1 - w), "end": g * conj(w)}
    if isinstance(w, F.Tensor):
        out["weight"] = g * conj(end - x)
    return out


@formula("addcmul")
def _addcmul(g, a):
    v = a["value"]
    return {
        "input": g,
        "tensor1": g * conj(a["tensor2"] * v),
        "tensor2": g * conj(a["tensor1"] * v),
    }


@formula("addcdiv")
def _addcdiv(g, a):
    v, t1, t2 = a["value"], a["tensor1"], a["tensor2"]
    return {"input": g, "tensor1": g * conj(v / t2), "tensor2": -g * conj(v * t1 / (t2 * t2))}


def _select_max(g, x, y, greater):
    """maximum/minimum: the loser gets nothing, a tie splits g; as in PyTorch, a NaN (no
    loser) passes g to both."""
    x_loses, y_loses = (x < y, x > y) if greater else (x > y, x < y)
    tie = x == y
    share = g * ~tie + g * tie * 0.5
    return share * ~x_loses, share * ~y_loses


@formula("fmax")
def _fmax(g, a):
    x, y = a["input"], a["other"]
    to_x = (x >= y) | F.isnan(y)  # fmax ignores NaN; ties go to input
    return {"input": g * to_x, "other": g * ~to_x}


@formula("fmin")
def _fmin(g, a):
    x, y = a["input"], a["other"]
    to_x = (x <= y) | F.isnan(y)
    return {"input": g * to_x, "other": g * ~to_x}


@formula("maximum", "max.other")
def _maximum(g, a):
    gx, gy = _select_max(g, a["input"], a["other"], True)
    return {"input": gx, "other": gy}


@formula("minimum", "min.other")
def _minimum(g, a):
    gx, gy = _select_max(g, a["input"], a["other"], False)
    return {"input": gx, "other": gy}


@formula("hypot", needs_result=True)
def _hypot(g, a):
    r = a["result"]
    return {"input": g * a["input"] / r, "other": g * a["other"] / r}


@formula("atan2", "arctan2")
def _atan2(g, a):
    y, x = a["input"], a["other"]
    d = x * x + y * y
    return {"input": g * x / d, "other": -g * y / d}


@formula("logaddexp")
def _logaddexp(g, a):
    x, y = a["input"], a["other"]
    return {"input": g / conj(1 + F.exp(y - x)), "other": g / conj(1 + F.exp(x - y))}


@formula("logaddexp2")
def _logaddexp2(g, a):
    x, y = a["input"], a["other"]
    return {"input": g / (1 + F.exp2(y - x)), "other": g / (1 + F.exp2(x - y))}


@formula("copysign", needs_result=True)
def _copysign(g, a):
    # d/dx copysign(x, y) = sign(x) * sign(result); the sign of y gets no gradient.
    other = a["other"]
    return {
        "input": g * (F.sign(a["input"]) * F.sign(a["result"])),
        "other": g * 0 if isinstance(other, F.Tensor) else None,
    }


@formula("where")
def _where(g, a):
    c = a["condition"]
    return {"input": g * c, "other": g * ~c}


@formula("nan_to_num")
def _nan_to_num(g, a):
    return {"input": g * F.isfinite(a["input"])}
