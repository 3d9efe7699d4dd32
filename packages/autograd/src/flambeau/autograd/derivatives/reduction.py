"""Formulas of reductions and scans."""

from __future__ import annotations

import math

import flambeau as F

from .complex import conj
from .helpers import keep, reduced_count, unreduce
from .registry import formula


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
    return {"input": ge * conj(keep(a["result"], a) / x)}


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
        return {"input": ge * F.sgn(x)}
    if p in (math.inf, -math.inf):  # shared equally among the extreme elements
        mask = x.abs() == r
        return {"input": ge * F.sgn(x) * mask / mask.sum(dim=tuple(dims), keepdim=True)}
    return {"input": ge * F.sgn(x) * x.abs().pow(p - 1) / r.pow(p - 1)}


@formula("cumsum")
def _cumsum(g, a):
    d = a["dim"]
    return {"input": g.flip([d]).cumsum(d).flip([d])}
