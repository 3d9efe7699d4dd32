"""Scaled dot-product attention and the recurrent kernels on CUDA against flambeau's
CPU kernels: attention with and without masks (bool and additive, broadcast), causal,
grouped-query heads, fully masked rows, dropout (the same Philox lanes drop the same
weights for a seed), with the gradients of q, k and v; the fused LSTM and GRU cells;
and whole LSTM/GRU/RNN layers (several layers, bidirectional, projections, packed
sequences of decreasing lengths) with every gradient, and a few training steps."""

from __future__ import annotations

import copy

import pytest
from samples import DEVICE, assert_close, sample

import flambeau
import flambeau.nn as nn
import flambeau.nn.functional as F

COMPUTE = [flambeau.float32, flambeau.float64]


def _tol(dtype):
    return (2e-4, 2e-5) if dtype == flambeau.float32 else (1e-10, 1e-10)


def _grads(fn, *inputs, extra=()):
    """fn(*inputs, *extra) and the gradients of a weighted sum of it for every input."""
    leaves = [x.detach().clone().requires_grad_(True) for x in inputs]
    out = fn(*leaves, *extra)
    g = flambeau.Generator().manual_seed(7)
    weights = flambeau.randn(out.shape, generator=g, dtype=out.dtype).to(out.device)
    (out * weights).sum().backward()
    return [out.detach()] + [x.grad for x in leaves]


def _compare(fn, *inputs, dtype=flambeau.float32, seed=None):
    if seed is not None:
        flambeau.manual_seed(seed)
    want = _grads(fn, *inputs)
    if seed is not None:
        flambeau.manual_seed(seed)
    got = _grads(fn, *[x.to(DEVICE) for x in inputs])
    for g, w in zip(got, want):
        assert_close(g, w, *_tol(dtype))


# ---- attention ---------------------------------------------------------------------


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", COMPUTE)
def test_attention_forward_and_gradients(dtype, causal):
    q = sample(dtype, (2, 3, 7, 8), scale=1.0)
    k = sample(dtype, (2, 3, 9, 8), seed=2, scale=1.0)
    v = sample(dtype, (2, 3, 9, 5), seed=3, scale=1.0)
    _compare(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
        q,
        k,
        v,
        dtype=dtype,
    )


@pytest.mark.parametrize("dtype", COMPUTE)
def test_attention_masks(dtype):
    q = sample(dtype, (2, 2, 6, 4), scale=1.0)
    k = sample(dtype, (2, 2, 5, 4), seed=2, scale=1.0)
    v = sample(dtype, (2, 2, 5, 3), seed=3, scale=1.0)
    bool_mask = sample(flambeau.float32, (6, 5), seed=4) > -0.5
    bool_mask[2] = False  # a fully masked row: zero weights and no gradient
    add_mask = sample(dtype, (2, 1, 6, 5), seed=5)
    for mask in (bool_mask, add_mask):
        want = _grads(F.scaled_dot_product_attention, q, k, v, extra=(mask,))
        dev = [t.to(DEVICE) for t in (q, k, v)]
        got = _grads(F.scaled_dot_product_attention, *dev, extra=(mask.to(DEVICE),))
        for g, w in zip(got, want):
            assert_close(g, w, *_tol(dtype))


def test_attention_grouped_query_heads_and_strided_inputs():
    q = sample(flambeau.float32, (2, 4, 6, 8), scale=1.0)
    k = sample(flambeau.float32, (2, 2, 6, 8), seed=2, scale=1.0)
    v = sample(flambeau.float32, (2, 2, 6, 8), seed=3, scale=1.0)
    _compare(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), q, k, v)
    # Heads interleaved in memory (a transposed view), and a broadcast key.
    qt = sample(flambeau.float32, (2, 6, 4, 8), scale=1.0).transpose(1, 2)
    kb = sample(flambeau.float32, (1, 1, 6, 8), seed=2).expand(2, 4, 6, 8)
    _compare(lambda q, k, v: F.scaled_dot_product_attention(q, k, v), qt, kb, q)


def test_attention_dropout_drops_the_cpu_elements():
    q = sample(flambeau.float64, (2, 2, 5, 4), scale=1.0)
    k = sample(flambeau.float64, (2, 2, 7, 4), seed=2, scale=1.0)
    v = sample(flambeau.float64, (2, 2, 7, 3), seed=3, scale=1.0)
    _compare(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, dropout_p=0.3),
        q,
        k,
        v,
        dtype=flambeau.float64,
        seed=11,
    )


# ---- recurrent cells and layers ------------------------------------------------------


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", COMPUTE)
def test_lstm_and_gru_cells(dtype, bias):
    x = sample(dtype, (4, 3), scale=1.0)
    h, c = sample(dtype, (4, 5), seed=2), sample(dtype, (4, 5), seed=3)
    flambeau.manual_seed(0)
    lstm = nn.LSTMCell(3, 5, bias=bias).to(dtype)
    lstm_d = copy.deepcopy(lstm).to(DEVICE)
    _compare_module(_lstm_cell_outputs, lstm, lstm_d, x, h, c)
    gru = nn.GRUCell(3, 5, bias=bias).to(dtype)
    gru_d = copy.deepcopy(gru).to(DEVICE)
    _compare_module(lambda m, x, h: m(x, h), gru, gru_d, x, h)


def _lstm_cell_outputs(cell, x, h, c):
    hy, cy = cell(x, (h, c))
    return flambeau.cat([hy, cy], dim=1)


def _compare_module(fn, module, module_d, *inputs):
    """fn(module, *inputs) on both devices: outputs, input gradients and parameter
    gradients."""
    want = _grads(lambda *xs: fn(module, *xs), *inputs)
    got = _grads(lambda *xs: fn(module_d, *xs), *[x.to(DEVICE) for x in inputs])
    dtype = inputs[0].dtype
    for g, w in zip(got, want):
        assert_close(g, w, *_tol(dtype))
    for p, pd in zip(module.parameters(), module_d.parameters()):
        assert_close(pd.grad, p.grad, *_tol(dtype))


LAYERS = [
    (nn.LSTM, {}),
    (nn.LSTM, {"num_layers": 2, "bidirectional": True}),
    (nn.LSTM, {"proj_size": 3}),
    (nn.GRU, {"num_layers": 2}),
    (nn.GRU, {"bidirectional": True, "bias": False}),
    (nn.RNN, {"nonlinearity": "tanh"}),
    (nn.RNN, {"nonlinearity": "relu", "bidirectional": True}),
]


@pytest.mark.parametrize("cls, kwargs", LAYERS)
@pytest.mark.parametrize("dtype", COMPUTE)
def test_rnn_layers_forward_and_gradients(dtype, cls, kwargs):
    flambeau.manual_seed(0)
    m = cls(4, 5, **kwargs).to(dtype)
    md = copy.deepcopy(m).to(DEVICE)
    x = sample(dtype, (6, 3, 4), scale=1.0)
    _compare_module(lambda mod, x: mod(x)[0], m, md, x)


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU])
def test_rnn_layers_over_packed_sequences(cls):
    flambeau.manual_seed(0)
    m = cls(4, 5, bidirectional=True)
    md = copy.deepcopy(m).to(DEVICE)
    x = sample(flambeau.float32, (6, 3, 4), scale=1.0)
    lengths = flambeau.tensor([6, 4, 1])

    def run(mod, x):
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=True)
        out, _ = mod(packed)
        return nn.utils.rnn.pad_packed_sequence(out)[0]

    _compare_module(run, m, md, x)


def test_lstm_trains_like_the_cpu():
    x = sample(flambeau.float32, (8, 4, 3), scale=1.0)
    y = sample(flambeau.float32, (4, 2), seed=2)

    def train(model, head, x, y):
        opt = flambeau.optim.Adam(list(model.parameters()) + list(head.parameters()), lr=0.05)
        losses = []
        for _ in range(5):
            opt.zero_grad()
            out, _ = model(x)
            loss = F.mse_loss(head(out[-1]), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    flambeau.manual_seed(0)
    model, head = nn.LSTM(3, 6), nn.Linear(6, 2)
    model_d, head_d = copy.deepcopy(model).to(DEVICE), copy.deepcopy(head).to(DEVICE)
    want = train(model, head, x, y)
    got = train(model_d, head_d, x.to(DEVICE), y.to(DEVICE))
    assert got[-1] < got[0]
    for g, w in zip(got, want):
        assert abs(g - w) <= 1e-4 * max(1.0, abs(w)), (got, want)
