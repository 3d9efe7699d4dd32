"""Formulas of matrix products."""

from __future__ import annotations

from .helpers import sum_to
from .registry import formula


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
