"""Derivative formulas, declared once, by operator name.

Each formula maps the gradient of an operator's output(s) ``g`` and its bound
arguments ``a`` (schema names, plus ``result``/``results``) to gradients of its
tensor arguments, as ``{param: grad}`` (a list for Tensor[] params). Formulas
are written with flambeau operators, so with ``create_graph=True`` they are
recorded too and give higher-order gradients. Broadcasting is undone
generically (``sum_to``) after the formula runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import flambeau as F

from .graph import zeros_for_none


@dataclass
class Formula:
    fn: Callable
    needs_input: bool = True  # uses input values (in-place variants keep a copy)
    nondifferentiable: bool = False
    needs_result: bool = False  # uses output values (checked against in-place changes)


FORMULAS: dict[str, Formula] = {}


def formula(*names, needs_input=True, needs_result=False):
    def register(fn):
        for n in names:
            FORMULAS[n] = Formula(fn, needs_input, needs_result=needs_result)
        return fn

    return register


def nondifferentiable(*names):
    for n in names:
        FORMULAS[n] = Formula(lambda g, a: {}, False, True)


# ---- helpers -------------------------------------------------------------


def sum_to(g, shape):
    """Sums g down to `shape` (undoes broadcasting)."""
    shape = tuple(shape)
    if tuple(g.shape) == shape:
        return g
    lead = g.dim() - len(shape)
    if lead > 0:
        g = g.sum(dim=tuple(range(lead)))
    dims = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    if dims:
        g = g.sum(dim=dims, keepdim=True)
    return g.reshape(shape)


def unreduce(g, a, dim_key="dim"):
    """g of a reduction, expanded back to the input's shape."""
    x = a["input"]
    dims = a.get(dim_key)
    nd = x.dim()
    if dims is None or dims == () or dims == []:
        dims = tuple(range(nd))
    elif isinstance(dims, int):
        dims = (dims,)
    if not a.get("keepdim", False):
        for d in sorted(d % max(nd, 1) for d in dims):
            g = g.unsqueeze(d)
    return g.expand(tuple(x.shape)), dims


def reduced_count(x, dims):
    n = 1
    for d in dims:
        n *= x.shape[d] if x.dim() else 1
    return n


def keep(result, a, dim_key="dim"):
    return unreduce(result, a, dim_key)[0]


def first_name(a) -> str:
    """The name of an operator's first parameter (``input``, ``self``, ``tensor``)."""
    return next(iter(a))


def scattered_into(g, x, place):
    """A zero tensor shaped like x with g written where `place(view)` selects."""
    z = F.zeros(tuple(x.shape), dtype=g.dtype)
    place(z).copy_(g)
    return z


# ---- arithmetic ------------------------------------------------------------


@formula("add", needs_input=False)
def _add(g, a):
    return {"input": g, "other": g * a["alpha"] if a["alpha"] != 1 else g}


@formula("sub", needs_input=False)
def _sub(g, a):
    return {"input": g, "other": -g * a["alpha"] if a["alpha"] != 1 else -g}


@formula("rsub", needs_input=False)
def _rsub(g, a):
    return {"input": -g * a["alpha"] if a["alpha"] != 1 else -g, "other": g}


@formula("mul")
def _mul(g, a):
    return {"input": g * a["other"], "other": g * a["input"]}


@formula("div", "true_divide")
def _div(g, a):
    if a.get("rounding_mode") is not None:
        return {}
    x, y = a["input"], a["other"]
    return {"input": g / y, "other": -g * x / (y * y)}


@formula("neg", needs_input=False)
def _neg(g, a):
    return {"input": -g}


@formula("positive", "clone", "contiguous", needs_input=False)
def _identity(g, a):
    return {first_name(a): g}


@formula("pow", needs_result=True)
def _pow(g, a):
    x, e = a["input"], a["exponent"]
    out = {}
    if isinstance(e, F.Tensor):
        out["input"] = g * e * x.pow(e - 1)
        out["exponent"] = g * a["result"] * F.log(x)
    elif e == 0:
        out["input"] = g * 0
    else:
        out["input"] = g * e * x.pow(e - 1)
    return out


@formula("exp", needs_result=True)
def _exp(g, a):
    return {"input": g * a["result"]}


@formula("exp2", needs_result=True)
def _exp2(g, a):
    return {"input": g * a["result"] * math.log(2.0)}


@formula("expm1", needs_result=True)
def _expm1(g, a):
    return {"input": g * (a["result"] + 1)}


@formula("log")
def _log(g, a):
    return {"input": g / a["input"]}


@formula("log2")
def _log2(g, a):
    return {"input": g / (a["input"] * math.log(2.0))}


@formula("log10")
def _log10(g, a):
    return {"input": g / (a["input"] * math.log(10.0))}


@formula("log1p")
def _log1p(g, a):
    return {"input": g / (a["input"] + 1)}


@formula("sqrt", needs_result=True)
def _sqrt(g, a):
    return {"input": g / (2 * a["result"])}


@formula("rsqrt", needs_result=True)
def _rsqrt(g, a):
    r = a["result"]
    return {"input": -0.5 * g * r * r * r}


@formula("square")
def _square(g, a):
    return {"input": 2 * g * a["input"]}


@formula("reciprocal", needs_result=True)
def _reciprocal(g, a):
    r = a["result"]
    return {"input": -g * r * r}


@formula("abs")
def _abs(g, a):
    return {"input": g * F.sign(a["input"])}


@formula("sin")
def _sin(g, a):
    return {"input": g * F.cos(a["input"])}


@formula("cos")
def _cos(g, a):
    return {"input": -g * F.sin(a["input"])}


@formula("tan", needs_result=True)
def _tan(g, a):
    r = a["result"]
    return {"input": g * (1 + r * r)}


@formula("asin", "arcsin")
def _asin(g, a):
    x = a["input"]
    return {"input": g / F.sqrt(1 - x * x)}


@formula("acos", "arccos")
def _acos(g, a):
    x = a["input"]
    return {"input": -g / F.sqrt(1 - x * x)}


@formula("atan", "arctan")
def _atan(g, a):
    x = a["input"]
    return {"input": g / (1 + x * x)}


@formula("sinh")
def _sinh(g, a):
    return {"input": g * F.cosh(a["input"])}


@formula("cosh")
def _cosh(g, a):
    return {"input": g * F.sinh(a["input"])}


@formula("tanh", needs_result=True)
def _tanh(g, a):
    r = a["result"]
    return {"input": g * (1 - r * r)}


@formula("asinh", "arcsinh")
def _asinh(g, a):
    x = a["input"]
    return {"input": g / F.sqrt(x * x + 1)}


@formula("acosh", "arccosh")
def _acosh(g, a):
    x = a["input"]
    return {"input": g / F.sqrt(x * x - 1)}


@formula("atanh", "arctanh")
def _atanh(g, a):
    x = a["input"]
    return {"input": g / (1 - x * x)}


@formula("sigmoid", needs_result=True)
def _sigmoid(g, a):
    r = a["result"]
    return {"input": g * r * (1 - r)}


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


@formula("erfinv", needs_result=True)
def _erfinv(g, a):
    r = a["result"]
    return {"input": g * (math.sqrt(math.pi) / 2) * F.exp(r * r)}


@formula("lgamma")
def _lgamma(g, a):
    return {"input": g * F.digamma(a["input"])}


@formula("relu", needs_result=True)
def _relu(g, a):
    return {"input": g * (a["result"] > 0)}


@formula("frac", needs_input=False)
def _frac(g, a):
    return {"input": g}


@formula("sign", "sgn", "floor", "ceil", "round", "trunc", needs_input=False)
def _zero_grad(g, a):
    return {"input": g * 0}


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
    out = {"input": g * (1 - w), "end": g * w}
    if isinstance(w, F.Tensor):
        out["weight"] = g * (end - x)
    return out


@formula("addcmul")
def _addcmul(g, a):
    v = a["value"]
    return {"input": g, "tensor1": g * a["tensor2"] * v, "tensor2": g * a["tensor1"] * v}


@formula("addcdiv")
def _addcdiv(g, a):
    v, t1, t2 = a["value"], a["tensor1"], a["tensor2"]
    return {"input": g, "tensor1": g * v / t2, "tensor2": -g * v * t1 / (t2 * t2)}


def _select_max(g, x, y, greater):
    win = (x > y) if greater else (x < y)
    tie = x == y
    return g * win + g * tie * 0.5, g * (~win & ~tie) + g * tie * 0.5


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


@formula("logaddexp", needs_result=True)
def _logaddexp(g, a):
    r = a["result"]
    return {"input": g * F.exp(a["input"] - r), "other": g * F.exp(a["other"] - r)}


@formula("where")
def _where(g, a):
    c = a["condition"]
    return {"input": g * c, "other": g * ~c}


@formula("nan_to_num")
def _nan_to_num(g, a):
    return {"input": g * F.isfinite(a["input"])}


# ---- reductions ------------------------------------------------------------


@formula("sum", needs_input=False)
def _sum(g, a):
    return {"input": unreduce(g, a)[0]}


@formula("mean")
def _mean(g, a):
    ge, dims = unreduce(g, a)
    return {"input": ge / reduced_count(a["input"], dims)}


@formula("prod", needs_result=True)
def _prod(g, a):
    x = a["input"]
    ge, _ = unreduce(g, a)
    return {"input": ge * keep(a["result"], a) / x}


def _extremum(g, a):
    x = a["input"]
    ge, dims = unreduce(g, a)
    r = keep(a["result"], a)
    mask = x == r
    count = mask.sum(dim=tuple(dims), keepdim=True)
    return {"input": ge * mask / count}


formula("amax", "amin", needs_result=True)(_extremum)


@formula("max", "min", needs_result=True)
def _max_all(g, a):
    return _extremum(g, {"input": a["input"], "dim": None, "keepdim": False, "result": a["result"]})


@formula("max.dim", "min.dim", needs_result=True)
def _max_dim(g, a):
    x, dim = a["input"], a["dim"] % max(a["input"].dim(), 1)
    gv = g[0] if isinstance(g, tuple) else g
    idx = a["results"][1]
    if not a.get("keepdim", False) and x.dim():
        gv, idx = gv.unsqueeze(dim), idx.unsqueeze(dim)
    shape = [1] * x.dim()
    if x.dim():
        shape[dim] = x.shape[dim]
    positions = F.arange(x.shape[dim] if x.dim() else 1).reshape(shape)
    return {"input": gv * (positions == idx)}


@formula("var")
def _var(g, a):
    x = a["input"]
    ge, dims = unreduce(g, a)
    n = reduced_count(x, dims) - (a.get("correction") if a.get("correction") is not None else 1)
    return {"input": ge * 2 * (x - x.mean(dim=tuple(dims), keepdim=True)) / n}


@formula("std", needs_result=True)
def _std(g, a):
    x = a["input"]
    ge, dims = unreduce(g, a)
    n = reduced_count(x, dims) - (a.get("correction") if a.get("correction") is not None else 1)
    return {"input": ge * (x - x.mean(dim=tuple(dims), keepdim=True)) / (n * keep(a["result"], a))}


@formula("logsumexp", needs_result=True)
def _logsumexp(g, a):
    ge, _ = unreduce(g, a)
    return {"input": ge * F.exp(a["input"] - keep(a["result"], a))}


@formula("norm", needs_result=True)
def _norm(g, a):
    x, p = a["input"], a.get("p", 2)
    p = 2 if p is None or p == "fro" else p
    ge, dims = unreduce(g, a)
    r = keep(a["result"], a)
    if p == 0:
        return {"input": ge * 0}
    if p == 2:
        return {"input": ge * x / r}
    if p == 1:
        return {"input": ge * F.sign(x)}
    if p in (math.inf, -math.inf):  # shared equally among the extreme elements
        mask = x.abs() == r
        return {"input": ge * F.sign(x) * mask / mask.sum(dim=tuple(dims), keepdim=True)}
    return {"input": ge * F.sign(x) * x.abs().pow(p - 1) / r.pow(p - 1)}


@formula("cumsum")
def _cumsum(g, a):
    d = a["dim"]
    return {"input": g.flip([d]).cumsum(d).flip([d])}


# ---- matrix products ----------------------------------------------------------


@formula("mm")
def _mm(g, a):
    return {"input": g @ a["mat2"].t(), "mat2": a["input"].t() @ g}


@formula("bmm")
def _bmm(g, a):
    return {"input": g @ a["mat2"].transpose(1, 2), "mat2": a["input"].transpose(1, 2) @ g}


@formula("mv")
def _mv(g, a):
    return {"input": g.unsqueeze(1) * a["vec"].unsqueeze(0), "vec": a["input"].t() @ g}


@formula("dot")
def _dot(g, a):
    return {"input": g * a["other"], "other": g * a["input"]}


@formula("matmul")
def _matmul(g, a):
    x, y = a["input"], a["other"]
    if x.dim() == 1 and y.dim() == 1:
        return {"input": g * y, "other": g * x}
    xm = x.unsqueeze(0) if x.dim() == 1 else x
    ym = y.unsqueeze(-1) if y.dim() == 1 else y
    gm = g
    if x.dim() == 1:
        gm = gm.unsqueeze(-2)
    if y.dim() == 1:
        gm = gm.unsqueeze(-1)
    gx = gm @ ym.transpose(-1, -2)
    gy = xm.transpose(-1, -2) @ gm
    gx = sum_to(gx, xm.shape).reshape(tuple(x.shape))
    gy = sum_to(gy, ym.shape).reshape(tuple(y.shape))
    return {"input": gx, "other": gy}


# ---- views and shape ---------------------------------------------------------


@formula(
    "view",
    "reshape",
    "flatten",
    "unflatten",
    "view_as",
    "reshape_as",
    "ravel",
    "squeeze",
    "unsqueeze",
    "expand",
    "expand_as",
    needs_input=False,
)
def _reshape_back(g, a):
    first = first_name(a)
    x = a[first]
    return {first: sum_to(g, x.shape) if g.numel() != x.numel() else g.reshape(tuple(x.shape))}


@formula("transpose", "swapaxes", "swapdims", needs_input=False)
def _transpose(g, a):
    first = first_name(a)
    d0 = a.get("dim0", a.get("axis0"))
    d1 = a.get("dim1", a.get("axis1"))
    return {first: g.transpose(d0, d1)}


@formula("t", needs_input=False)
def _t(g, a):
    first = first_name(a)
    return {first: g.t()}


@formula("permute", needs_input=False)
def _permute(g, a):
    first = first_name(a)
    dims = [d % g.dim() for d in a["dims"]]
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return {first: g.permute(inverse)}


@formula("movedim", "moveaxis", needs_input=False)
def _movedim(g, a):
    first = first_name(a)
    return {first: g.movedim(a["destination"], a["source"])}


@formula("narrow")
def _narrow(g, a):
    x = a["input"]
    return {"input": scattered_into(g, x, lambda z: z.narrow(a["dim"], a["start"], a["length"]))}


@formula("select")
def _select(g, a):
    first = first_name(a)
    x = a[first]
    return {first: scattered_into(g, x, lambda z: z.select(a["dim"], a["index"]))}


@formula("diagonal")
def _diagonal(g, a):
    x = a["input"]
    return {
        "input": scattered_into(
            g, x, lambda z: z.diagonal(a.get("offset", 0), a.get("dim1", 0), a.get("dim2", 1))
        )
    }


@formula("__getitem__")
def _getitem(g, a):
    x = a["self"]
    z = F.zeros(tuple(x.shape), dtype=g.dtype)
    z[a["indices"]] = g
    return {"self": z}


@formula("__setitem__", needs_input=False)
def _setitem(g, a):
    kept = g.clone()
    kept[a["indices"]] = 0  # overwritten elements get no gradient from before
    out = {"self": kept}
    if isinstance(a["value"], F.Tensor):
        out["value"] = g[a["indices"]]
    return out


@formula("cat", "concat", "concatenate", needs_input=False)
def _cat(g, a):
    tensors, dim = a["tensors"], a.get("dim", 0)
    grads, start = [], 0
    for t in tensors:
        if t.dim() == 1 and t.shape[0] == 0 and g.dim() > 1:
            grads.append(None)
            continue
        n = t.shape[dim]
        grads.append(g.narrow(dim, start, n))
        start += n
    return {"tensors": grads}


@formula("stack", needs_input=False)
def _stack(g, a):
    return {"tensors": list(g.unbind(a.get("dim", 0)))}


def _join_grads(g, a, dim):
    return F.cat(zeros_for_none(g, a["results"]), dim)


@formula("split", "chunk", "tensor_split", needs_input=False)
def _split(g, a):
    first = first_name(a)
    return {first: _join_grads(g, a, a.get("dim", 0))}


@formula("unbind", needs_input=False)
def _unbind(g, a):
    return {first_name(a): F.stack(zeros_for_none(g, a["results"]), a.get("dim", 0))}


@formula("flip", needs_input=False)
def _flip(g, a):
    return {"input": g.flip(a["dims"])}


@formula("roll", needs_input=False)
def _roll(g, a):
    shifts, dims = a["shifts"], a.get("dims")
    neg = [-s for s in shifts] if isinstance(shifts, (list, tuple)) else -shifts
    return {"input": g.roll(neg, dims) if dims is not None else g.roll(neg)}


@formula("repeat", needs_input=False)
def _repeat(g, a):
    first = first_name(a)
    x, reps = a[first], list(a["repeats"])
    shape = [1] * (len(reps) - x.dim()) + list(x.shape)
    split = []
    for r, s in zip(reps, shape):
        split += [r, s]
    summed = g.reshape(split).sum(dim=tuple(range(0, len(split), 2)))
    return {first: summed.reshape(tuple(x.shape))}


@formula("tril", needs_input=False)
def _tril(g, a):
    return {"input": g.tril(a.get("diagonal", 0))}


@formula("triu", needs_input=False)
def _triu(g, a):
    return {"input": g.triu(a.get("diagonal", 0))}


@formula("to", "type_as", "float", "double", "half", "bfloat16", "cpu", needs_input=False)
def _to(g, a):
    first = first_name(a)
    return {first: g.to(a[first].dtype)}


@formula("copy_", needs_input=False)
def _copy(g, a):
    src = a["src"]
    return {"self": g * 0, "src": g.to(src.dtype)}


@formula("fill_", "zero_", needs_input=False)
def _fill(g, a):
    return {"self": g * 0}


nondifferentiable(
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "isnan",
    "isinf",
    "isfinite",
    "isposinf",
    "isneginf",
    "argmax",
    "argmin",
    "count_nonzero",
    "all",
    "any",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_not",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "isclose",
    "floor_divide",
    "remainder",
    "fmod",
    "detach",
    "long",
    "int",
    "bool",
)


def bind_formula(key, f: Formula | None, inputs, tuple_output=False):
    """The backward function of one recorded call: grads of outputs -> grads of inputs.
    Formulas of operators returning a tuple get a tuple of gradients."""

    def backward(grads, args):
        if f is None:
            raise RuntimeError(f"the derivative for '{key}' is not implemented")
        g = grads if tuple_output else grads[0]
        by_name = f.fn(g, args)
        out = []
        for name, j in inputs:
            # Shapes are read at backward: in-place copies keep the input's shape.
            shape = (args[name] if j is None else args[name][j]).shape
            gi = by_name.get(name)
            if gi is not None and j is not None:
                gi = gi[j]
            if gi is not None and not isinstance(gi, F.Tensor):
                gi = None
            out.append(sum_to(gi, shape) if gi is not None else None)
        return tuple(out)

    return backward
