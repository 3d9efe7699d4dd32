"""flambeau.optim.swa_utils: averages against hand-derived ones, SWALR's schedule against
its closed form, update_bn against NumPy batch-norm statistics."""

from __future__ import annotations

import math

import numpy as np
import pytest

import flambeau
from flambeau import optim

nn = pytest.importorskip("flambeau.nn")
swa = pytest.importorskip("flambeau.optim.swa_utils")


def weights(model) -> list[np.ndarray]:
    return [p.detach().numpy().copy() for p in model.parameters()]


def set_weights(model, values) -> None:
    with flambeau.no_grad():
        for p, v in zip(model.parameters(), values):
            p.copy_(flambeau.tensor(v, dtype=p.dtype))


def snapshots(model, n, rng):
    """n random weight settings of model, applied in turn; yields each (as NumPy)."""
    for _ in range(n):
        values = [rng.standard_normal(p.shape) for p in model.parameters()]
        set_weights(model, values)
        yield weights(model)


# -- averaging functions ------------------------------------------------------------------


def test_single_tensor_average_functions():
    a, c = flambeau.tensor([1.0, 2.0]), flambeau.tensor([3.0, -2.0])
    np.testing.assert_allclose(swa.get_swa_avg_fn()(a, c, 3).numpy(), [1.5, 1.0])
    np.testing.assert_allclose(swa.get_ema_avg_fn(0.75)(a, c, 9).numpy(), [1.5, 1.0])


def test_multi_tensor_average_functions_update_in_place():
    a = [flambeau.tensor([1.0, 2.0]), flambeau.tensor([0.0])]
    swa.get_swa_multi_avg_fn()(a, [flambeau.tensor([3.0, -2.0]), flambeau.tensor([4.0])], 1)
    np.testing.assert_allclose(a[0].numpy(), [2.0, 0.0])
    np.testing.assert_allclose(a[1].numpy(), [2.0])
    swa.get_ema_multi_avg_fn(0.5)(a, [flambeau.tensor([0.0, 0.0]), flambeau.tensor([0.0])], 7)
    np.testing.assert_allclose(a[0].numpy(), [1.0, 0.0])
    # Integer tensors: the EMA is truncated back into the integer tensor.
    ints = [flambeau.tensor([4, 7])]
    swa.get_ema_multi_avg_fn(0.5)(ints, [flambeau.tensor([5, 8])], 1)
    assert ints[0].tolist() == [4, 7]
    # and the running mean with a plain-number count adds diff / (n + 1)
    ints = [flambeau.tensor([4.0])]
    swa.get_swa_multi_avg_fn()(ints, [flambeau.tensor([10.0])], flambeau.tensor(2))
    assert ints[0].tolist() == [6.0]


@pytest.mark.parametrize("make", [swa.get_ema_avg_fn, swa.get_ema_multi_avg_fn])
@pytest.mark.parametrize("decay", [-0.1, 1.5])
def test_decay_out_of_range(make, decay):
    with pytest.raises(ValueError, match=r"Invalid decay value .* in \[0,1\] range"):
        make(decay)


# -- AveragedModel ------------------------------------------------------------------------


def test_default_is_the_equal_weight_mean():
    rng = np.random.default_rng(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    averaged = swa.AveragedModel(model)
    seen = []
    for values in snapshots(model, 5, rng):
        averaged.update_parameters(model)
        seen.append(values)
        for got, *each in zip(weights(averaged), *seen):
            np.testing.assert_allclose(got, np.mean(each, axis=0), rtol=1e-6, atol=1e-6)
    assert averaged.n_averaged.item() == 5
    assert averaged.n_averaged.dtype == flambeau.int64
    # It is a copy: the model's own weights are the last snapshot, untouched.
    for got, want in zip(weights(model), seen[-1]):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("how", ["avg_fn", "multi_avg_fn"])
def test_ema(how):
    decay = 0.8
    rng = np.random.default_rng(1)
    model = nn.Linear(3, 2)
    fn = swa.get_ema_avg_fn(decay) if how == "avg_fn" else swa.get_ema_multi_avg_fn(decay)
    ema = swa.AveragedModel(model, **{how: fn})
    expected = None
    for values in snapshots(model, 4, rng):
        ema.update_parameters(model)
        # The first update copies; later ones blend.
        if expected is None:
            expected = values
        else:
            expected = [decay * e + (1 - decay) * v for e, v in zip(expected, values)]
        for got, want in zip(weights(ema), expected):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_custom_avg_fn_gets_the_count_as_a_tensor():
    seen = []

    def keep_max(averaged, current, num_averaged):
        seen.append(num_averaged.item())
        return flambeau.maximum(averaged, current)

    model = nn.Linear(2, 1, bias=False)
    averaged = swa.AveragedModel(model, avg_fn=keep_max)
    for w in ([[1.0, 5.0]], [[3.0, 2.0]], [[0.0, 0.0]]):
        set_weights(model, [np.array(w)])
        averaged.update_parameters(model)
    assert averaged.module.weight.tolist() == [[3.0, 5.0]]
    assert seen == [1, 2]  # not called for the first (copying) update


def batch_norm_model():
    return nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))


def test_buffers_are_copied_or_averaged():
    flambeau.manual_seed(0)
    model = batch_norm_model()
    copied = swa.AveragedModel(model)
    averaged = swa.AveragedModel(model, use_buffers=True)
    means = []
    for _ in range(3):
        model(flambeau.randn(8, 3))
        means.append(model[1].running_mean.numpy().copy())
        copied.update_parameters(model)
        averaged.update_parameters(model)
        np.testing.assert_array_equal(copied.module[1].running_mean.numpy(), means[-1])
        np.testing.assert_allclose(
            averaged.module[1].running_mean.numpy(), np.mean(means, axis=0), rtol=1e-6, atol=1e-7
        )
    # Integer buffers are averaged too, truncated: 1, then 1 + (2 - 1) / 2, 1 + (3 - 1) / 3.
    assert averaged.module[1].num_batches_tracked.item() == 1
    assert copied.module[1].num_batches_tracked.item() == 3


def test_state_dict_and_forward():
    model = batch_norm_model()
    averaged = swa.AveragedModel(model)
    assert list(averaged.state_dict()) == [
        "n_averaged",
        "module.0.weight",
        "module.0.bias",
        "module.1.weight",
        "module.1.bias",
        "module.1.running_mean",
        "module.1.running_var",
        "module.1.num_batches_tracked",
    ]
    averaged.update_parameters(model)
    averaged.update_parameters(model)
    fresh = swa.AveragedModel(model)
    fresh.load_state_dict(averaged.state_dict())
    assert fresh.n_averaged.item() == 2
    model.eval()
    averaged.eval()
    x = flambeau.randn(4, 3)
    np.testing.assert_allclose(averaged(x).detach().numpy(), model(x).detach().numpy())


def test_device_and_argument_errors():
    model = nn.Linear(2, 2)
    on_cpu = swa.AveragedModel(model, device="cpu")
    assert on_cpu.n_averaged.device.type == "cpu"
    assert on_cpu.module.weight.device.type == "cpu"
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        swa.AveragedModel(
            model, avg_fn=swa.get_swa_avg_fn(), multi_avg_fn=swa.get_swa_multi_avg_fn()
        )


def test_update_does_not_record_a_graph():
    model = nn.Linear(2, 2)
    averaged = swa.AveragedModel(model)
    averaged.update_parameters(model)
    averaged.update_parameters(model)
    for p in averaged.parameters():
        assert p.requires_grad and p.grad_fn is None


# -- SWALR --------------------------------------------------------------------------------


def make_optimizer(lrs=(1.0,)):
    groups = [{"params": [flambeau.zeros(2, requires_grad=True)], "lr": lr} for lr in lrs]
    return optim.SGD(groups, lr=lrs[0])


def run(scheduler, opt, steps):
    out = [[g["lr"] for g in opt.param_groups]]
    for _ in range(steps):
        opt.step()
        scheduler.step()
        out.append(scheduler.get_last_lr())
    return out


def anneal(strategy, t):
    t = min(1.0, t)
    return t if strategy == "linear" else (1 - math.cos(math.pi * t)) / 2


@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_swalr_anneals_each_group_to_its_swa_lr(strategy):
    start, swa_lr, epochs = (1.0, 0.5), (0.1, 0.2), 4
    opt = make_optimizer(start)
    sched = swa.SWALR(opt, swa_lr=list(swa_lr), anneal_epochs=epochs, anneal_strategy=strategy)
    got = run(sched, opt, 7)
    for step, lrs in enumerate(got):
        a = anneal(strategy, step / epochs)
        want = [s * (1 - a) + w * a for s, w in zip(start, swa_lr)]
        for x, y in zip(lrs, want):
            assert math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-15), (step, lrs, want)
    assert [g["swa_lr"] for g in opt.param_groups] == list(swa_lr)


def test_swalr_zero_epochs_switches_at_once():
    opt = make_optimizer((1.0,))
    sched = swa.SWALR(opt, swa_lr=0.05, anneal_epochs=0)  # already at construction
    assert run(sched, opt, 3) == [[0.05], [0.05], [0.05], [0.05]]


def test_swalr_follows_an_lr_moved_by_another_scheduler():
    # Halving the lr midway halves the starting lr the rest of the annealing uses.
    opt = make_optimizer((1.0,))
    sched = swa.SWALR(opt, swa_lr=0.0, anneal_epochs=4, anneal_strategy="linear")
    opt.step()
    sched.step()  # 0.75
    opt.param_groups[0]["lr"] /= 2  # as if the annealing had started from 0.5
    opt.step()
    sched.step()
    assert math.isclose(sched.get_last_lr()[0], 0.5 * (1 - 2 / 4))


def test_swalr_state_dict_round_trip():
    opt = make_optimizer((1.0,))
    sched = swa.SWALR(opt, swa_lr=0.1, anneal_epochs=5, anneal_strategy="linear")
    run(sched, opt, 2)
    state = sched.state_dict()
    assert "anneal_func" not in state and "optimizer" not in state
    assert state["_anneal_strategy"] == "linear" and state["anneal_epochs"] == 5
    other = swa.SWALR(make_optimizer((1.0,)), swa_lr=0.3, anneal_strategy="cos")
    other.load_state_dict(state)
    assert other.anneal_func(0.25) == 0.25  # linear again
    assert other.last_epoch == 2


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"swa_lr": [0.1, 0.2]}, "swa_lr must have the same length as optimizer.param_groups"),
        ({"swa_lr": 0.1, "anneal_strategy": "exp"}, "anneal_strategy must be one of 'cos' or"),
        ({"swa_lr": 0.1, "anneal_epochs": -1}, "anneal_epochs must be equal or greater than 0"),
        ({"swa_lr": 0.1, "anneal_epochs": 2.0}, "anneal_epochs must be equal or greater than 0"),
    ],
)
def test_swalr_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        swa.SWALR(make_optimizer((1.0,)), **kwargs)


# -- update_bn ----------------------------------------------------------------------------


def np_forward(x, layers):
    """The model's training-mode forward in NumPy; the batch statistics each BN saw."""
    stats = []
    for layer in layers:
        if isinstance(layer, nn.Linear):
            x = x @ layer.weight.detach().numpy().T.astype(np.float64)
            x = x + layer.bias.detach().numpy()
        elif isinstance(layer, nn.ReLU):
            x = np.maximum(x, 0)
        else:  # BatchNorm1d over (N, C): normalised with the biased variance
            mean, var = x.mean(axis=0), x.var(axis=0)
            stats.append((mean, x.var(axis=0, ddof=1)))
            x = (x - mean) / np.sqrt(var + layer.eps)
            x = x * layer.weight.detach().numpy() + layer.bias.detach().numpy()
    return stats


def test_update_bn_recomputes_running_statistics_as_an_equal_average():
    flambeau.manual_seed(3)
    layers = [nn.Linear(4, 3), nn.BatchNorm1d(3, momentum=0.3), nn.ReLU()]
    layers += [nn.Linear(3, 2), nn.BatchNorm1d(2)]
    model = nn.Sequential(*layers)
    model(flambeau.randn(5, 4) * 3 + 1)  # running statistics that update_bn must discard
    model.eval()
    rng = np.random.default_rng(5)
    data = [rng.standard_normal((6, 4)) * 2 + 0.5 for _ in range(4)]
    # Batches as tensors and as (input, target) pairs.
    loader = [flambeau.tensor(data[0], dtype=flambeau.float32)]
    loader += [(flambeau.tensor(d, dtype=flambeau.float32), 0) for d in data[1:]]

    swa.update_bn(loader, model)

    per_batch = [np_forward(d.astype(np.float32).astype(np.float64), layers) for d in data]
    bns = [layers[1], layers[4]]
    for i, bn in enumerate(bns):
        mean = np.mean([stats[i][0] for stats in per_batch], axis=0)
        var = np.mean([stats[i][1] for stats in per_batch], axis=0)
        np.testing.assert_allclose(bn.running_mean.numpy(), mean, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(bn.running_var.numpy(), var, rtol=1e-4, atol=1e-5)
        assert bn.num_batches_tracked.item() == 4
    assert [bn.momentum for bn in bns] == [0.3, 0.1]
    assert not model.training and not any(m.training for m in model.modules())


def test_update_bn_2d_moves_batches_to_device_and_keeps_train_mode():
    bn = nn.BatchNorm2d(2)
    model = nn.Sequential(bn)
    rng = np.random.default_rng(7)
    data = [rng.standard_normal((3, 2, 4, 5)).astype(np.float32) for _ in range(3)]
    swa.update_bn([flambeau.tensor(d) for d in data], model, device="cpu")
    means = [d.astype(np.float64).mean(axis=(0, 2, 3)) for d in data]
    variances = [d.astype(np.float64).var(axis=(0, 2, 3), ddof=1) for d in data]
    np.testing.assert_allclose(bn.running_mean.numpy(), np.mean(means, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.running_var.numpy(), np.mean(variances, 0), rtol=1e-5)
    assert model.training and bn.momentum == 0.1


def test_update_bn_without_batch_norm_does_not_run_the_model():
    calls = []

    class Probe(nn.Module):
        def forward(self, x):
            calls.append(x)
            return x

    swa.update_bn([flambeau.zeros(2)], Probe())
    assert calls == []


def test_swa_utils_is_an_attribute_of_optim():
    assert optim.swa_utils is swa
    assert "swa_utils" in optim.__all__
