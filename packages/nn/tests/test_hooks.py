"""Forward (pre-)hooks and full backward (pre-)hooks."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import f64

import flambeau
from flambeau import nn


class Scale(nn.Module):
    def forward(self, x, factor=2.0):
        return x * factor


def test_forward_hooks_order_and_results():
    m = Scale()
    calls = []
    m.register_forward_pre_hook(lambda mod, args: calls.append("pre1"))
    m.register_forward_pre_hook(lambda mod, args: calls.append("pre0"), prepend=True)
    m.register_forward_hook(lambda mod, args, out: calls.append("post1"))
    m.register_forward_hook(lambda mod, args, out: calls.append("post0"), prepend=True)
    m(flambeau.ones(1))
    assert calls == ["pre0", "pre1", "post0", "post1"]


def test_hooks_replace_args_kwargs_and_output():
    m = Scale()
    m.register_forward_pre_hook(lambda mod, args: (args[0] + 1,))
    h = m.register_forward_pre_hook(
        lambda mod, args, kwargs: (args, {"factor": 10.0}), with_kwargs=True
    )
    m.register_forward_hook(lambda mod, args, kwargs, out: out + kwargs["factor"], with_kwargs=True)
    assert m(flambeau.ones(1)).item() == 2 * 10.0 + 10.0
    h.remove()
    with h:  # removing twice is harmless
        pass
    m2 = Scale()
    m2.register_forward_pre_hook(lambda mod, args: args[0] * 3)  # a non-tuple becomes (x,)
    assert m2(flambeau.ones(1)).item() == 6.0
    m3 = Scale()
    m3.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        m3(flambeau.ones(1))


def test_handle_remove_clears_kwargs_tables():
    m = Scale()
    h = m.register_forward_hook(lambda *a: None, with_kwargs=True, always_call=True)
    h.remove()
    assert not m._forward_hooks and not m._forward_hooks_with_kwargs
    assert not m._forward_hooks_always_called


def test_always_call_hook_runs_when_forward_raises():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Boom()
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    m.register_forward_hook(lambda mod, args, out: seen.append("never"))
    with pytest.raises(ValueError, match="boom"):
        m(flambeau.ones(1))
    assert seen == [None]


def test_full_backward_hook_sees_and_replaces_grads():
    lin = nn.Linear(3, 2).double()
    record = {}

    def pre(mod, grad_output):
        record["pre"] = grad_output
        return (grad_output[0] * 2,)

    def hook(mod, grad_input, grad_output):
        record["gi"], record["go"] = grad_input, grad_output
        return (grad_input[0] * 0 + 1,)

    lin.register_full_backward_pre_hook(pre)
    lin.register_full_backward_hook(hook)
    x = f64(np.ones((4, 3)), requires_grad=True)
    y = lin(x)
    y.sum().backward()
    np.testing.assert_array_equal(record["pre"][0].numpy(), np.ones((4, 2)))
    np.testing.assert_array_equal(record["go"][0].numpy(), 2 * np.ones((4, 2)))
    w = lin.weight.detach().numpy()
    np.testing.assert_allclose(record["gi"][0].numpy(), 2 * np.ones((4, 2)) @ w)
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((4, 3)))  # replaced by the hook
    # Parameter gradients use the grad_output as replaced by the pre-hook.
    np.testing.assert_allclose(lin.bias.grad.numpy(), [8.0, 8.0])


def test_full_backward_hook_without_input_grad_gets_none():
    lin = nn.Linear(3, 2).double()
    seen = []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go[0].shape)))
    with pytest.warns(UserWarning, match="Full backward hook is firing .* no inputs require"):
        lin(f64(np.ones((2, 3)))).sum().backward()
    assert seen == [((None,), (2, 2))]


def test_full_backward_hook_positions_and_wrong_count():
    class Two(nn.Module):
        def forward(self, a, n, b):
            return a * b * n

    m = Two()
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append(gi))
    a, b = f64([1.0, 2.0], True), f64([3.0, 4.0], True)
    m(a, 2.0, b).sum().backward()
    gi = seen[0]
    assert len(gi) == 3 and gi[1] is None
    np.testing.assert_array_equal(gi[0].numpy(), [6.0, 8.0])
    np.testing.assert_array_equal(gi[2].numpy(), [2.0, 4.0])

    m2 = Two()
    m2.register_full_backward_hook(lambda mod, gi, go: (gi[0],))
    with pytest.raises(RuntimeError, match="invalid number of grad_input, got 1, but expected 3"):
        m2(f64([1.0], True), 1.0, f64([1.0], True)).sum().backward()


def test_backward_hooks_order_across_modules():
    net = nn.Sequential(nn.Linear(2, 2), nn.Tanh(), nn.Linear(2, 1)).double()
    order = []
    for i, m in enumerate(net):
        m.register_full_backward_hook(lambda mod, gi, go, i=i: order.append(i))
    net(f64(np.ones((1, 2)), True)).sum().backward()
    assert order == [2, 1, 0]
