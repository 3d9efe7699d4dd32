"""Rows for the fused LSTM and GRU cells, against NumPy statements of the cell
equations and of their derivatives worked out by hand."""

import numpy as np

import flambeau

from . import OpTest, Sample, make


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def cell_samples(k, shapes=((3, 4, False, True), (2, 5, True, False), (0, 3, False, True))):
    """(input_gates, hidden_gates, state, input_bias, hidden_bias) for a k-gate cell."""

    def gen(dtype, rng):
        for batch, hidden, strided, bias in shapes:
            m = lambda *shape, s=False: make(shape, dtype, rng, low=-2, high=2, noncontig=s)  # noqa: E731
            gates = (m(batch, k * hidden, s=strided), m(batch, k * hidden))
            biases = (m(k * hidden), m(k * hidden)) if bias else (None, None)
            yield Sample((*gates, m(batch, hidden, s=strided), *biases), note=f"{batch}x{hidden}")

    return gen


def lstm_reference(ig, hg, cx, bi=None, bh=None):
    pre = ig + hg + (0 if bi is None else bi + bh)
    i, f, g, o = (sigmoid(x) if n != 2 else np.tanh(x) for n, x in enumerate(np.split(pre, 4, 1)))
    cy = f * cx + i * g
    return o * np.tanh(cy), cy, np.concatenate([i, f, g, o], 1)


def gru_reference(ig, hg, hx, bi=None, bh=None):
    a = ig + (0 if bi is None else bi)
    b = hg + (0 if bh is None else bh)
    ar, az, an = np.split(a, 3, 1)
    br, bz, bn = np.split(b, 3, 1)
    r, z = sigmoid(ar + br), sigmoid(az + bz)
    n = np.tanh(an + r * bn)
    return (1 - z) * n + z * hx, np.concatenate([r, z, n, bn, hx], 1)


# Backward rows: workspaces (batch x 4 or 5 hidden) small enough for finite differences.
SMALL = ((3, 3, False, True), (2, 4, True, False), (0, 3, False, True))


def lstm_backward_samples(dtype, rng):
    for s in cell_samples(4, SMALL)(dtype, rng):
        _, cy, ws = lstm_reference(*s.args)
        grads = make(cy.shape, dtype, rng), make(cy.shape, dtype, rng)
        yield Sample((*grads, s.args[2], cy, ws, s.args[3] is not None), note=s.note)


def lstm_backward_reference(ghy, gcy, cx, cy, ws, has_bias):
    i, f, g, o = np.split(ws, 4, 1)
    tc = np.tanh(cy)
    dc = ghy * o * (1 - tc**2) + gcy
    gates = np.concatenate([dc * g * i * (1 - i), dc * cx * f * (1 - f), dc * i * (1 - g**2),
                            ghy * tc * o * (1 - o)], 1)  # fmt: skip
    db = gates.sum(0) if has_bias else np.zeros(0, gates.dtype)
    return gates, gates, dc * f, db, db


def gru_backward_samples(dtype, rng):
    for s in cell_samples(3, SMALL)(dtype, rng):
        hy, ws = gru_reference(*s.args)
        yield Sample((make(hy.shape, dtype, rng), ws, s.args[3] is not None), note=s.note)


def gru_backward_reference(ghy, ws, has_bias):
    r, z, n, hn, hx = np.split(ws, 5, 1)
    dn = ghy * (1 - z) * (1 - n**2)
    dz = ghy * (hx - n) * z * (1 - z)
    dr = dn * hn * r * (1 - r)
    gi, gh = np.concatenate([dr, dz, dn], 1), np.concatenate([dr, dz, dn * r], 1)
    empty = np.zeros(0, gi.dtype)
    return gi, gh, ghy * z, gi.sum(0) if has_bias else empty, gh.sum(0) if has_bias else empty


TESTS = [
    OpTest(
        "_thnn_fused_lstm_cell",
        lambda *a: flambeau._thnn_fused_lstm_cell(*a)[:2],
        lambda *a: lstm_reference(*a)[:2],
        cell_samples(4),
    ),
    OpTest(
        "_thnn_fused_lstm_cell_backward",
        flambeau._thnn_fused_lstm_cell_backward,
        lstm_backward_reference,
        lstm_backward_samples,
    ),
    OpTest(
        "_thnn_fused_gru_cell",
        lambda *a: flambeau._thnn_fused_gru_cell(*a)[0],
        lambda *a: gru_reference(*a)[0],
        cell_samples(3),
    ),
    OpTest(
        "_thnn_fused_gru_cell_backward",
        flambeau._thnn_fused_gru_cell_backward,
        gru_backward_reference,
        gru_backward_samples,
    ),
]


# ---- _rnn_layer: one layer, one direction, over a (packed) sequence ----------------------

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _order(sizes, reverse):
    """(t, rows, first row, rows shared with the step that ran before, its first row)."""
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
    prev = None
    for t in range(len(sizes) - 1, -1, -1) if reverse else range(len(sizes)):
        shared = 0 if prev is None else min(sizes[t], sizes[prev])
        yield t, sizes[t], first[t], shared, (0 if prev is None else first[prev])
        prev = t


def _rows(x, sizes):
    """Padded (steps, batch, features) -> rows, the steps' sizes."""
    if sizes:
        return x, list(sizes)
    return x.reshape(-1, x.shape[-1]), [x.shape[1]] * x.shape[0]


def rnn_layer_reference(x, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr, batch_sizes, mode, reverse):
    """(output, hy, cy, workspace), the workspace laid out as the kernel's: LSTM i f g o | c |
    h before the projection; GRU r z n | hn; none for the plain RNNs."""
    data, sizes = _rows(x, batch_sizes)
    H = w_hh.shape[0] // _GATES[mode]
    bi = 0 if b_ih is None else b_ih
    bh = 0 if b_hh is None else b_hh
    h, c = hx.copy(), (cx.copy() if mode == "LSTM" else None)
    out = np.zeros((data.shape[0], hx.shape[1]), data.dtype)
    cols = {"LSTM": (6 if w_hr is not None else 5) * H, "GRU": 4 * H}.get(mode, 0)
    ws = np.zeros((data.shape[0], cols), data.dtype)
    for _, bs, r0, _, _ in _order(sizes, reverse):
        rows = slice(r0, r0 + bs)
        xg, hg = data[rows] @ w_ih.T + bi, h[:bs] @ w_hh.T + bh
        if mode == "LSTM":
            hy, cy, gates = lstm_reference(xg, hg, c[:bs])
            ws[rows, : 4 * H], ws[rows, 4 * H : 5 * H] = gates, cy
            if w_hr is not None:
                ws[rows, 5 * H :] = hy
                hy = hy @ w_hr.T
            c[:bs] = cy
        elif mode == "GRU":
            hy, gates = gru_reference(xg, hg, h[:bs])
            ws[rows] = gates[:, : 4 * H]
        else:
            hy = np.tanh(xg + hg) if mode == "RNN_TANH" else np.maximum(xg + hg, 0)
        out[rows], h[:bs] = hy, hy
    out = out if batch_sizes else out.reshape(x.shape[0], x.shape[1], hx.shape[1])
    return out, h, (c if mode == "LSTM" else np.zeros(0, x.dtype)), ws


def rnn_layer_backward_reference(g_out, g_hy, g_cy, x, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr, out,
                                 ws, batch_sizes, mode, reverse):  # fmt: skip
    """Backpropagation through time from the forward's output and workspace."""
    data, sizes = _rows(x, batch_sizes)
    out2 = _rows(out, batch_sizes)[0]
    go = np.zeros_like(out2) if g_out is None else _rows(g_out, batch_sizes)[0]
    H = w_hh.shape[0] // _GATES[mode]
    n, G = data.shape[0], w_hh.shape[0]
    dh_state = np.zeros_like(hx) if g_hy is None else g_hy.copy()
    dc_state = (np.zeros_like(cx) if g_cy is None else g_cy.copy()) if mode == "LSTM" else None
    dG, dGh = np.zeros((n, G), x.dtype), np.zeros((n, G), x.dtype)
    h_prev, d_out = np.zeros((n, hx.shape[1]), x.dtype), np.zeros((n, hx.shape[1]), x.dtype)
    for _, bs, r0, shared, p0 in reversed(list(_order(sizes, reverse))):
        rows = slice(r0, r0 + bs)
        h_prev[r0 : r0 + shared] = out2[p0 : p0 + shared]
        h_prev[r0 + shared : r0 + bs] = hx[shared:bs]
        dh = dh_state[:bs] + go[rows]
        d_out[rows] = dh
        if w_hr is not None:
            dh = dh @ w_hr
        w = ws[rows]
        if mode == "LSTM":
            i, f, g, o, c = (w[:, k * H : (k + 1) * H] for k in range(5))
            c_prev = np.concatenate([ws[p0 : p0 + shared, 4 * H : 5 * H], cx[shared:bs]])
            tc = np.tanh(c)
            dc = dh * o * (1 - tc**2) + dc_state[:bs]
            dG[rows] = np.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f),
                                       dc * i * (1 - g**2), dh * tc * o * (1 - o)], 1)  # fmt: skip
            dGh[rows] = dG[rows]
            dc_state[:bs] = dc * f
            dh_state[:bs] = dGh[rows] @ w_hh
        elif mode == "GRU":
            r, z, nw, hn = (w[:, k * H : (k + 1) * H] for k in range(4))
            dn = dh * (1 - z) * (1 - nw**2)
            dz = dh * (h_prev[rows] - nw) * z * (1 - z)
            dr = dn * hn * r * (1 - r)
            dG[rows], dGh[rows] = (
                np.concatenate([dr, dz, dn], 1),
                np.concatenate([dr, dz, dn * r], 1),
            )
            dh_state[:bs] = dGh[rows] @ w_hh + dh * z
        else:
            o = out2[rows]
            dG[rows] = dh * (1 - o**2) if mode == "RNN_TANH" else dh * (o > 0)
            dGh[rows] = dG[rows]
            dh_state[:bs] = dGh[rows] @ w_hh
    empty = np.zeros(0, x.dtype)
    dx = dG @ w_ih
    return (
        dx if batch_sizes else dx.reshape(x.shape),
        dh_state,
        dc_state if mode == "LSTM" else empty,
        dG.T @ data,
        dGh.T @ h_prev,
        dG.sum(0) if b_ih is not None else empty,
        dGh.sum(0) if b_ih is not None else empty,
        d_out.T @ ws[:, 5 * H :] if w_hr is not None else empty,
    )


# (mode, steps, batch_sizes or None for padded, input, hidden, proj, bias, reverse)
_LAYERS = (  # small enough for finite differences (48 elements an array)
    ("LSTM", 2, None, 3, 2, 0, True, False),
    ("LSTM", 3, [2, 1, 1], 2, 2, 1, True, True),
    ("LSTM", 2, [2, 1], 2, 2, 0, False, False),
    ("GRU", 3, None, 2, 2, 0, True, True),
    ("GRU", 3, [2, 2, 1], 3, 2, 0, False, False),
    ("RNN_TANH", 3, [3, 1, 1], 2, 3, 0, True, False),
    ("RNN_RELU", 2, None, 3, 2, 0, True, True),
    ("LSTM", 0, None, 2, 2, 0, True, False),
)


def rnn_layer_samples(dtype, rng):
    for mode, steps, sizes, inp, hid, proj, bias, reverse in _LAYERS:
        m = lambda *shape, s=False: make(shape, dtype, rng, low=-1, high=1, noncontig=s)  # noqa: E731
        G, P = _GATES[mode] * hid, proj or hid
        batch = sizes[0] if sizes else 2
        x = m(sum(sizes), inp) if sizes else m(steps, batch, inp, s=True)
        biases = (m(G), m(G)) if bias else (None, None)
        cx = m(batch, hid) if mode == "LSTM" else None
        w_hr = m(P, hid) if proj else None
        args = (x, m(batch, P), cx, m(G, inp, s=True), m(G, P), *biases, w_hr, sizes or [], mode,
                reverse)  # fmt: skip
        yield Sample(args, note=f"{mode} {'packed' if sizes else 'padded'} proj={proj}"
                     f" reverse={reverse}")  # fmt: skip


def rnn_layer_backward_samples(dtype, rng):
    for s in rnn_layer_samples(dtype, rng):
        # The ReLU's kink at 0 makes finite differences of the backward meaningless.
        if s.args[-2] == "RNN_RELU":
            continue
        out, hy, cy, ws = rnn_layer_reference(*s.args)
        m = lambda a: make(a.shape, dtype, rng, low=-1, high=1)  # noqa: E731
        grads = (m(out), m(hy), m(cy) if s.args[-2] == "LSTM" else None)
        yield Sample((*grads, *s.args[:8], out, ws, *s.args[8:]), note=s.note)


TESTS += [
    OpTest(
        "_rnn_layer",
        lambda *a: flambeau._rnn_layer(*a)[:3],
        lambda *a: rnn_layer_reference(*a)[:3],
        rnn_layer_samples,
    ),
    OpTest(
        "_rnn_layer_backward",
        flambeau._rnn_layer_backward,
        rnn_layer_backward_reference,
        rnn_layer_backward_samples,
    ),
]
