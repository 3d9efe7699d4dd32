"""Formulas of the fused recurrent cells: their backward kernels (first order)."""

from __future__ import annotations

import flambeau as F

from .registry import formula


@formula("_thnn_fused_lstm_cell", needs_result=True)
def _lstm_cell(g, a):
    _, cy, workspace = a["results"]
    has_bias = a["input_bias"] is not None
    gates, hidden, cx, bias_i, bias_h = F._thnn_fused_lstm_cell_backward(
        g[0], g[1], a["cx"], cy, workspace, has_bias
    )
    grads = {"input_gates": gates, "hidden_gates": hidden, "cx": cx}
    if has_bias:
        grads.update(input_bias=bias_i, hidden_bias=bias_h)
    return grads


@formula("_thnn_fused_gru_cell", needs_input=False, needs_result=True)
def _gru_cell(g, a):
    workspace = a["results"][1]
    has_bias = a["input_bias"] is not None
    grad_hy = g[0] if g[0] is not None else F.zeros_like(a["results"][0])
    backward = F._thnn_fused_gru_cell_backward
    gates, hidden, hx, bias_i, bias_h = backward(grad_hy, workspace, has_bias)
    grads = {"input_gates": gates, "hidden_gates": hidden, "hx": hx}
    if has_bias:
        grads.update(input_bias=bias_i, hidden_bias=bias_h)
    return grads
