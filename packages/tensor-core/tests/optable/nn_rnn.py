"""Rows for the fused LSTM and GRU cells, against NumPy statements of the cell
equations and of their derivatives worked out by hand."""

import numpy as np

import flambeau
from optable import OpTest, Sample, make


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
