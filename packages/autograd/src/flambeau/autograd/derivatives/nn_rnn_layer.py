"""Formulas of _rnn_layer (one recurrent layer over a whole sequence) and of its backward.

First-order backward runs the fused backward kernel. Under create_graph (or when the
workspace output is differentiated) the layer is recomputed step by step from the
differentiable cells and differentiated, so the result is differentiable to any order.
The backward kernel's own formula restates what it computes (the workspace's columns and
the output as independent values) with differentiable operators.
"""

from __future__ import annotations

import flambeau as F

from .nn import _vjp
from .registry import formula

# _rnn_layer's tensor parameters after the input and the states, in schema order.
_WEIGHTS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")
_FORWARD = ("input", "hx", "cx", *_WEIGHTS)
_BACKWARD = ("grad_output", "grad_hy", "grad_cy", *_FORWARD, "output", "workspace")


def _steps(sizes, reverse):
    """(t, rows, first row, rows shared with the step that ran before) in running order."""
    first, row = [], 0
    for b in sizes:
        first.append(row)
        row += b
    order = range(len(sizes) - 1, -1, -1) if reverse else range(len(sizes))
    prev = None
    for t in order:
        shared = 0 if prev is None else min(sizes[t], sizes[prev])
        yield t, sizes[t], first[t], shared, (None if prev is None else first[prev])
        prev = t


def _packed(input, batch_sizes):
    """(rows x features data, per-step sizes, reshape back) of a padded or packed input."""
    if batch_sizes:
        return input, list(batch_sizes), lambda y: y
    steps, batch = input.shape[0], input.shape[1]
    return (
        input.reshape(steps * batch, input.shape[2]),
        [batch] * steps,
        (lambda y: y.reshape(steps, batch, y.shape[-1])),
    )


def _layer(input, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr, batch_sizes, mode, reverse):
    """(output, hy, cy) of _rnn_layer from differentiable operators, one step at a time."""
    data, sizes, unpack = _packed(input, batch_sizes)
    gates = F.matmul(data, w_ih.t())
    h, c = hx, cx
    outputs = [None] * len(sizes)
    for t, bs, row0, _, _ in _steps(sizes, reverse):
        ig, hg = gates[row0 : row0 + bs], F.matmul(h[:bs], w_hh.t())
        if mode == "LSTM":
            h_t, c_t, _ = F._thnn_fused_lstm_cell(ig, hg, c[:bs], b_ih, b_hh)
            if w_hr is not None:
                h_t = F.matmul(h_t, w_hr.t())
            c = F.cat([c_t, c[bs:]], 0)
        elif mode == "GRU":
            h_t, _ = F._thnn_fused_gru_cell(ig, hg, h[:bs], b_ih, b_hh)
        else:
            pre = ig + hg if b_ih is None else ig + hg + b_ih + b_hh
            h_t = F.tanh(pre) if mode == "RNN_TANH" else F.relu(pre)
        h = F.cat([h_t, h[bs:]], 0)
        outputs[t] = h_t
    cy = c if mode == "LSTM" else F.empty(0, dtype=hx.dtype, device=hx.device)
    return unpack(F.cat(outputs, 0)), h, cy


def _layer_backward(g_out, g_hy, g_cy, input, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr, output,
                    workspace, batch_sizes, mode, reverse):  # fmt: skip
    """_rnn_layer_backward's eight gradients, computed as its kernel does (the workspace's
    columns: LSTM i f g o | c | h before the projection; GRU r z n | hn)."""
    data, sizes, unpack = _packed(input, batch_sizes)
    out = _packed(output, batch_sizes)[0]
    g_out = None if g_out is None else _packed(g_out, batch_sizes)[0]
    H = w_hh.shape[0] // {"LSTM": 4, "GRU": 3}.get(mode, 1)
    zeros = lambda t: F.zeros(t.shape, dtype=t.dtype, device=t.device)  # noqa: E731
    dh_state = g_hy if g_hy is not None else zeros(hx)
    dc_state = (g_cy if g_cy is not None else zeros(cx)) if mode == "LSTM" else None
    n = len(sizes)
    d_gates, d_hgates, h_prev, d_out = [None] * n, [None] * n, [None] * n, [None] * n
    for t, bs, row0, shared, prev0 in reversed(list(_steps(sizes, reverse))):
        rows = slice(row0, row0 + bs)
        h_prev[t] = F.cat([out[prev0 : prev0 + shared], hx[shared:bs]], 0) if shared else hx[:bs]
        dh = dh_state[:bs] if g_out is None else dh_state[:bs] + g_out[rows]
        if w_hr is not None:
            d_out[t] = dh
            dh = F.matmul(dh, w_hr)
        w = workspace[rows]
        if mode == "LSTM":
            i, f, g, o, c = (w[:, k * H : (k + 1) * H] for k in range(5))
            c_prev = cx[:bs]
            if shared:
                c_prev = F.cat([workspace[prev0 : prev0 + shared, 4 * H : 5 * H], cx[shared:bs]])
            tc = F.tanh(c)
            dc = dh * o * (1 - tc * tc) + dc_state[:bs]
            d_gates[t] = F.cat([dc * g * i * (1 - i), dc * c_prev * f * (1 - f),
                                dc * i * (1 - g * g), dh * tc * o * (1 - o)], 1)  # fmt: skip
            dc_state = F.cat([dc * f, dc_state[bs:]], 0)
            d_hgates[t] = d_gates[t]
            direct = None
        elif mode == "GRU":
            r, z, new, hn = (w[:, k * H : (k + 1) * H] for k in range(4))
            dn = dh * (1 - z) * (1 - new * new)
            dz = dh * (h_prev[t] - new) * z * (1 - z)
            dr = dn * hn * r * (1 - r)
            d_gates[t], d_hgates[t] = F.cat([dr, dz, dn], 1), F.cat([dr, dz, dn * r], 1)
            direct = dh * z
        else:
            o = out[rows]
            d_gates[t] = dh * (1 - o * o) if mode == "RNN_TANH" else dh * (o > 0).to(o.dtype)
            d_hgates[t] = d_gates[t]
            direct = None
        dh_prev = F.matmul(d_hgates[t], w_hh)
        if direct is not None:
            dh_prev = dh_prev + direct
        dh_state = F.cat([dh_prev, dh_state[bs:]], 0)
    dG, dGh, hp = F.cat(d_gates, 0), F.cat(d_hgates, 0), F.cat(h_prev, 0)
    grads = [unpack(F.matmul(dG, w_ih)), dh_state, dc_state, F.matmul(dG.t(), data),
             F.matmul(dGh.t(), hp)]  # fmt: skip
    grads += [dG.sum(0), dGh.sum(0)] if b_ih is not None else [None, None]
    if w_hr is not None:
        grads.append(F.matmul(F.cat(d_out, 0).t(), workspace[:, 5 * H :]))
    else:
        grads.append(None)
    return grads


# The workspace carries no gradient (as PyTorch's RNN reserve space).
@formula("_rnn_layer", needs_result=(0, 3), differentiable_outputs=(True, True, True, False))
def _rnn_layer(g, a):
    static = (a["batch_sizes"], a["mode"], a["reverse"])
    primals = [a[n] for n in _FORWARD]
    grads = list(g[:3]) if a["mode"] == "LSTM" else [g[0], g[1], None]  # cy: LSTM only
    if F.is_grad_enabled():  # create_graph
        grads = _vjp(lambda *p: _layer(*p, *static), primals, grads)
    else:
        output, _, _, workspace = a["results"]
        grads = F._rnn_layer_backward(*grads, *primals, output, workspace, *static)
    return {n: gr for n, gr, p in zip(_FORWARD, grads, primals) if p is not None}


@formula("_rnn_layer_backward")
def _rnn_layer_backward(g, a):
    static = (a["batch_sizes"], a["mode"], a["reverse"])
    primals = [a[n] for n in _BACKWARD]
    # The kernel returns empty tensors for absent arguments: no gradient flows from them.
    cotangents = [gr if p is not None else None for gr, p in zip(g, [a[n] for n in _FORWARD])]
    grads = _vjp(lambda *p: _layer_backward(*p, *static), primals, cotangents)
    return {n: gr for n, gr in zip(_BACKWARD, grads) if gr is not None}
