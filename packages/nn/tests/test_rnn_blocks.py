"""The fused recurrent layers at sizes where the CPU kernel's blocking shows: hidden sizes
that span several 16-float blocks and end in a partial one, batches whose rows split into
register tiles unevenly (1, 7, 8, 13), packed sequences whose batch shrinks over time,
projections; against NumPy's step-by-step evaluation, gradients against central finite
differences along random directions."""

import numpy as np
import pytest
from _helpers import f64, np_of
from test_conv_rnn import np_gru_step, np_lstm_step, params

import flambeau
from flambeau import nn
from flambeau.nn.utils import rnn as rnn_utils


def np_layer(kind, p, x, h, c, lengths, proj):
    """One layer over (T, B, I) with per-sequence lengths (sorted, longest first)."""
    w = [p[f"{n}_l0"] for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    outs = np.zeros(x.shape[:2] + (h.shape[-1],))
    for t in range(x.shape[0]):
        live = sum(length > t for length in lengths)
        if kind == "LSTM":
            hn, cn = np_lstm_step(x[t, :live], h[:live], c[:live], *w)
            if proj:
                hn = hn @ p["weight_hr_l0"].T
            c = np.concatenate([cn, c[live:]])
        else:
            hn = np_gru_step(x[t, :live], h[:live], *w)
        h = np.concatenate([hn, h[live:]])
        outs[t, :live] = hn
    return outs, h, c


CASES = [
    ("LSTM", 37, 8, 0),
    ("LSTM", 33, 7, 0),
    ("LSTM", 16, 13, 0),
    ("LSTM", 40, 1, 0),
    ("LSTM", 37, 6, 11),
    ("GRU", 37, 7, 0),
    ("GRU", 20, 8, 0),
    ("GRU", 20, 11, 0),
    ("LSTM", 17, 2, 0),
]


@pytest.mark.parametrize("kind, hidden, batch, proj", CASES)
@pytest.mark.parametrize("packed", [False, True])
def test_layer_matches_numpy(kind, hidden, batch, proj, packed):
    flambeau.manual_seed(hidden + batch)
    options = {"proj_size": proj} if proj else {}
    m = getattr(nn, kind)(5, hidden, dtype=flambeau.float64, **options)
    p = params(m)
    rng = np.random.default_rng(batch)
    T, out_size = 6, proj or hidden
    x = rng.standard_normal((T, batch, 5))
    h0 = rng.standard_normal((1, batch, out_size))
    c0 = rng.standard_normal((1, batch, hidden))
    lengths = sorted(rng.integers(1, T + 1, batch), reverse=True) if packed else [T] * batch
    lengths[0] = T
    state = (f64(h0), f64(c0)) if kind == "LSTM" else f64(h0)
    if packed:
        seq = rnn_utils.pack_padded_sequence(f64(x), list(lengths))
        out, hy = m(seq, state)
        out = rnn_utils.pad_packed_sequence(out)[0]
    else:
        out, hy = m(f64(x), state)
    ref, ref_h, ref_c = np_layer(kind, p, x, h0[0], c0[0], lengths, proj)
    np.testing.assert_allclose(np_of(out), ref, rtol=1e-10, atol=1e-12)
    if kind == "LSTM":
        np.testing.assert_allclose(np_of(hy[0])[0], ref_h, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(np_of(hy[1])[0], ref_c, rtol=1e-10, atol=1e-12)
    else:
        np.testing.assert_allclose(np_of(hy)[0], ref_h, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind, hidden, batch, proj", CASES[:2] + CASES[4:6])
def test_gradients_match_finite_differences(kind, hidden, batch, proj):
    flambeau.manual_seed(hidden)
    options = {"proj_size": proj} if proj else {}
    m = getattr(nn, kind)(5, hidden, dtype=flambeau.float64, **options)
    rng = np.random.default_rng(hidden)
    x = f64(rng.standard_normal((4, batch, 5)), True)
    weights = [x, m.weight_hh_l0, m.weight_ih_l0, m.bias_hh_l0]
    probe = rng.standard_normal((4, batch, proj or hidden))

    def loss():
        out, _ = m(x)
        return (out * f64(probe, False)).sum()

    loss().backward()
    for w in weights:
        direction = rng.standard_normal(tuple(w.shape))
        analytic = float((np_of(w.grad) * direction).sum())
        eps = 1e-6
        base = np_of(w).copy()
        with flambeau.no_grad():
            w.copy_(f64(base + eps * direction, False))
            up = float(loss())
            w.copy_(f64(base - eps * direction, False))
            down = float(loss())
            w.copy_(f64(base, False))
        assert abs((up - down) / (2 * eps) - analytic) <= 1e-6 * max(1.0, abs(analytic))
