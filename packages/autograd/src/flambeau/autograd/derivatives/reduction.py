"""Formulas of reductions and scans."""

from __future__ import annotations

import math

import flambeau as F

from .complex import conj
from .helpers import keep, reduced_count, unreduce
from .registry import formula


@formula("sum", needs_input=False, reads={"input": ()})  # only its shape
def _sum(g, a):
    return {"input": unreduce(g, a)[0]}


@formula("mean", reads={"input": ()})  # only its shape
def _mean(g, a):
    ge, dims = unreduce(g, a)
    return {"input": ge / reduced_count(a["input"], dims)}


def _exclusive_cumprod(x, d, reverse=False):
    """prod of the elements before each one along d (after, when reverse): no division,
    so zeros in x are fine."""
    if reverse:
        return _exclusive_cumprod(x.flip([d]), d).flip([d])
    ones = F.ones_like(x.narrow(d, 0, 1))
    return F.cat([ones, x.narrow(d, 0, x.shape[d] - 1)], d).cumprod(d)


@formula("prod")
def _prod(g, a):
    x = a["input"]
    ge, _ = unreduce(g, a)
    if x.dim() == 0 or x.numel() == 0:
        return {"input": ge * 0 if x.dim() else ge}
    if a.get("dim") is None:  # over all elements: the products of the others, per element
        flat = x.reshape(-1)
        others = _exclusive_cumprod(flat, 0) * _exclusive_cumprod(flat, 0, reverse=True)
        return {"input": ge * conj(others.reshape(tuple(x.shape)))}
    d = a["dim"] % x.dim()
    others = _exclusive_cumprod(x, d) * _exclusive_cumprod(x, d, reverse=True)
    return {"input": ge * conj(others)}


def _extremum(g, a, nan_wins=False):
    """The gradient shared equally among the elements equal to the result. As in PyTorch,
    max()/min() over everything give it to the NaNs of a NaN result (nan_wins); amax/amin
    find no element equal to NaN and give NaN."""
    x = a["input"]
    ge, dims = unreduce(g, a)
    r = keep(a["result"], a)
    mask = x == r
    if nan_wins:
        mask = mask | (F.isnan(x) & F.isnan(r))
    count = mask.sum(dim=tuple(dims), keepdim=True)
    return {"input": ge * mask / count}


formula("amax", "amin", needs_result=True)(_extremum)


@formula("max", "min", needs_result=True)
def _max_all(g, a):
    everything = {"input": a["input"], "dim": None, "keepdim": False, "result": a["result"]}
    return _extremum(g, everything, nan_wins=True)


@formula("max.dim", "min.dim", needs_result=(1,))  # the indices
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


def _correction(a):
    """The divisor's correction: `correction=` (default 1) or the older `unbiased=` flag."""
    if "unbiased" in a:
        return 1 if a["unbiased"] else 0
    return a["correction"] if a.get("correction") is not None else 1


def _centered_over_n(g, a):
    """g (expanded) * (x - mean) / (N - correction): the shared part of var's and std's."""
    x = a["input"]
    ge, dims = unreduce(g, a)
    n = reduced_count(x, dims) - _correction(a)
    return ge * (x - x.mean(dim=tuple(dims), keepdim=True)) / n


@formula("var")
def _var(g, a):
    return {"input": 2 * _centered_over_n(g, a)}


@formula("std", needs_result=True)
def _std(g, a):
    return {"input": _centered_over_n(g, a) / keep(a["result"], a)}


def _with_mean(spread):
    """Formula of var_mean/std_mean: the spread's gradient plus the mean's."""

    def fn(g, a):
        g_spread, g_mean = g
        spread_args = {**a, "result": a["results"][0]}
        grad = spread(g_spread, spread_args)["input"] if g_spread is not None else None
        if g_mean is not None:
            gm = _mean(g_mean, a)["input"]
            grad = gm if grad is None else grad + gm
        return {"input": grad}

    return fn


formula("var_mean")(_with_mean(_var))
formula("std_mean", needs_result=(0,))(_with_mean(_std))


@formula("aminmax", needs_result=True)
def _aminmax(g, a):
    grad = None
    for gi, r in zip(g, a["results"]):
        if gi is not None:
            gx = _extremum(gi, {**a, "result": r})["input"]
            grad = gx if grad is None else grad + gx
    return {"input": grad}


@formula("nansum")
def _nansum(g, a):
    return {"input": unreduce(g, a)[0] * ~F.isnan(a["input"])}


@formula("nanmean")
def _nanmean(g, a):
    x = a["input"]
    ge, dims = unreduce(g, a)
    present = ~F.isnan(x)
    return {"input": ge * present / present.sum(dim=tuple(dims), keepdim=True)}


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
    if p == 1:
        return {"input": ge * F.sgn(x)}
    if p in (math.inf, -math.inf):  # shared equally among the extreme elements
        mask = x.abs() == r
        return {"input": ge * F.sgn(x) * mask / mask.sum(dim=tuple(dims), keepdim=True)}
    # A zero norm has the subgradient 0 (as PyTorch), not 0/0.
    scale = F.where(r == 0, F.zeros((), dtype=r.dtype), ge / r.pow(p - 1))
    if p == 2:
        return {"input": scale * x}
    # For p < 1, |x|^(p-1) is infinite at x == 0, where sgn(x) is 0: the term is 0.
    magnitude = F.where(x == 0, F.zeros((), dtype=r.dtype), x.abs().pow(p - 1))
    return {"input": scale * F.sgn(x) * magnitude}


def _reverse_cumsum(t, d):
    return t.flip([d]).cumsum(d).flip([d])


@formula("cumsum")
def _cumsum(g, a):
    return {"input": _reverse_cumsum(g, a["dim"])}


def _cumprod_grad_by_terms(g, x, d):
    """x_i's gradient sum_{k>=i} g_k prod_{j<=k, j!=i} x_j, one cumprod per i (O(n^2)).
    Unlike the masked formula below, its derivative is right where x has zeros."""
    n = x.shape[d]
    along = [1] * x.dim()
    along[d] = n
    position = F.arange(n).reshape(along)
    one = F.ones((), dtype=x.dtype)
    grads = []
    for i in range(n):
        without_i = F.where(position == i, one, x).cumprod(d)
        grads.append((g * conj(without_i)).narrow(d, i, n - i).sum(d, keepdim=True))
    return F.cat(grads, d)


@formula("cumprod", needs_result=True)
def _cumprod(g, a):
    x, out = a["input"], a["result"]
    if x.dim() == 0:
        return {"input": g}
    d = a["dim"] % x.dim()
    zero = x == 0
    if not bool(zero.any()):
        return {"input": _reverse_cumsum(g * conj(out), d) / conj(x)}
    if F.is_grad_enabled():  # create_graph: the term-by-term sum, differentiable everywhere
        return {"input": _cumprod_grad_by_terms(g, x, d)}
    # With zeros, x_i's gradient is sum_{k>=i} g_k prod_{j<=k, j!=i} x_j. Before the first
    # zero of a slice the division formula holds (later outputs are 0); at the first zero z
    # it is prod_{j<z} x_j * sum_{k>=z} g_k prod_{z<j<=k} x_j; after it, 0.
    zeros_so_far = zero.cumsum(d)
    before = zeros_so_far == 0
    first = zero & (zeros_so_far == 1)
    one = F.ones((), dtype=x.dtype)
    part_before = _reverse_cumsum(g * conj(out), d) / conj(F.where(before, x, one))
    tail = F.where(before | first, one, x).cumprod(d)  # prod_{z<j<=k} x_j for k >= z
    at_zero = F.where(before, 0 * g, g * conj(tail)).sum(d, keepdim=True)
    head = F.where(before, x, one).prod(d, keepdim=True)  # prod_{j<z} x_j
    return {
        "input": F.where(before, part_before, 0 * g) + F.where(first, at_zero * conj(head), 0 * g)
    }
