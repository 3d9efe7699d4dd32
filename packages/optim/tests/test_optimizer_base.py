"""The Optimizer base: parameter groups, zero_grad, hooks, state_dict, errors."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau
from flambeau import optim

ALL = [
    "SGD",
    "Adam",
    "AdamW",
    "Adamax",
    "NAdam",
    "RAdam",
    "RMSprop",
    "Adagrad",
    "Adadelta",
    "Rprop",
    "ASGD",
]
OPTS = {
    "SGD": dict(lr=0.1, momentum=0.9),
    "RMSprop": dict(momentum=0.5, centered=True),
    "Adam": dict(amsgrad=True),
}


def params(seed=0, dtype=flambeau.float64):
    rng = np.random.default_rng(seed)
    return [
        flambeau.from_numpy(rng.uniform(-1, 1, s)).to(dtype).requires_grad_()
        for s in [(3, 2), (4,)]
    ]


def set_grads(ps, seed):
    rng = np.random.default_rng(seed)
    for p in ps:
        p.grad = flambeau.from_numpy(rng.normal(size=tuple(p.shape))).to(p.dtype)


def run(opt, ps, seeds):
    for s in seeds:
        set_grads(ps, s)
        opt.step()


def test_param_groups_take_defaults_and_overrides():
    a, b = params()
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["params"] == [b] or opt.param_groups[1]["params"][0] is b
    assert opt.param_groups[0]["momentum"] == 0.9
    c = flambeau.zeros(2, requires_grad=True)
    opt.add_param_group({"params": [c], "momentum": 0.1})
    assert opt.param_groups[2]["momentum"] == 0.1 and opt.param_groups[2]["lr"] == 0.1


def test_per_group_lr_is_used():
    a, b = params()
    a0, b0 = a.detach().numpy().copy(), b.detach().numpy().copy()
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    a.grad, b.grad = flambeau.ones_like(a), flambeau.ones_like(b)
    opt.step()
    np.testing.assert_allclose(a.detach().numpy(), a0 - 0.1)
    np.testing.assert_allclose(b.detach().numpy(), b0 - 1.0)


def test_errors():
    a, b = params()
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.SGD(a, lr=0.1)
    with pytest.raises(ValueError, match="duplicate parameters"):
        optim.SGD([a, a], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [a]}, {"params": [a, b]}], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([a * 2], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {a}}], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.Adam([a], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        optim.Adam([a], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Nesterov momentum requires"):
        optim.SGD([a], nesterov=True)
    with pytest.raises(ValueError, match="Invalid eta values"):
        optim.Rprop([a], etas=(1.5, 1.2))


def test_defaults_match_pytorch():
    a, _ = params()
    expected = {
        "SGD": dict(lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False),
        "Adam": dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False),
        "AdamW": dict(lr=1e-3, weight_decay=1e-2),
        "Adamax": dict(lr=2e-3, eps=1e-8),
        "NAdam": dict(lr=2e-3, momentum_decay=4e-3),
        "RAdam": dict(lr=1e-3),
        "RMSprop": dict(lr=1e-2, alpha=0.99, eps=1e-8, momentum=0, centered=False),
        "Adagrad": dict(lr=1e-2, lr_decay=0, initial_accumulator_value=0, eps=1e-10),
        "Adadelta": dict(lr=1.0, rho=0.9, eps=1e-6),
        "Rprop": dict(lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50)),
        "ASGD": dict(lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6),
        "LBFGS": dict(
            lr=1,
            max_iter=20,
            max_eval=25,
            tolerance_grad=1e-7,
            tolerance_change=1e-9,
            history_size=100,
            line_search_fn=None,
        ),
    }
    for name, opts in expected.items():
        group = getattr(optim, name)([a]).param_groups[0]
        for k, v in opts.items():
            assert group[k] == v, (name, k)


def test_zero_grad():
    a, b = params()
    opt = optim.SGD([a, b], lr=0.1)
    set_grads([a, b], 0)
    opt.zero_grad(set_to_none=False)
    assert (a.grad.numpy() == 0).all() and (b.grad.numpy() == 0).all()
    opt.zero_grad()
    assert a.grad is None and b.grad is None


def test_step_hooks_run_in_order_and_can_be_removed():
    a, _ = params()
    opt = optim.SGD([a], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", o is opt)))
    h2 = opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", o is opt)))
    a.grad = flambeau.ones_like(a)
    opt.step()
    assert calls == [("pre", True), ("post", True)]
    h1.remove()
    h2.remove()
    opt.step()
    assert len(calls) == 2


def test_closure_loss_is_returned_and_recorded_with_grad():
    a = flambeau.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.Adam([a], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 5.0
    assert a.grad is not None


@pytest.mark.parametrize("name", ALL)
def test_state_dict_round_trip_continues_identically(name):
    opts = OPTS.get(name, {})
    ps = params(dtype=flambeau.float32)  # float32: the state's own dtype, so loading is exact
    opt = getattr(optim, name)(ps, **opts)
    run(opt, ps, [1, 2, 3])
    sd = opt.state_dict()
    assert sorted(sd) == ["param_groups", "state"]
    assert sd["param_groups"][0]["params"] == [0, 1]

    # A fresh optimizer over new parameters with the same values and shapes.
    ps2 = [p.detach().clone().requires_grad_() for p in ps]
    opt2 = getattr(optim, name)(ps2, **opts)
    opt2.load_state_dict(sd)
    run(opt, ps, [4, 5])
    run(opt2, ps2, [4, 5])
    for p, q in zip(ps, ps2):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    # Loading copies: the new optimizer's state is not the old one's tensors.
    for k, v in opt2.state[ps2[0]].items():
        if isinstance(v, flambeau.Tensor):
            assert v.data_ptr() != opt.state[ps[0]][k].data_ptr() or v.numel() == 0


def test_load_state_dict_casts_state_to_the_parameters_dtype():
    ps = params(dtype=flambeau.float64)
    opt = optim.Adam(ps, lr=0.1)
    run(opt, ps, [1, 2])
    ps32 = params(dtype=flambeau.float32)
    opt32 = optim.Adam(ps32, lr=0.1)
    opt32.load_state_dict(opt.state_dict())
    st = opt32.state[ps32[0]]
    assert st["exp_avg"].dtype == flambeau.float32
    assert st["exp_avg_sq"].dtype == flambeau.float32
    assert st["step"].dtype == flambeau.float32 and st["step"].item() == 2
    run(opt32, ps32, [3])


def test_load_state_dict_checks_groups():
    a, b = params()
    opt = optim.SGD([a, b], lr=0.1)
    other = optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict(other.state_dict())
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.SGD([a], lr=0.1).load_state_dict(opt.state_dict())


def test_load_state_dict_restores_group_options():
    a, _ = params()
    opt = optim.SGD([a], lr=0.1)
    opt.param_groups[0]["lr"] = 0.01
    opt2 = optim.SGD([a], lr=0.5)
    opt2.load_state_dict(opt.state_dict())
    assert opt2.param_groups[0]["lr"] == 0.01
    assert opt2.param_groups[0]["params"][0] is a


def test_user_subclass_gets_hooks_and_its_own_grad_mode():
    class Recorder(optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {})

        def step(self, closure=None):
            self.grad_mode = flambeau.is_grad_enabled()

    a = flambeau.ones(2, requires_grad=True)
    opt = Recorder([a])
    seen = []
    opt.register_step_post_hook(lambda o, args, kwargs: seen.append(True))
    opt.step()
    assert seen == [True] and opt.grad_mode is True


def test_global_step_hooks_run_around_every_optimizer_in_pytorch_order():
    from flambeau.optim.optimizer import (
        register_optimizer_step_post_hook,
        register_optimizer_step_pre_hook,
    )

    p = flambeau.ones(2, requires_grad=True)
    p.grad = flambeau.ones(2)
    opt = flambeau.optim.SGD([p], lr=0.5)
    order = []
    opt.register_step_pre_hook(lambda o, a, k: order.append("own pre"))
    opt.register_step_post_hook(lambda o, a, k: order.append("own post"))
    pre = register_optimizer_step_pre_hook(lambda o, a, k: order.append("global pre"))
    post = register_optimizer_step_post_hook(lambda o, a, k: order.append("global post"))
    opt.step()
    assert order == ["global pre", "own pre", "own post", "global post"]
    assert p.tolist() == [0.5, 0.5]
    pre.remove()
    post.remove()
    order.clear()
    flambeau.optim.Adam([p]).step()
    assert order == []


def test_a_wrapper_that_skips_the_base_init_still_steps_and_runs_global_hooks():
    # torch-optimizer's Lookahead and similar wrappers subclass Optimizer without
    # calling its __init__: their step has no hooks of its own, but steps.
    class Wrapper(optim.Optimizer):
        def __init__(self, inner):
            self.inner = inner
            self.param_groups = inner.param_groups
            self.defaults, self.state = inner.defaults, inner.state

        def step(self, closure=None):
            return self.inner.step(closure)

    w = flambeau.ones(2, requires_grad=True)
    w.grad = flambeau.ones(2)
    calls = []
    handle = optim.optimizer.register_optimizer_step_pre_hook(
        lambda opt, args, kwargs: calls.append(type(opt).__name__)
    )
    try:
        Wrapper(optim.SGD([w], lr=0.5)).step()
    finally:
        handle.remove()
    assert w.tolist() == [0.5, 0.5] and calls == ["Wrapper", "SGD"]
