"""The schedulers' lr sequences against closed forms, state_dict, the step-order warning."""

from __future__ import annotations

import math
import warnings

import pytest

import flambeau
from flambeau import optim
from flambeau.optim import lr_scheduler as S

LR = 0.1
N = 25


def make_opt(lr=LR, groups=1, cls=optim.SGD, **kw):
    ps = [{"params": [flambeau.zeros(2, requires_grad=True)]} for _ in range(groups)]
    return cls(ps, lr=lr, **kw)


def lrs(sched, opt, n=N):
    """The lr in use at epochs 0..n-1 (optimizer.step then scheduler.step)."""
    out = []
    for _ in range(n):
        out.append(opt.param_groups[0]["lr"])
        assert sched.get_last_lr()[0] == opt.param_groups[0]["lr"]
        opt.step()
        sched.step()
    return out


def close(a, b):
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b)):
        assert math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12), (i, x, y)


CLOSED = [
    ("LambdaLR", dict(lr_lambda=lambda e: 0.9**e + 0.1 * e), lambda e: LR * (0.9**e + 0.1 * e)),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.95), lambda e: LR * 0.95**e),
    ("StepLR", dict(step_size=3, gamma=0.5), lambda e: LR * 0.5 ** (e // 3)),
    (
        "MultiStepLR",
        dict(milestones=[2, 5, 5, 9], gamma=0.1),
        lambda e: LR * 0.1 ** sum(m <= e for m in [2, 5, 5, 9]),
    ),
    ("ConstantLR", dict(factor=0.5, total_iters=4), lambda e: LR * (0.5 if e < 4 else 1.0)),
    (
        "LinearLR",
        dict(start_factor=0.25, end_factor=0.75, total_iters=8),
        lambda e: LR * (0.25 + 0.5 * min(e, 8) / 8),
    ),
    ("ExponentialLR", dict(gamma=0.9), lambda e: LR * 0.9**e),
    ("PolynomialLR", dict(total_iters=10, power=2.0), lambda e: LR * (1 - min(e, 10) / 10) ** 2),
    (
        "CosineAnnealingLR",
        dict(T_max=10, eta_min=0.01),
        lambda e: 0.01 + (LR - 0.01) * (1 + math.cos(math.pi * e / 10)) / 2,
    ),
]


@pytest.mark.parametrize("name,kw,closed", CLOSED, ids=[c[0] for c in CLOSED])
def test_lr_sequence_matches_closed_form(name, kw, closed):
    opt = make_opt()
    sched = getattr(S, name)(opt, **kw)
    close(lrs(sched, opt), [closed(e) for e in range(N)])


@pytest.mark.parametrize("name,kw,closed", CLOSED[2:], ids=[c[0] for c in CLOSED[2:]])
def test_step_with_epoch_uses_closed_form(name, kw, closed):
    opt = make_opt()
    sched = getattr(S, name)(opt, **kw)
    opt.step()
    with pytest.warns(UserWarning, match="epoch parameter"):
        sched.step(7)
    close([opt.param_groups[0]["lr"]], [closed(7)])


def test_cosine_annealing_warm_restarts():
    opt = make_opt()
    sched = S.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.001)
    expected, t_cur, t_i = [], 0, 3
    for _ in range(N):
        expected.append(0.001 + (LR - 0.001) * (1 + math.cos(math.pi * t_cur / t_i)) / 2)
        t_cur += 1
        if t_cur >= t_i:
            t_cur, t_i = t_cur - t_i, t_i * 2
    close(lrs(sched, opt), expected)
    with pytest.raises(ValueError, match="positive integer T_0"):
        S.CosineAnnealingWarmRestarts(make_opt(), T_0=0)


def triangle(e, base, top, up, down):
    cycle = math.floor(1 + e / (up + down))
    x = 1 + e / (up + down) - cycle
    ratio = up / (up + down)
    scale = x / ratio if x <= ratio else (x - 1) / (ratio - 1)
    return cycle, scale


@pytest.mark.parametrize("mode", ["triangular", "triangular2", "exp_range"])
def test_cyclic_lr(mode):
    opt = make_opt(momentum=0.9)
    sched = S.CyclicLR(
        opt, base_lr=0.01, max_lr=0.1, step_size_up=4, step_size_down=2, mode=mode, gamma=0.9
    )
    expected, moms = [], []
    for e in range(N):
        cycle, scale = triangle(e, 0.01, 0.1, 4, 2)
        f = {"triangular": 1.0, "triangular2": 1 / 2 ** (cycle - 1), "exp_range": 0.9**e}[mode]
        expected.append(0.01 + 0.09 * scale * f)
        moms.append(0.9 - 0.1 * scale * f)
    got_m = []
    got = []
    for _ in range(N):
        got.append(opt.param_groups[0]["lr"])
        got_m.append(opt.param_groups[0]["momentum"])
        opt.step()
        sched.step()
    close(got, expected)
    close(got_m, moms)


def test_cyclic_lr_uses_beta1_for_adam():
    opt = make_opt(cls=optim.Adam)
    S.CyclicLR(opt, 0.01, 0.1, step_size_up=2)
    assert opt.param_groups[0]["betas"] == (0.9, 0.999)
    with pytest.raises(ValueError, match="momentum or beta1"):
        S.CyclicLR(make_opt(cls=optim.Adagrad), 0.01, 0.1)


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("three_phase", [False, True])
def test_one_cycle_lr(strategy, three_phase):
    total, top = 20, 1.0
    opt = make_opt(momentum=0.9)
    sched = S.OneCycleLR(
        opt,
        max_lr=top,
        total_steps=total,
        pct_start=0.25,
        anneal_strategy=strategy,
        three_phase=three_phase,
    )
    init, low = top / 25, top / 25 / 1e4

    def ann(a, b, pct):
        if strategy == "cos":
            return b + (a - b) / 2 * (math.cos(math.pi * pct) + 1)
        return (b - a) * pct + a

    if three_phase:
        phases = [
            (0.25 * total - 1, init, top),
            (0.5 * total - 2, top, init),
            (total - 1, init, low),
        ]
    else:
        phases = [(0.25 * total - 1, init, top), (total - 1, top, low)]
    expected = []
    for e in range(total):
        start = 0.0
        for i, (end, a, b) in enumerate(phases):
            if e <= end or i == len(phases) - 1:
                expected.append(ann(a, b, (e - start) / (end - start)))
                break
            start = end
    assert opt.param_groups[0]["momentum"] == pytest.approx(0.95)  # max_momentum at lr's low
    close(lrs(sched, opt, total), expected)
    with pytest.raises(ValueError, match="Tried to step"):
        sched.step()


def test_one_cycle_lr_errors():
    with pytest.raises(ValueError, match="total_steps OR"):
        S.OneCycleLR(make_opt(momentum=0.9), max_lr=1.0)
    with pytest.raises(ValueError, match="anneal_strategy"):
        S.OneCycleLR(make_opt(momentum=0.9), max_lr=1.0, total_steps=5, anneal_strategy="x")


def test_reduce_lr_on_plateau():
    opt = make_opt(lr=1.0)
    sched = S.ReduceLROnPlateau(opt, factor=0.5, patience=2, cooldown=1, min_lr=0.2)
    metrics = [10, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9]
    got = []
    for m in metrics:
        sched.step(m)
        got.append(opt.param_groups[0]["lr"])
    # Reduced after 3 bad epochs (patience 2); the cooldown epoch after it counts none.
    assert got == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25, 0.2]
    assert sched.get_last_lr() == [0.2]

    opt = make_opt(lr=1.0)
    sched = S.ReduceLROnPlateau(opt, mode="max", threshold=0.1, threshold_mode="abs", patience=0)
    sched.step(1.0)
    sched.step(1.05)  # not better by more than 0.1
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        S.ReduceLROnPlateau(opt, factor=1.0)


def test_sequential_lr():
    opt = make_opt()
    warm = S.LinearLR(opt, start_factor=0.5, total_iters=3)
    decay = S.ExponentialLR(opt, gamma=0.9)
    sched = S.SequentialLR(opt, [warm, decay], milestones=[3])
    expected = [LR * (0.5 + 0.5 * e / 3) for e in range(3)] + [
        LR * 0.9 ** (e - 3) for e in range(3, N)
    ]
    close(lrs(sched, opt), expected)
    with pytest.raises(ValueError, match="one more than the number of milestone"):
        S.SequentialLR(opt, [warm, decay], milestones=[1, 2])


def test_chained_scheduler():
    opt = make_opt()
    a = S.ConstantLR(opt, factor=0.5, total_iters=4)
    b = S.ExponentialLR(opt, gamma=0.9)
    sched = S.ChainedScheduler([a, b])
    expected = [LR * 0.9**e * (0.5 if e < 4 else 1.0) for e in range(N)]
    close(lrs(sched, opt), expected)


def test_multiple_groups_and_lambdas():
    opt = make_opt(groups=2)
    opt.param_groups[1]["lr"] = 1.0
    sched = S.LambdaLR(opt, [lambda e: 1.0, lambda e: 0.5**e])
    opt.step()
    sched.step()
    sched.step()
    assert sched.get_last_lr() == [LR, 0.25]
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        S.LambdaLR(opt, [lambda e: 1.0])


def test_scheduler_step_before_optimizer_step_warns():
    opt = make_opt()
    sched = S.StepLR(opt, step_size=2)
    with pytest.warns(UserWarning, match=r"lr_scheduler.step\(\)` before `optimizer.step\(\)"):
        sched.step()
    opt = make_opt()
    sched = S.StepLR(opt, step_size=2)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()


def test_scheduler_state_dict_round_trip():
    opt = make_opt()
    sched = S.StepLR(opt, step_size=3, gamma=0.5)
    lrs(sched, opt, 5)
    sd = sched.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 5
    opt2 = make_opt()
    sched2 = S.StepLR(opt2, step_size=1, gamma=0.1)
    sched2.load_state_dict(sd)
    assert (
        sched2.step_size == 3
        and sched2.last_epoch == 5
        and sched2.get_last_lr() == sched.get_last_lr()
    )

    class Scale:
        def __init__(self):
            self.k = 2.0

        def __call__(self, e):
            return self.k

    fn = Scale()
    lam = S.LambdaLR(make_opt(), [fn])
    fn.k = 3.0
    sd = lam.state_dict()
    fn.k = 5.0
    lam.load_state_dict(sd)
    assert fn.k == 3.0

    seq = S.SequentialLR(opt, [S.ConstantLR(opt), S.ExponentialLR(opt, 0.9)], milestones=[2])
    sd = seq.state_dict()
    assert len(sd["_schedulers"]) == 2 and "optimizer" not in sd["_schedulers"][0]


def test_resuming_needs_initial_lr():
    opt = make_opt()
    with pytest.raises(KeyError, match="initial_lr"):
        S.StepLR(opt, step_size=2, last_epoch=3)
