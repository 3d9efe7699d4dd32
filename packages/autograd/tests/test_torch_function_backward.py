"""Tensor.backward and Tensor.register_hook take part in the __torch_function__ protocol,
and the backward pass they start does not go through a subclass's __torch_function__."""

import numpy as np

import flambeau as torch


class Logged(torch.Tensor):
    __slots__ = ()
    seen: list = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(func.__name__)
        return super().__torch_function__(func, types, args, kwargs)


def test_backward_is_seen_once_and_runs_with_the_protocol_off():
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    x = torch.tensor([3.0, 4.0]).as_subclass(Logged)
    loss = ((x * w) ** 2).sum()
    assert type(loss) is Logged
    Logged.seen.clear()
    loss.backward()
    assert Logged.seen == ["backward"]
    # d/dw sum((x w)^2) = 2 x^2 w
    np.testing.assert_allclose(w.grad.numpy(), [18.0, -64.0])
    assert type(w.grad) is torch.Tensor
    assert torch.Tensor.backward.__name__ == "backward"


def test_backward_can_be_overridden():
    class Declines(torch.Tensor):
        __slots__ = ()

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is torch.Tensor.backward:
                return "overridden"
            return super().__torch_function__(func, types, args, kwargs)

    x = torch.ones(2, requires_grad=True)
    y = (x * 2).sum().as_subclass(Declines)
    assert y.backward() == "overridden"
    assert x.grad is None


def test_register_hook_is_seen():
    x = torch.ones(2, requires_grad=True)
    y = (x * 3).as_subclass(Logged)
    Logged.seen.clear()
    y.register_hook(lambda g: g * 2)
    assert Logged.seen == ["register_hook"]
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])
