"""flambeau.amp.GradScaler and the two scaling functions, against hand-derived values.

The optimizer here is a stand-in with PyTorch's optimizer protocol (param_groups and
step), so the scaler is tested without the optim package; the nn package's tests
train a model with a real one.
"""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest

import flambeau
from flambeau.amp import GradScaler
from flambeau.amp.grad_scaler import OptState

INF, NAN = float("inf"), float("nan")


class RecordingOptimizer:
    """Subtracts the gradients from the parameters and counts its steps."""

    def __init__(self, params):
        self.param_groups = [{"params": list(params)}]
        self.steps = 0

    def step(self, *args, **kwargs):
        self.steps += 1
        for p in self.param_groups[0]["params"]:
            if p.grad is not None:
                p.sub_(p.grad)
        return ("stepped", args, kwargs)


def with_grads(*grads):
    params = []
    for g in grads:
        p = flambeau.zeros(len(g))
        p.grad = flambeau.tensor(g)
        params.append(p)
    return params, RecordingOptimizer(params)


def cpu_scaler(**kwargs):
    return GradScaler("cpu", **kwargs)


# ---- the two scaling functions ----------------------------------------------------------


def test_unscale_multiplies_and_flags_non_finite_values():
    grads = [flambeau.tensor([2.0, 4.0]), flambeau.tensor([INF, 8.0]), flambeau.tensor([1.0])]
    grads.append(flambeau.tensor([6.0], dtype=flambeau.float64))
    grads.append(flambeau.tensor([10.0], dtype=flambeau.bfloat16))
    found_inf, inv_scale = flambeau.zeros(()), flambeau.tensor(0.5)
    flambeau._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale)
    assert found_inf.item() == 1.0
    assert grads[0].tolist() == [1.0, 2.0] and grads[1].tolist() == [INF, 4.0]
    assert grads[3].tolist() == [3.0] and grads[4].float().tolist() == [5.0]


def test_unscale_leaves_found_inf_when_all_finite():
    for start in (0.0, 1.0):
        found_inf = flambeau.full((), start)
        flambeau._amp_foreach_non_finite_check_and_unscale_(
            [flambeau.ones(3)], found_inf, flambeau.tensor(1.0)
        )
        assert found_inf.item() == start
    found_inf = flambeau.zeros(())
    flambeau._amp_foreach_non_finite_check_and_unscale_(
        [flambeau.tensor([NAN])], found_inf, flambeau.tensor(1.0)
    )
    assert found_inf.item() == 1.0


def test_unscale_argument_errors():
    one, inv = flambeau.zeros(()), flambeau.tensor(1.0)
    unscale = flambeau._amp_foreach_non_finite_check_and_unscale_
    with pytest.raises(RuntimeError, match="found_inf must be a 1-element tensor."):
        unscale([flambeau.ones(2)], flambeau.zeros(2), inv)
    with pytest.raises(RuntimeError, match="found_inf must be a float tensor."):
        unscale([flambeau.ones(2)], flambeau.zeros((), dtype=flambeau.float64), inv)
    with pytest.raises(RuntimeError, match="inv_scale must be a 1-element tensor."):
        unscale([flambeau.ones(2)], one, flambeau.ones(2))
    with pytest.raises(NotImplementedError, match="not implemented for"):
        unscale([flambeau.ones(2, dtype=flambeau.int32)], one, inv)
    unscale([], one, inv)  # nothing to do


def update(scale, tracker, found, growth=2.0, backoff=0.5, interval=3):
    s = flambeau.tensor(float(scale))
    t = flambeau.tensor(tracker, dtype=flambeau.int32)
    out = flambeau._amp_update_scale_(
        s, t, flambeau.tensor(float(found)), growth, backoff, interval
    )
    assert out is s
    return s.item(), t.item()


def test_update_scale_rule():
    assert update(8.0, 0, 0) == (8.0, 1)  # one more unskipped step
    assert update(8.0, 1, 0) == (8.0, 2)
    assert update(8.0, 2, 0) == (16.0, 0)  # the third in a row grows the scale
    assert update(8.0, 2, 1) == (4.0, 0)  # an overflow backs off and restarts the count
    assert update(8.0, 0, 3.0, backoff=0.25) == (2.0, 0)  # any nonzero found_inf
    # Growing past float32's range keeps the scale, and the count restarts.
    assert update(3e38, 0, 0, interval=1) == (pytest.approx(3e38, rel=1e-7), 0)


def test_update_scale_argument_errors():
    s, t, f = flambeau.tensor(1.0), flambeau.tensor(0, dtype=flambeau.int32), flambeau.tensor(0.0)
    with pytest.raises(RuntimeError, match="current_scale must be a float tensor."):
        flambeau._amp_update_scale_(s.double(), t, f, 2.0, 0.5, 2)
    with pytest.raises(RuntimeError, match="current_scale must be a 1-element tensor."):
        flambeau._amp_update_scale_(flambeau.ones(2), t, f, 2.0, 0.5, 2)
    with pytest.raises(RuntimeError, match="growth_tracker must be an int tensor."):
        flambeau._amp_update_scale_(s, t.long(), f, 2.0, 0.5, 2)
    with pytest.raises(RuntimeError, match="found_inf must be a float tensor."):
        flambeau._amp_update_scale_(s, t, f.double(), 2.0, 0.5, 2)


# ---- GradScaler -------------------------------------------------------------------------


def test_scale_multiplies_by_the_scale():
    scaler = cpu_scaler(init_scale=4.0)
    assert scaler.get_scale() == 4.0
    assert scaler.scale(flambeau.tensor(1.5)).item() == 6.0
    nested = scaler.scale([flambeau.tensor(1.0), (flambeau.tensor(2.0), flambeau.tensor(3.0))])
    assert isinstance(nested, list) and isinstance(nested[1], tuple)
    assert [nested[0].item(), nested[1][0].item(), nested[1][1].item()] == [4.0, 8.0, 12.0]
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
        scaler.scale([3])


def test_step_unscales_and_steps():
    params, opt = with_grads([8.0, -4.0])
    scaler = cpu_scaler(init_scale=4.0)
    scaler.scale(flambeau.tensor(1.0))
    assert scaler.step(opt, 1, lr=2) == ("stepped", (1,), {"lr": 2})
    assert params[0].grad.tolist() == [2.0, -1.0]  # divided by the scale
    assert params[0].tolist() == [-2.0, 1.0] and opt.steps == 1


def test_step_skips_on_inf_or_nan_and_update_backs_off():
    for bad in (INF, NAN):
        params, opt = with_grads([1.0, bad], [2.0])
        scaler = cpu_scaler(init_scale=16.0, growth_interval=2)
        scaler.scale(flambeau.tensor(1.0))
        assert scaler.step(opt) is None
        assert opt.steps == 0 and params[1].tolist() == [0.0]  # parameters untouched
        scaler.update()
        assert scaler.get_scale() == 8.0 and scaler._get_growth_tracker() == 0


def test_scale_grows_after_growth_interval_clean_steps():
    scaler = cpu_scaler(init_scale=16.0, growth_factor=3.0, backoff_factor=0.25, growth_interval=2)
    history = []
    for grad in ([1.0], [1.0], [1.0], [INF], [1.0], [1.0]):
        params, opt = with_grads(grad)
        scaler.scale(flambeau.tensor(1.0))
        scaler.step(opt)
        scaler.update()
        history.append((scaler.get_scale(), scaler._get_growth_tracker()))
    # 16 -> (1 clean) 16 -> (2 clean) 48 -> 48 -> (overflow) 12 -> 12 -> 36
    assert history == [(16.0, 1), (48.0, 0), (48.0, 1), (12.0, 0), (12.0, 1), (36.0, 0)]


def test_unscale_then_clip_then_step():
    params, opt = with_grads([30.0, 40.0])
    scaler = cpu_scaler(init_scale=10.0)
    scaler.scale(flambeau.tensor(1.0))
    scaler.unscale_(opt)
    assert params[0].grad.tolist() == [3.0, 4.0]
    params[0].grad.mul_(0.2)  # what clip_grad_norm_(max_norm=1) would do
    scaler.step(opt)  # does not unscale again
    assert params[0].tolist() == pytest.approx([-0.6, -0.8])


def test_several_optimizers_share_one_update():
    (_, opt_a), (_, opt_b) = with_grads([2.0]), with_grads([INF])
    scaler = cpu_scaler(init_scale=2.0)
    scaler.scale(flambeau.tensor(1.0))
    scaler.step(opt_a)
    scaler.step(opt_b)
    assert (opt_a.steps, opt_b.steps) == (1, 0)
    scaler.update()
    assert scaler.get_scale() == 1.0  # one overflow anywhere backs off


def test_stage_errors():
    params, opt = with_grads([1.0])
    scaler = cpu_scaler()
    with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
        scaler.step(opt)
    scaler.scale(flambeau.tensor(1.0))
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step\\(\\)"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: 0)
    scaler.update()
    assert scaler._per_optimizer_states[id(opt)]["stage"] is OptState.READY
    with pytest.raises(AssertionError, match="No inf checks were recorded prior to update"):
        scaler.update()


def test_fp16_gradients_are_refused():
    p = flambeau.zeros(1, dtype=flambeau.float16)  # an fp16 parameter, as PyTorch's test
    p.grad = flambeau.ones(1, dtype=flambeau.float16)
    scaler = cpu_scaler()
    scaler.scale(flambeau.tensor(1.0))
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
        scaler.unscale_(RecordingOptimizer([p]))


def test_update_with_a_new_scale():
    scaler = cpu_scaler()
    scaler.scale(flambeau.tensor(1.0))
    scaler.update(5.0)
    assert scaler.get_scale() == 5.0
    scaler.update(flambeau.tensor(7.0))
    assert scaler.get_scale() == 7.0
    with pytest.raises(AssertionError, match="new_scale should be a float"):
        scaler.update(flambeau.ones(2))


def test_factor_checks_and_accessors():
    with pytest.raises(AssertionError, match="The growth factor must be > 1.0."):
        cpu_scaler(growth_factor=1.0)
    with pytest.raises(AssertionError, match="The backoff factor must be < 1.0."):
        cpu_scaler(backoff_factor=1.0)
    scaler = cpu_scaler()
    scaler.set_growth_factor(4.0)
    scaler.set_backoff_factor(0.125)
    scaler.set_growth_interval(7)
    assert (scaler.get_growth_factor(), scaler.get_backoff_factor()) == (4.0, 0.125)
    assert scaler.get_growth_interval() == 7 and scaler.is_enabled()


def test_state_dict_round_trip_and_pickling():
    scaler = cpu_scaler(init_scale=8.0, growth_interval=5)
    for _ in range(2):
        params, opt = with_grads([1.0])
        scaler.scale(flambeau.tensor(1.0))
        scaler.step(opt)
        scaler.update()
    state = scaler.state_dict()
    assert state == {
        "scale": 8.0,
        "growth_factor": 2.0,
        "backoff_factor": 0.5,
        "growth_interval": 5,
        "_growth_tracker": 2,
    }
    other = cpu_scaler()
    other.load_state_dict(state)
    assert other.state_dict() == state
    restored = pickle.loads(pickle.dumps(scaler))
    assert restored.state_dict() == state
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        other.load_state_dict({})


def test_disabled_scaler_is_a_pass_through():
    params, opt = with_grads([INF])
    scaler = cpu_scaler(enabled=False)
    loss = flambeau.tensor(3.0)
    assert scaler.scale(loss) is loss
    scaler.unscale_(opt)
    assert scaler.step(opt)[0] == "stepped" and opt.steps == 1  # no inf check
    scaler.update()
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {} and not scaler.is_enabled()


def test_cuda_scaler_without_a_backend_disables_itself():
    if flambeau.cuda.is_available():
        pytest.skip("a CUDA backend is installed")
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling."):
        scaler = GradScaler()
    assert not scaler.is_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not GradScaler(enabled=False).is_enabled()


def test_scale_is_float32_and_unscale_uses_its_exact_reciprocal():
    scaler = cpu_scaler(init_scale=3.0)
    out = scaler.scale(flambeau.tensor(1.0))
    assert scaler._scale.dtype == flambeau.float32 and out.item() == 3.0
    params, opt = with_grads([3.0])
    scaler.unscale_(opt)
    expected = np.float32(3.0) * np.float32(1.0 / 3.0)  # 1/3 rounded once to float32
    assert params[0].grad.item() == float(expected)
    assert math.isclose(params[0].grad.item(), 1.0, rel_tol=1e-7)
