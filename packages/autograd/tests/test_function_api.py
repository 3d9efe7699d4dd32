"""autograd.Function's PyTorch API beyond forward/backward: ``setup_context`` (forward
without ctx), ``vjp`` as backward's other name, and PyTorch's errors."""

import pytest

import flambeau as F
from flambeau.autograd import Function


class ScaleWithSetup(Function):
    @staticmethod
    def forward(x, k=3.0):
        assert not F.is_grad_enabled()
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        seen.append((len(inputs), tuple(output.shape), F.is_grad_enabled()))
        ctx.k = inputs[1]  # the default is part of inputs
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * ctx.k + 0 * x, None


seen = []


def test_setup_context_fills_ctx_from_inputs_and_output():
    seen.clear()
    x = F.tensor([1.0, 2.0], requires_grad=True)
    y = ScaleWithSetup.apply(x)
    assert y.tolist() == [3.0, 6.0] and seen == [(2, (2,), False)]
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert ScaleWithSetup.apply(F.ones(1), k=2.0).tolist() == [2.0]  # no grad: no graph
    with pytest.raises(NotImplementedError, match="setup_context is not implemented"):
        Function.setup_context(None, (), None)


def test_forward_taking_ctx_with_setup_context_is_a_binding_error():
    class Mixed(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

    with pytest.raises(TypeError, match="missing a required argument: 'x'"):
        Mixed.apply(F.ones(1))


def test_vjp_is_backwards_other_name():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def vjp(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    class Both(Square):
        @staticmethod
        def backward(ctx, grad):
            return grad

    class Neither(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    x = F.tensor([3.0], requires_grad=True)
    Square.apply(x).backward()
    assert x.grad.tolist() == [6.0]
    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp'"):
        Both.apply(x).backward()
    with pytest.raises(NotImplementedError, match="either the backward or vjp method"):
        Neither.apply(x).backward()
    with pytest.raises(NotImplementedError, match="implement the forward function"):
        Function.apply(x)
