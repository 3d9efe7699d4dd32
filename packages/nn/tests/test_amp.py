"""nn under flambeau.autocast: layers and functions run in the dtype PyTorch's CPU
autocast gives them, and a model trains with autocast and GradScaler."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau
import flambeau.nn as nn
import flambeau.nn.functional as F

F32, BF16 = flambeau.float32, flambeau.bfloat16


def bf16_round(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest bfloat16 (ties to even), as float64."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32).astype(np.float64)


def rand(*shape, seed):
    return flambeau.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype("f4"))


def test_linear_casts_input_weight_and_bias():
    x, w, b = rand(4, 5, seed=0), rand(3, 5, seed=1), rand(3, seed=2)
    with flambeau.autocast("cpu"):
        out = F.linear(x, w, b)
        assert F.linear(x, w).dtype == BF16
    assert out.dtype == BF16  # the bias is cast too: bfloat16 + float32 would give float32
    rx, rw, rb = (bf16_round(t.numpy()) for t in (x, w, b))
    np.testing.assert_allclose(out.float().numpy(), rx @ rw.T + rb, rtol=2**-7, atol=2**-6)
    assert F.linear(x, w, b).dtype == F32


def test_layers():
    flambeau.manual_seed(0)
    layers = [
        (nn.Linear(4, 3), rand(2, 4, seed=3)),
        (nn.Conv2d(2, 3, 3), rand(1, 2, 5, 5, seed=4)),
        (nn.Conv1d(2, 3, 2), rand(1, 2, 5, seed=5)),
        (nn.ConvTranspose2d(2, 3, 2), rand(1, 2, 3, 3, seed=6)),
        (nn.PReLU(), rand(2, 4, seed=7)),
    ]
    with flambeau.autocast("cpu"):
        for layer, x in layers:
            assert layer(x).dtype == BF16, layer
        # Unlisted layers keep their input's dtype; listed losses run in float32.
        assert nn.ReLU()(rand(3, seed=8)).dtype == F32
        low = rand(4, 3, seed=9).to(BF16)
        assert F.cross_entropy(low, flambeau.tensor([0, 1, 2, 0])).dtype == F32
        assert F.mse_loss(low, low).dtype == F32
        assert F.margin_ranking_loss(low[:, 0], low[:, 1], flambeau.ones(4)).dtype == F32
    for layer, x in layers:
        assert layer(x).dtype == F32


def test_recurrent_layers_under_autocast_have_pytorchs_dtypes():
    # PyTorch's CPU autocast runs LSTM and RNN in bfloat16 (inputs, states, weights and
    # outputs) and leaves GRU in float32; the results stay close to the float32 run, and
    # gradients reach the float32 parameters.
    flambeau.manual_seed(0)
    x = rand(3, 2, 4, seed=10)
    for layer, dtype in ((nn.LSTM(4, 5, proj_size=3), BF16), (nn.GRU(4, 5), F32),
                         (nn.RNN(4, 5), BF16)):  # fmt: skip
        with flambeau.autocast("cpu"):
            out, hidden = layer(x)
        reference, _ = layer(x)
        states = hidden if isinstance(hidden, tuple) else (hidden,)
        assert out.dtype == dtype and all(h.dtype == dtype for h in states)
        np.testing.assert_allclose(
            out.float().detach().numpy(), reference.detach().numpy(), rtol=0.05, atol=0.02
        )
        out.float().sum().backward()
        assert layer.weight_ih_l0.grad.dtype == F32


def test_training_with_autocast_and_grad_scaler_reduces_the_loss():
    optim = pytest.importorskip("flambeau.optim")
    flambeau.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 8)).astype("f4")
    y = (x @ rng.standard_normal((8, 1)).astype("f4") > 0).astype(np.int64).ravel()
    x, y = flambeau.from_numpy(x), flambeau.from_numpy(y)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    opt = optim.SGD(model.parameters(), lr=0.5)
    scaler = flambeau.amp.GradScaler("cpu", init_scale=2.0**8, growth_interval=10)
    losses = []
    for _ in range(40):
        opt.zero_grad()
        with flambeau.autocast("cpu"):
            logits = model(x)
            assert logits.dtype == BF16
            loss = F.cross_entropy(logits, y)
        scaler.scale(loss).backward()
        assert all(p.grad.dtype == F32 for p in model.parameters())
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    assert scaler.get_scale() > 2.0**8  # 40 clean steps grew the scale 4 times
    assert all(p.dtype == F32 for p in model.parameters())


def test_grad_scaler_skips_a_step_with_an_overflowing_gradient():
    optim = pytest.importorskip("flambeau.optim")
    layer = nn.Linear(2, 1)
    opt = optim.SGD(layer.parameters(), lr=0.1)
    before = [p.detach().clone() for p in layer.parameters()]
    scaler = flambeau.amp.GradScaler("cpu", init_scale=1e38)
    loss = layer(flambeau.full((1, 2), 1e10)).sum()
    scaler.scale(loss).backward()  # 1e10 * 1e38 overflows float32
    scaler.step(opt)
    scaler.update()
    for p, q in zip(layer.parameters(), before):
        assert flambeau.equal(p.detach(), q)
    assert scaler.get_scale() == pytest.approx(5e37, rel=1e-6)
