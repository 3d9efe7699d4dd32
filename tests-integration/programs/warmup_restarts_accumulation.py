"""Gradient accumulation under a warmup + cosine-with-restarts schedule.

In the style of fine-tuning scripts: AdamW with two parameter groups (no weight decay
on biases and LayerNorm weights), loss divided by the number of accumulation steps and
backward() on each micro-batch, clip_grad_norm_ (its return value, the norm before
clipping, logged) before each optimizer step, and a schedule built from SequentialLR
over LinearLR warmup and CosineAnnealingWarmRestarts(T_0, T_mult=2), stepped once per
optimizer step. Checks that the accumulated gradient equals the full-batch gradient,
that clipping bounds the norm, every learning rate against the closed-form schedule,
get_last_lr(), and that the regression loss falls.
"""

import math

import flambeau as torch
import flambeau.nn as nn
import flambeau.nn.functional as F
from flambeau.optim.lr_scheduler import CosineAnnealingWarmRestarts, LinearLR, SequentialLR

BASE_LR, WARMUP, T_0, ETA_MIN = 1e-2, 5, 20, 1e-5
ACCUM, MICRO = 4, 32


class Regressor(nn.Module):
    def __init__(self, d_in=8, hidden=64):
        super().__init__()
        self.inp = nn.Linear(d_in, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.hidden = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        h = F.silu(self.norm(self.inp(x)))
        h = h + F.silu(self.hidden(h))
        return self.out(h).squeeze(-1)


def expected_lr(step):
    """The learning rate SequentialLR gives at optimizer step `step` (0-based)."""
    if step < WARMUP:
        return BASE_LR * (0.1 + 0.9 * step / WARMUP)
    t, period = step - WARMUP, T_0
    while t >= period:
        t -= period
        period *= 2
    return ETA_MIN + (BASE_LR - ETA_MIN) * (1 + math.cos(math.pi * t / period)) / 2


def target_fn(x):
    return torch.sin(2 * x[:, 0]) * x[:, 1] + 0.5 * x[:, 2] ** 2 - x[:, 3]


def main():
    torch.manual_seed(0)
    x = torch.randn(4096, 8)
    y = target_fn(x) + 0.05 * torch.randn(4096)
    x_val = torch.randn(512, 8)
    y_val = target_fn(x_val)

    model = Regressor()
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        (no_decay if name.endswith("bias") or "norm" in name else decay).append(param)
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
        lr=BASE_LR,
    )
    assert len(no_decay) == 5 and len(decay) == 3
    warmup = LinearLR(optimizer, start_factor=0.1, end_factor=1.0, total_iters=WARMUP)
    restarts = CosineAnnealingWarmRestarts(optimizer, T_0=T_0, T_mult=2, eta_min=ETA_MIN)
    scheduler = SequentialLR(optimizer, schedulers=[warmup, restarts], milestones=[WARMUP])

    # The accumulated micro-batch gradients are the gradient of the whole batch's mean loss.
    batch_x, batch_y = x[: ACCUM * MICRO], y[: ACCUM * MICRO]
    F.mse_loss(model(batch_x), batch_y).backward()
    full = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    for k in range(ACCUM):
        micro = slice(k * MICRO, (k + 1) * MICRO)
        (F.mse_loss(model(batch_x[micro]), batch_y[micro]) / ACCUM).backward()
    for p, g in zip(model.parameters(), full):
        assert torch.allclose(p.grad, g, atol=1e-6), (p.grad - g).abs().max()
    model.zero_grad()

    with torch.no_grad():
        val0 = F.mse_loss(model(x_val), y_val).item()
    total_steps = WARMUP + T_0 + 2 * T_0 + 4 * T_0
    perm = torch.randperm(x.size(0))
    micro_step, norms = 0, []
    for step in range(total_steps):
        lr = optimizer.param_groups[0]["lr"]
        assert abs(lr - expected_lr(step)) < 1e-9, (step, lr, expected_lr(step))
        assert scheduler.get_last_lr() == [lr, lr]
        for _ in range(ACCUM):
            idx = perm[(micro_step * MICRO) % 4096 : (micro_step * MICRO) % 4096 + MICRO]
            micro_step += 1
            loss = F.mse_loss(model(x[idx]), y[idx]) / ACCUM
            loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        clipped = torch.linalg.vector_norm(
            torch.stack([torch.linalg.vector_norm(p.grad) for p in model.parameters()])
        )
        assert clipped.item() <= 1.0 + 1e-4 and clipped.item() <= norm.item() + 1e-6
        norms.append(norm.item())
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        scheduler.step()
        if step % 30 == 0:
            with torch.no_grad():
                val = F.mse_loss(model(x_val), y_val).item()
            print(f"step {step:3d} lr {lr:.2e} grad norm {norm.item():.3f} val mse {val:.4f}")

    with torch.no_grad():
        val = F.mse_loss(model(x_val), y_val).item()
    print(f"val mse {val0:.4f} -> {val:.4f}")
    assert val < val0 / 5, (val0, val)
    assert any(n > 1.0 for n in norms[:10]), norms[:10]  # clipping did something early on
    # The restarts: the rate is back to its peak right after each cycle ends.
    assert abs(expected_lr(WARMUP + T_0) - BASE_LR) < 1e-12
    assert abs(expected_lr(WARMUP + 3 * T_0) - BASE_LR) < 1e-12


if __name__ == "__main__":
    main()
