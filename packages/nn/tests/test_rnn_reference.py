"""The fused recurrent layers against the cell equations of PyTorch's documentation,
written in NumPy (float64), on sizes around the packed product's tiles: hidden sizes
that are not multiples of its 16-float panels, and batches of 1 to 37 rows (tiles of 6
and 12 rows and what they leave); gradients against finite differences (gradcheck)."""

import numpy as np
import pytest

import flambeau as F
from flambeau import nn


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def reference(kind, module, x):
    """Output of one layer of `kind` over x (T, B, I), from its parameters."""
    p = {k: v.detach().double().numpy() for k, v in module.named_parameters()}
    w_ih, w_hh, b_ih, b_hh = p["weight_ih_l0"], p["weight_hh_l0"], p["bias_ih_l0"], p["bias_hh_l0"]
    steps, batch, hidden = x.shape[0], x.shape[1], w_hh.shape[1]
    h, c, out = np.zeros((batch, hidden)), np.zeros((batch, hidden)), []
    for t in range(steps):
        xi, hh = x[t] @ w_ih.T + b_ih, h @ w_hh.T + b_hh
        if kind == "LSTM":
            i, f, g, o = np.split(xi + hh, 4, axis=1)
            c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
            h = sigmoid(o) * np.tanh(c)
        elif kind == "GRU":
            (xr, xz, xn), (hr, hz, hn) = np.split(xi, 3, axis=1), np.split(hh, 3, axis=1)
            r, z = sigmoid(xr + hr), sigmoid(xz + hz)
            n = np.tanh(xn + r * hn)
            h = (1 - z) * n + z * h
        else:
            h = np.tanh(xi + hh)
        out.append(h)
    return np.stack(out)


rng = np.random.default_rng(11)
HIDDEN_BATCH = ((1, 1), (5, 2), (16, 12), (17, 13), (20, 25), (33, 37), (48, 32))
SIZES = [(kind, hidden, batch) for kind in ("LSTM", "GRU", "RNN") for hidden, batch in HIDDEN_BATCH]


@pytest.mark.parametrize("kind, hidden, batch", SIZES)
def test_forward_matches_the_cell_equations(kind, hidden, batch):
    F.manual_seed(hidden * 100 + batch)
    module = getattr(nn, kind)(7, hidden)
    x = rng.standard_normal((4, batch, 7))
    with F.no_grad():
        out, _ = module(F.from_numpy(x.astype(np.float32)))
    np.testing.assert_allclose(out.numpy(), reference(kind, module, x), rtol=0, atol=2e-6)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_gradients_match_finite_differences(kind):
    F.manual_seed(3)
    module = getattr(nn, kind)(3, 17).double()
    x = F.randn(3, 13, 3, dtype=F.float64, requires_grad=True)
    h0 = F.randn(1, 13, 17, dtype=F.float64, requires_grad=True)

    def run(x, h0, w_hh):
        state = (h0, F.zeros_like(h0)) if kind == "LSTM" else h0
        out, _ = F.func.functional_call(module, {"weight_hh_l0": w_hh}, (x, state))
        return out

    w_hh = module.weight_hh_l0.detach().clone().requires_grad_()
    assert F.autograd.gradcheck(run, (x, h0, w_hh), eps=1e-6, atol=1e-6)
