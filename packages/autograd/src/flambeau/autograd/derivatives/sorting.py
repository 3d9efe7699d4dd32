"""Formulas of sorting operators. Operators that pick input elements (sort, topk,
kthvalue, median, mode, cummax, ...) send each gradient back to the index it came
from with the core's value_selecting_reduction_backward; indices, counts and
searches are not differentiable."""

from __future__ import annotations

import flambeau as F

from .registry import formula, nondifferentiable

nondifferentiable(
    "argsort",
    "_unique2",
    "unique_dim",
    "unique_consecutive",
    "searchsorted",
    "bucketize",
    "bincount",
    "histc",
)


def _values_grad(g):
    return g[0] if isinstance(g, tuple) else g


def _scatter(g, a, dim, keepdim):
    """g of the selected values added back at the result's indices."""
    gv = _values_grad(g)
    if gv is None:
        return {}
    idx = a["results"][1]
    shape = tuple(a["input"].shape)
    return {"input": F.value_selecting_reduction_backward(gv, dim, idx, shape, keepdim)}


@formula("sort", "topk", needs_input=False, needs_result=(1,))
def _sort(g, a):
    return _scatter(g, a, a.get("dim", -1), True)


@formula("cummax", "cummin", needs_input=False, needs_result=(1,))
def _cum_extreme(g, a):
    return _scatter(g, a, a["dim"], True)


@formula("kthvalue", "median.dim", "nanmedian.dim", "mode", needs_input=False, needs_result=(1,))
def _select(g, a):
    return _scatter(g, a, a.get("dim", -1), a.get("keepdim", False))


@formula("median", "nanmedian", needs_result=True)
def _median_all(g, a):
    # Shared equally among the elements equal to the median (the NaNs when it is NaN).
    x, r = a["input"], a["result"]
    mask = F.where(F.isnan(r), F.isnan(x), x == r)
    return {"input": g * mask / mask.sum()}


@formula("msort")
def _msort(g, a):
    x = a["input"]
    idx = F.argsort(x, dim=0, stable=True)
    return {"input": F.value_selecting_reduction_backward(g, 0, idx, tuple(x.shape), True)}


@formula("value_selecting_reduction_backward", needs_input=False)
def _vsrb(gg, a):
    # Linear in grad: its adjoint reads gg at the indices along dim.
    dim, idx, sizes, keepdim = a["dim"], a["indices"], tuple(a["sizes"]), a["keepdim"]
    if not sizes:
        return {"grad": gg}
    d = dim % len(sizes)
    if not keepdim:
        idx = idx.unsqueeze(d)
    onehot = idx.movedim(d, -1).unsqueeze(-1) == F.arange(sizes[d])
    picked = (gg.movedim(d, -1).unsqueeze(-2) * onehot).sum(-1).movedim(-1, d)
    return {"grad": picked if keepdim else picked.squeeze(d)}


@formula("logcumsumexp", needs_result=True)
def _logcumsumexp(g, a):
    # d out_j / d x_i = exp(x_i - out_j) for j >= i: at most 1, so stable. The
    # n x n weights per line cost memory quadratic in the scanned length.
    x, out = a["input"], a["result"]
    if x.dim() == 0:
        return {"input": g}
    d = a["dim"] % x.dim()
    xm, om, gm = x.movedim(d, -1), out.movedim(d, -1), g.movedim(d, -1)
    n = xm.shape[-1]
    later = F.ones((n, n)).triu() > 0  # [i, j]: j >= i
    w = F.exp(F.where(later, xm.unsqueeze(-1) - om.unsqueeze(-2), float("-inf")))
    return {"input": (w * gm.unsqueeze(-2)).sum(-1).movedim(-1, d)}


@formula("diff", needs_input=False)
def _diff(g, a):
    x, n = a["input"], a.get("n", 1)
    pre, app = a.get("prepend"), a.get("append")
    d = a.get("dim", -1) % x.dim()

    def length(t):
        return 0 if t is None else (t.shape[d] if t.dim() else 1)

    lp, lx, la = length(pre), x.shape[d], length(app)
    total = lp + lx + la
    shape = list(g.shape)
    shape[d] = total
    if n >= total:
        gz = F.zeros(tuple(shape), dtype=g.dtype)
    else:
        gz = g
        edge = list(g.shape)
        edge[d] = 1
        zero = F.zeros(tuple(edge), dtype=g.dtype)
        for _ in range(n):  # adjoint of z -> z[1:] - z[:-1]
            gz = F.cat([zero, gz], d) - F.cat([gz, zero], d)
    out = {"input": gz.narrow(d, lp, lx)}
    if pre is not None:
        gp = gz.narrow(d, 0, lp)
        out["prepend"] = gp if pre.dim() else gp.sum()
    if app is not None:
        ga = gz.narrow(d, lp + lx, la)
        out["append"] = ga if app.dim() else ga.sum()
    return out
