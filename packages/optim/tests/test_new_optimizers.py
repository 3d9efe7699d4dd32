"""Adafactor, Muon, SparseAdam, swap_in_optimizer_params_and_state, and LBFGS with
parameters that get no gradient: each against independent NumPy updates or hand-derived
values."""

from __future__ import annotations

import math

import numpy as np
import pytest

import flambeau
from flambeau import optim

RNG = np.random.default_rng(0)


def _params(*arrays):
    return [flambeau.tensor(a, dtype=flambeau.float64, requires_grad=True) for a in arrays]


def _set_grads(params, grads):
    for p, g in zip(params, grads):
        p.grad = flambeau.tensor(g, dtype=flambeau.float64)


# -- Adafactor ------------------------------------------------------------------------------


def _adafactor_reference(x, g, s, t, lr, beta2_decay, eps1, eps2, d, wd, maximize):
    """The published algorithm with PyTorch's lr, eps1 and weight-decay choices."""
    g = -g if maximize else g
    decay = t**beta2_decay
    rho = min(lr, 1 / math.sqrt(t))
    alpha = max(eps2, np.sqrt(np.mean(x * x))) * rho
    x *= 1 - lr * wd
    if g.ndim > 1:
        s.setdefault("r", np.zeros(g.shape[:-1] + (1,)))
        s.setdefault("c", np.zeros(g.shape[:-2] + (1, g.shape[-1])))
        s["r"] += decay * ((g * g).mean(axis=-1, keepdims=True) - s["r"])
        s["c"] += decay * ((g * g).mean(axis=-2, keepdims=True) - s["c"])
        v = s["r"] * s["c"] / np.maximum(s["r"].mean(axis=-2, keepdims=True), eps1)
    else:
        s.setdefault("v", np.zeros_like(g))
        s["v"] += decay * (g * g - s["v"])
        v = s["v"].copy()
    u = g / np.sqrt(np.maximum(v, eps1 * eps1))
    denom = max(1.0, np.sqrt(np.mean(u * u)) / d)
    x -= alpha / denom * u


@pytest.mark.parametrize(
    "opts",
    [
        {},
        {"lr": 0.5, "weight_decay": 0.1, "d": 1.5, "eps": (1e-20, 1e-2), "maximize": True},
        {"beta2_decay": -0.5, "eps": (1e-3, 1e-3)},  # a large eps1: the floors matter
    ],
)
def test_adafactor_matches_the_algorithm(opts):
    shapes = [(4, 3), (2, 4, 3), (5,)]
    xs = [RNG.standard_normal(s) for s in shapes]
    params = _params(*xs)
    opt = optim.Adafactor(params, **opts)
    lr = opts.get("lr", 1e-2)
    eps1, eps2 = opts.get("eps", (None, 1e-3))
    eps1 = np.finfo(np.float64).eps if eps1 is None else eps1
    states = [{} for _ in xs]
    for t in range(1, 5):
        grads = [RNG.standard_normal(s) for s in shapes]
        _set_grads(params, grads)
        opt.step()
        for x, g, s in zip(xs, grads, states):
            _adafactor_reference(
                x,
                g,
                s,
                t,
                lr,
                opts.get("beta2_decay", -0.8),
                eps1,
                eps2,
                opts.get("d", 1.0),
                opts.get("weight_decay", 0.0),
                opts.get("maximize", False),
            )
        for p, x in zip(params, xs):
            np.testing.assert_allclose(p.detach().numpy(), x, rtol=1e-12, atol=1e-14)
    state = opt.state[params[0]]
    assert state["step"].item() == 4.0
    assert tuple(state["row_var"].shape) == (4, 1) and tuple(state["col_var"].shape) == (1, 3)
    assert "variance" in opt.state[params[2]]


def test_adafactor_first_step_by_hand():
    # One vector parameter, t = 1: the decay is 1, so V = g^2 and U = g / |g| = sign(g);
    # RMS(U) = 1 needs no clipping, and the step is max(eps2, RMS(x)) * min(lr, 1).
    (p,) = _params(np.array([3.0, -4.0]))
    opt = optim.Adafactor([p], lr=0.1)
    _set_grads([p], [np.array([0.5, 2.0])])
    opt.step()
    rms = math.sqrt((9 + 16) / 2)
    np.testing.assert_allclose(p.detach().numpy(), [3.0 - 0.1 * rms, -4.0 - 0.1 * rms])


def test_adafactor_argument_checks():
    (p,) = _params(np.ones(2))
    for kwargs, match in [
        ({"lr": -1.0}, "Learning rate should be >= 0"),
        ({"beta2_decay": 0.5}, "beta2_decay should be <= 0"),
        ({"eps": (-1.0, 1e-3)}, "epsilon1 should be >= 0"),
        ({"eps": (None, -1.0)}, "epsilon2 should be >= 0"),
        ({"d": 0.5}, "Clipping threshold d should be >= 1"),
        ({"weight_decay": -0.1}, "weight_decay should be >= 0"),
    ]:
        with pytest.raises(ValueError, match=match):
            optim.Adafactor([p], **kwargs)
    c = flambeau.ones(2, dtype=flambeau.complex128, requires_grad=True)
    opt = optim.Adafactor([c])
    c.grad = flambeau.ones(2, dtype=flambeau.complex128)
    with pytest.raises(RuntimeError, match="does not support complex"):
        opt.step()


# -- Muon -----------------------------------------------------------------------------------


def _newton_schulz(b, coefficients=(3.4445, -4.775, 2.0315), steps=5, eps=1e-7):
    a_, b_, c_ = coefficients
    tall = b.shape[0] > b.shape[1]
    x = b.T if tall else b
    x = x / max(np.linalg.norm(x), eps)
    for _ in range(steps):
        gram = x @ x.T
        x = a_ * x + (b_ * gram + c_ * gram @ gram) @ x
    return x.T if tall else x


def test_newton_schulz_approximately_orthogonalizes():
    from flambeau.optim.muon import _orthogonalize

    g = RNG.standard_normal((6, 4))
    out = _orthogonalize(flambeau.tensor(g), (3.4445, -4.775, 2.0315), 5, 1e-7)
    assert out.dtype == flambeau.bfloat16 and tuple(out.shape) == (6, 4)
    got = out.to(flambeau.float64).numpy()
    # bfloat16 keeps ~3 significant digits through five iterations.
    np.testing.assert_allclose(got, _newton_schulz(g), atol=0.05)
    sv = np.linalg.svd(got, compute_uv=False)
    assert sv.min() > 0.3 and sv.max() < 1.6  # singular values pushed towards 1


@pytest.mark.parametrize("nesterov, rule", [(True, None), (False, "match_rms_adamw")])
def test_muon_steps(nesterov, rule):
    # A generator of its own: the module's RNG would make the draws depend on which tests
    # ran before on the same worker, and bfloat16's error on some draws nears the bound.
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 3))
    (p,) = _params(x)
    lr, wd, mu = 0.02, 0.1, 0.95
    opt = optim.Muon([p], lr=lr, weight_decay=wd, momentum=mu, nesterov=nesterov, adjust_lr_fn=rule)
    buf = np.zeros_like(x)
    scale = math.sqrt(5 / 3) if rule is None else 0.2 * math.sqrt(5)
    for _ in range(3):
        g = rng.standard_normal((5, 3))
        _set_grads([p], [g])
        before = p.detach().numpy().copy()  # each step from where the last one ended
        opt.step()
        buf = mu * buf + (1 - mu) * g
        update = g + mu * (buf - g) if nesterov else buf
        x = before * (1 - lr * wd) - lr * scale * _newton_schulz(update)
        # The orthogonalization runs in bfloat16: about 5% of the step.
        np.testing.assert_allclose(p.detach().numpy(), x, atol=lr * scale * 0.05)
    np.testing.assert_allclose(opt.state[p]["momentum_buffer"].numpy(), buf, rtol=1e-12)


def test_muon_argument_checks():
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        optim.Muon(_params(np.ones(3)))
    (p,) = _params(np.ones((2, 2)))
    with pytest.raises(ValueError, match="momentum should be >= 0"):
        optim.Muon([p], momentum=-1)
    with pytest.raises(ValueError, match="Adjust learning rate function x is not supported"):
        optim.Muon([p], adjust_lr_fn="x")


# -- SparseAdam -----------------------------------------------------------------------------


class _SparseRows:
    """A stand-in COO gradient (PyTorch's sparse interface): rows ``idx`` of a dense
    shape hold ``vals``; repeated rows add up (coalesce sums them)."""

    is_sparse = True

    def __init__(self, idx, vals):
        self.idx, self.vals = np.asarray(idx), np.asarray(vals, dtype=np.float64)

    def coalesce(self):
        rows = np.unique(self.idx)
        vals = np.stack([self.vals[self.idx == r].sum(axis=0) for r in rows])
        return _SparseRows(rows, vals)

    def _indices(self):
        return flambeau.tensor(self.idx[None, :], dtype=flambeau.int64)

    def _values(self):
        return flambeau.tensor(self.vals, dtype=flambeau.float64)


def test_sparse_adam_updates_only_the_rows_it_is_given():
    x = RNG.standard_normal((4, 2))
    (p,) = _params(x)
    opt = optim.SparseAdam([p], lr=0.1)
    m, v = np.zeros_like(x), np.zeros_like(x)
    b1, b2, eps = 0.9, 0.999, 1e-8
    for t, (idx, vals) in enumerate(
        [([1, 3, 1], RNG.standard_normal((3, 2))), ([0, 3], RNG.standard_normal((2, 2)))], 1
    ):
        # Past .grad's checks (a Tensor of p's size), by the core's unchecked setter:
        # the stand-in is not a tensor.
        flambeau._grad._RAW_GRAD.__set__(p, _SparseRows(idx, vals))
        opt.step()
        dense = np.zeros_like(x)
        np.add.at(dense, idx, vals)
        rows = np.unique(idx)
        m[rows] = b1 * m[rows] + (1 - b1) * dense[rows]
        v[rows] = b2 * v[rows] + (1 - b2) * dense[rows] ** 2
        step = 0.1 * math.sqrt(1 - b2**t) / (1 - b1**t)
        x[rows] -= step * m[rows] / (np.sqrt(v[rows]) + eps)
        np.testing.assert_allclose(p.detach().numpy(), x, rtol=1e-12)
    assert opt.state[p]["step"] == 2
    np.testing.assert_allclose(opt.state[p]["exp_avg"].numpy(), m)


def test_sparse_adam_refuses_dense_gradients_as_pytorch_does():
    (p,) = _params(np.ones(3))
    opt = optim.SparseAdam([p])
    (p * 2).sum().backward()
    with pytest.raises(RuntimeError, match="does not support dense gradients"):
        opt.step()
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.SparseAdam([p], lr=0.0)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        optim.SparseAdam([p], betas=(0.9, 1.0))
    c = flambeau.ones(2, dtype=flambeau.complex128, requires_grad=True)
    with pytest.raises(ValueError, match=r"Complex params at indices \[\[0, 0\]\]"):
        optim.SparseAdam([c])


# -- swap_in_optimizer_params_and_state ------------------------------------------------------


def test_swap_in_runs_a_step_on_other_tensors_and_restores():
    a, b = _params(np.array([1.0, 2.0]), np.array([3.0]))
    opt = optim.SGD([a, b], lr=0.1, momentum=0.9)
    _set_grads([a, b], [np.array([1.0, 1.0]), np.array([1.0])])
    opt.step()  # state: momentum buffers = the gradients
    live_state = opt.state
    live_params = opt.param_groups[0]["params"]
    sd = opt.state_dict()
    sd["param_groups"][0]["lr"] = 1.0
    sd["state"] = {
        k: {n: v.clone() if isinstance(v, flambeau.Tensor) else v for n, v in s.items()}
        for k, s in sd["state"].items()
    }
    a2, b2 = _params(np.array([10.0, 20.0]), np.array([30.0]))
    _set_grads([a2, b2], [np.array([2.0, 0.0]), np.array([-1.0])])
    with optim.swap_in_optimizer_params_and_state(opt, {"a": a2, "b": b2}, sd):
        assert opt.param_groups[0]["params"] == [a2, b2] and opt.param_groups[0]["lr"] == 1.0
        opt.step()
    # buf = 0.9 * buf + g; p -= lr * buf, with the swapped-in lr = 1.
    np.testing.assert_allclose(a2.detach().numpy(), [10.0 - 2.9, 20.0 - 0.9])
    np.testing.assert_allclose(b2.detach().numpy(), [30.0 - (-0.1)])
    np.testing.assert_allclose(sd["state"][0]["momentum_buffer"].numpy(), [2.9, 0.9])
    # The live optimizer is untouched.
    assert opt.state is live_state and opt.param_groups[0]["params"] is live_params
    assert opt.param_groups[0]["lr"] == 0.1
    np.testing.assert_allclose(a.detach().numpy(), [0.9, 1.9])
    np.testing.assert_allclose(live_state[a]["momentum_buffer"].numpy(), [1.0, 1.0])


def test_swap_in_checks():
    (a,) = _params(np.ones(2))
    opt = optim.SGD([a], lr=0.1, momentum=0.9)
    with pytest.raises(RuntimeError, match="requires initialized optimizer state"):
        with optim.swap_in_optimizer_params_and_state(opt, {"a": a}, opt.state_dict()):
            pass
    _set_grads([a], [np.ones(2)])
    opt.step()
    sd = opt.state_dict()
    bad = {"state": sd["state"], "param_groups": [dict(sd["param_groups"][0], extra=1)]}
    with pytest.raises(RuntimeError, match="Keys only in swap-in: \\['extra'\\]"):
        with optim.swap_in_optimizer_params_and_state(opt, {"a": a}, bad):
            pass
    with pytest.raises(RuntimeError, match="different number of parameter groups"):
        with optim.swap_in_optimizer_params_and_state(
            opt, {"a": a}, {"state": {}, "param_groups": []}
        ):
            pass
    with pytest.raises(RuntimeError, match="extra keys \\[7\\]"):
        with optim.swap_in_optimizer_params_and_state(
            opt, {"a": a}, {"state": {7: {}}, "param_groups": sd["param_groups"]}
        ):
            pass


# -- LBFGS with parameters that get no gradient ----------------------------------------------


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_with_a_parameter_without_gradient(line_search_fn):
    x, unused = _params(np.array([1.5, 2.0]), np.array([3.0]))
    opt = optim.LBFGS([x, unused], max_iter=1, line_search_fn=line_search_fn)

    def closure():
        opt.zero_grad()
        loss = ((x - 1) ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    assert unused.grad is None
    np.testing.assert_allclose(unused.detach().numpy(), [3.0])
    if line_search_fn is None:
        # g = 2 (x - 1) = [1, 2]; the first step is min(1, 1 / |g|_1) = 1/3 along -g.
        np.testing.assert_allclose(x.detach().numpy(), [1.5 - 1 / 3, 2.0 - 2 / 3])
    for _ in range(3):
        opt.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), [1.0, 1.0], atol=1e-6)


def test_lbfgs_when_no_parameter_has_a_gradient():
    (x,) = _params(np.array([1.5, 2.0]))
    opt = optim.LBFGS([x])
    calls = []

    def closure():
        calls.append(1)
        return flambeau.tensor(0.0)

    opt.step(closure)
    assert calls == [1]  # a zero gradient is optimal: one evaluation, no move
    np.testing.assert_allclose(x.detach().numpy(), [1.5, 2.0])
