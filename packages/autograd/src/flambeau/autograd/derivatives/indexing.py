"""Formulas of the indexing operators: gathers scatter their gradient back
(accumulating duplicates), scatters gather it."""

from __future__ import annotations

import flambeau as F

from .complex import conj
from .registry import formula, nondifferentiable

nondifferentiable("nonzero", "nonzero.tuple", "argwhere")


def _zeros(shape, g):
    return F.zeros(tuple(shape), dtype=g.dtype)


def _is_tensor(v):
    return isinstance(v, F.Tensor)


def _into(t, shape):
    """t (index-shaped) placed in the leading corner of a zero tensor of `shape` (src may be
    larger than index in scatter)."""
    shape = tuple(shape)
    if tuple(t.shape) == shape:
        return t
    if t.dim() == 0:
        return t.reshape(shape)
    z = _zeros(shape, t)
    z[tuple(slice(0, s) for s in t.shape)] = t
    return z


def _dim(a):
    return a["dim"]


@formula("index", needs_input=False)
def _index(g, a):
    x = a["input"]
    return {"input": F.index_put(_zeros(x.shape, g), a["indices"], g, accumulate=True)}


@formula("index_put", needs_input=False)
def _index_put(g, a):
    indices = a["indices"]
    gi = g if a.get("accumulate") else F.index_put(g, indices, _zeros((), g))
    return {"input": gi, "values": F.index(g, indices)}


@formula("index_select", needs_input=False)
def _index_select(g, a):
    x = a["input"]
    return {"input": _zeros(x.shape, g).index_add(_dim(a), a["index"], g)}


@formula("index_add", needs_input=False)
def _index_add(g, a):
    gs = g.index_select(_dim(a), a["index"])
    if a.get("alpha", 1) != 1:
        gs = gs * a["alpha"]
    return {"input": g, "source": gs.reshape(tuple(a["source"].shape))}


@formula("index_copy", needs_input=False)
def _index_copy(g, a):
    d, i = _dim(a), a["index"]
    return {
        "input": g.index_fill(d, i, 0),
        "source": g.index_select(d, i).reshape(tuple(a["source"].shape)),
    }


@formula("index_fill", needs_input=False)
def _index_fill(g, a):
    d, i = _dim(a), a["index"]
    out = {"input": g.index_fill(d, i, 0)}
    if _is_tensor(a["value"]):
        filled = _zeros(g.shape, g).index_fill(d, i, 1)
        out["value"] = (g * filled).sum()
    return out


@formula("gather", needs_input=False)
def _gather(g, a):
    x = a["input"]
    return {"input": _zeros(x.shape, g).scatter_add(_dim(a), a["index"], g)}


def _gathered(g, a, src_name="src"):
    return _into(g.gather(_dim(a), a["index"]), a[src_name].shape)


@formula("scatter_add", needs_input=False)
def _scatter_add(g, a):
    return {"input": g, "src": _gathered(g, a)}


def _src_of_product(g, a, r, sub, self_included):
    """d(r)/d(src) of a scatter that multiplies into r: the product of the other values
    scattered to the same place (and of input's value there when it takes part)."""
    x, d, i = a["input"], _dim(a), a["index"]
    zero = sub == 0
    one = F.ones((), dtype=sub.dtype)
    # r / src_j; r keeps its graph under create_graph, so this stays exact at places
    # where another value is zero.
    grad = (g * conj(r)).gather(d, i) / conj(F.where(zero, one, sub))
    if not bool(zero.any()):
        return _into(grad, a["src"].shape)
    real = g.real.dtype
    zeros_at = _zeros(x.shape, g).real.scatter_add(d, i, zero.to(real))
    if self_included:
        zeros_at = zeros_at + (x == 0).to(real)
    if F.is_grad_enabled() and bool((zeros_at > 1).any()):
        raise RuntimeError(
            f"{a.get('reduce')}: double backward is not supported where more than one zero "
            "meets at the same place of a scattered product (as in PyTorch)"
        )
    # A zero src_j gets the product of the others, which is 0 unless it is the only zero.
    base = F.where(x == 0, one, x) if self_included else F.ones(tuple(x.shape), dtype=sub.dtype)
    nonzero_product = base.scatter_reduce(d, i, F.where(zero, one, sub), "prod")
    only_zero = zero & (zeros_at.gather(d, i) == 1)
    at_zero = (g * conj(nonzero_product)).gather(d, i)
    grad = F.where(only_zero, at_zero, F.where(zero, 0 * grad, grad))
    return _into(grad, a["src"].shape)


def _corner(src, index):
    return src[tuple(slice(0, s) for s in index.shape)] if src.dim() else src


# Multiply's gradient reads the input (in place: a copy from before the call) and
# recomputes the result from it: like PyTorch's scatter, this one keeps no output, so
# in-place ops on the output stay allowed.
@formula("scatter", "scatter.src")
def _scatter(g, a):
    reduce, d, i = a.get("reduce"), _dim(a), a["index"]
    if reduce == "add":
        return _scatter_add(g, a)
    src = a["src"]
    if reduce == "multiply":
        p = F.ones(tuple(g.shape), dtype=g.dtype).scatter(d, i, src, reduce="multiply")
        out = {"input": g * conj(p)}
        if _is_tensor(src):
            r = a["input"].scatter(d, i, src, reduce="multiply")
            out["src"] = _src_of_product(g, a, r, _corner(src, i), True)
        return out
    out = {"input": g.scatter(d, i, 0)}
    if _is_tensor(src):
        out["src"] = _gathered(g, a)
    return out


@formula("scatter.value", needs_input=False)
def _scatter_value(g, a):
    reduce, d, i = a.get("reduce"), _dim(a), a["index"]
    if reduce == "add":
        return {"input": g}
    if reduce == "multiply":
        p = F.ones(tuple(g.shape), dtype=g.dtype).scatter(d, i, a["value"], reduce="multiply")
        return {"input": g * conj(p)}
    return {"input": g.scatter(d, i, 0)}


@formula("scatter_reduce", "scatter_reduce.two", needs_result=True)
def _scatter_reduce(g, a):
    x, d, i, src, reduce = a["input"], _dim(a), a["index"], a["src"], a["reduce"]
    include_self = a.get("include_self", True)
    if reduce == "sum":
        gi = g if include_self else g.scatter(d, i, 0)
        return {"input": gi, "src": _gathered(g, a)}
    if reduce == "mean":
        real = g.real.dtype  # counts are real, also for complex values
        count = F.zeros(tuple(x.shape), dtype=real) + (1 if include_self else 0)
        count = count.scatter_add(d, i, F.ones(tuple(i.shape), dtype=real)).clamp_min(1)
        gc = g / count
        gi = gc if include_self else gc.scatter(d, i, 0)
        return {"input": gi, "src": _into(gc.gather(d, i), src.shape)}
    r = a["result"]
    sub = _corner(src, i)
    if reduce in ("amax", "amin"):
        # Every value equal to the result gets an equal share of the gradient.
        hit_x = (x == r).to(g.dtype)
        if not include_self:
            hit_x = hit_x * (1 - _zeros(x.shape, g).scatter(d, i, 1))
        hit_src = (sub == r.gather(d, i)).to(g.dtype)
        count = (hit_x + _zeros(x.shape, g).scatter_add(d, i, hit_src)).clamp_min(1)
        gc = g / count
        return {"input": gc * hit_x, "src": _into(gc.gather(d, i) * hit_src, src.shape)}
    if reduce == "prod":
        # The product of the scattered values alone (a function of src only), so input's
        # gradient needs no division by input.
        p = F.ones(tuple(x.shape), dtype=g.dtype).scatter_reduce(d, i, src, "prod")
        gi = g * conj(p) if include_self else g.scatter(d, i, 0)
        return {"input": gi, "src": _src_of_product(g, a, r, sub, include_self)}
    raise RuntimeError(f"scatter_reduce: unknown reduce '{reduce}'")


@formula("masked_fill", needs_input=False)
def _masked_fill(g, a):
    mask = a["mask"]
    out = {"input": g.masked_fill(mask, 0)}
    if _is_tensor(a["value"]):
        out["value"] = F.where(mask, g, _zeros((), g)).sum()
    return out


@formula("masked_select", needs_input=False)
def _masked_select(g, a):
    x, mask = a["input"], a["mask"]
    return {"input": _zeros(x.shape, g).masked_scatter(mask, g)}


@formula("masked_scatter", needs_input=False)
def _masked_scatter(g, a):
    mask, src = a["mask"], a["source"]
    picked = F.masked_select(g, mask)
    rest = src.numel() - picked.numel()
    flat = F.cat([picked, _zeros((rest,), g)]) if rest else picked
    return {"input": g.masked_fill(mask, 0), "source": flat.reshape(tuple(src.shape))}


@formula("take", needs_input=False)
def _take(g, a):
    x, i = a["input"], a["index"]
    flat = F.index_put(_zeros((x.numel(),), g), [i.reshape(-1)], g.reshape(-1), accumulate=True)
    return {"input": flat.reshape(tuple(x.shape))}


@formula("take_along_dim", needs_input=False)
def _take_along_dim(g, a):
    x, i, d = a["input"], a["indices"], a.get("dim")
    if d is None:
        return _take(g, {"input": x, "index": i})
    if x.dim() == 0:
        return {"input": g.sum()}
    d %= x.dim()
    shape = [max(p, q) if k != d else p for k, (p, q) in enumerate(zip(x.shape, i.shape))]
    ishape = [s if k != d else i.shape[d] for k, s in enumerate(shape)]
    gx = _zeros(shape, g).scatter_add(d, i.expand(tuple(ishape)), g)
    return {"input": gx}  # summed back over broadcast dims by the registry
