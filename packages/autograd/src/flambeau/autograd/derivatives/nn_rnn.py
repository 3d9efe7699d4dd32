"""Formulas of the fused recurrent cells and of their backward kernels.

First-order backward runs the fused kernels. Under create_graph (or when the workspace
output is differentiated: the kernels read only hy's and cy's gradients) the cell is
recomputed from its gate inputs with differentiable operators and differentiated, as
PyTorch's derivatives.yaml does for these cells, so the result is differentiable to any
order. The backward kernels' own formulas restate what each computes from its inputs.
"""

from __future__ import annotations

import flambeau as F

from .nn import _vjp
from .registry import formula

_NAMES = ("input_gates", "hidden_gates", "state", "input_bias", "hidden_bias")


def _lstm_cell(ig, hg, cx, bi, bh):
    """hy, cy, workspace of the LSTM cell, gates (i, f, g, o) chunked along dim 1."""
    pre = ig + hg
    if bi is not None:
        pre = pre + bi + bh
    i, f, g, o = pre.chunk(4, 1)
    i, f, g, o = F.sigmoid(i), F.sigmoid(f), F.tanh(g), F.sigmoid(o)
    cy = f * cx + i * g
    return o * F.tanh(cy), cy, F.cat([i, f, g, o], 1)


def _gru_cell(ig, hg, hx, bi, bh):
    """hy of the GRU cell: gates (r, z, n); the hidden bias sits inside r * (...)."""
    a = ig if bi is None else ig + bi
    b = hg if bh is None else hg + bh
    ar, az, an = a.chunk(3, 1)
    br, bz, bn = b.chunk(3, 1)
    r, z = F.sigmoid(ar + br), F.sigmoid(az + bz)
    n = F.tanh(an + r * bn)
    return n + z * (hx - n), F.cat([r, z, n, bn, hx], 1)


def _differentiable(cell, state_name, g, a):
    primals = [a[n if n != "state" else state_name] for n in _NAMES]
    grads = _vjp(cell, primals, list(g))
    names = [n if n != "state" else state_name for n in _NAMES]
    return {n: gr for n, gr in zip(names, grads) if gr is not None}


@formula("_thnn_fused_lstm_cell", needs_result=(1, 2))  # cy and the workspace
def _fused_lstm_cell(g, a):
    # create_graph, or the workspace used (the kernel reads only hy's and cy's gradients):
    # recompute the cell, differentiably
    if F.is_grad_enabled() or g[2] is not None:
        return _differentiable(_lstm_cell, "cx", g, a)
    _, cy, workspace = a["results"]
    has_bias = a["input_bias"] is not None
    gates, hidden, cx, bias_i, bias_h = F._thnn_fused_lstm_cell_backward(
        g[0], g[1], a["cx"], cy, workspace, has_bias
    )
    grads = {"input_gates": gates, "hidden_gates": hidden, "cx": cx}
    if has_bias:
        grads.update(input_bias=bias_i, hidden_bias=bias_h)
    return grads


@formula("_thnn_fused_gru_cell", needs_result=(1,))  # the workspace
def _fused_gru_cell(g, a):
    if F.is_grad_enabled() or g[1] is not None:  # as the LSTM's
        return _differentiable(_gru_cell, "hx", g, a)
    workspace = a["results"][1]
    has_bias = a["input_bias"] is not None
    grad_hy = g[0] if g[0] is not None else F.zeros_like(a["results"][0])
    backward = F._thnn_fused_gru_cell_backward
    gates, hidden, hx, bias_i, bias_h = backward(grad_hy, workspace, has_bias)
    grads = {"input_gates": gates, "hidden_gates": hidden, "hx": hx}
    if has_bias:
        grads.update(input_bias=bias_i, hidden_bias=bias_h)
    return grads


# The backward kernels' formulas: what each kernel computes from its inputs (the
# workspace's columns as independent values), stated with differentiable operators.


def _lstm_backward(ghy, gcy, cx, cy, workspace):
    """grad_gates, grad_cx of _thnn_fused_lstm_cell_backward (workspace: i, f, g, o)."""
    i, f, g, o = workspace.chunk(4, 1)
    tc = F.tanh(cy)
    dh = ghy if ghy is not None else F.zeros_like(cx)
    dc = dh * o * (1 - tc * tc)
    if gcy is not None:
        dc = dc + gcy
    gates = F.cat([dc * g * i * (1 - i), dc * cx * f * (1 - f), dc * i * (1 - g * g),
                   dh * tc * o * (1 - o)], 1)  # fmt: skip
    return gates, dc * f


def _gru_backward(ghy, workspace):
    """The five gradients of _thnn_fused_gru_cell_backward (workspace: r, z, n, hn, hx)."""
    r, z, n, hn, hx = workspace.chunk(5, 1)
    dn = ghy * (1 - z) * (1 - n * n)
    dz = ghy * (hx - n) * z * (1 - z)
    dr = dn * hn * r * (1 - r)
    gi, gh = F.cat([dr, dz, dn], 1), F.cat([dr, dz, dn * r], 1)
    return gi, gh, ghy * z, gi.sum(0), gh.sum(0)


def _added(*gs):
    gs = [x for x in gs if x is not None]
    return None if not gs else gs[0] if len(gs) == 1 else gs[0] + gs[1]


@formula("_thnn_fused_lstm_cell_backward")
def _fused_lstm_cell_backward(g, a):
    names = ("grad_hy", "grad_cy", "cx", "cy", "workspace")
    # The gates' gradient is returned twice, and the bias gradient (its column sums) twice.
    g_gates = _added(g[0], g[1])
    g_bias = _added(g[3], g[4]) if a["has_bias"] else None
    if g_bias is not None:
        g_gates = _added(g_gates, g_bias.expand(tuple(a["workspace"].shape)))
    grads = _vjp(_lstm_backward, [a[n] for n in names], [g_gates, g[2]])
    return {n: gr for n, gr in zip(names, grads) if gr is not None}


@formula("_thnn_fused_gru_cell_backward")
def _fused_gru_cell_backward(g, a):
    cotangents = list(g) if a["has_bias"] else [*g[:3], None, None]
    ghy, ws = _vjp(_gru_backward, [a["grad_hy"], a["workspace"]], cotangents)
    return {n: gr for n, gr in (("grad_hy", ghy), ("workspace", ws)) if gr is not None}
