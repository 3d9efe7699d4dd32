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


class BatchedMatmul(Function):
    """A Function whose backward returns the gradient of a broadcast input unreduced, as
    libraries such as linear_operator do: the engine sums it down to the input's shape."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad @ b.mT, a.mT @ grad  # (3, 5, 5) for a (5, 5) a; b's is its own shape


def test_a_broadcast_gradient_is_summed_to_its_inputs_shape():
    a = F.randn(5, 5, dtype=F.float64, requires_grad=True)
    b = F.randn(3, 5, 4, dtype=F.float64, requires_grad=True)
    BatchedMatmul.apply(a, b).sum().backward()
    assert a.grad.shape == (5, 5)
    expected = (F.ones(3, 5, 4, dtype=F.float64) @ b.detach().mT).sum(0)
    assert F.allclose(a.grad, expected)
    assert F.autograd.gradcheck(BatchedMatmul.apply, (a, b))


class WrongShape(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return F.ones(3)


class WrongDevice(Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad.to("meta")


class HalfGrad(Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad.half()


def test_a_gradient_that_cannot_fit_its_input_is_refused_as_in_pytorch():
    x = F.ones(2, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"Function WrongShapeBackward returned an invalid gradient at index 0 - got "
        r"\[3\] but expected shape compatible with \[2\]",
    ):
        WrongShape.apply(x).sum().backward()
    with pytest.raises(RuntimeError, match="expected device cpu but got meta"):
        WrongDevice.apply(x).sum().backward()
    HalfGrad.apply(x).sum().backward()  # cast back to the input's dtype
    assert x.grad.dtype == F.float32


class TwoOutputs(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, (x * 3).to(F.float64)

    @staticmethod
    def backward(ctx, g1, g2):
        seen_grads.append((g1.dtype, g2.dtype, g2.sum().item()))
        return g1 * 2 + g2.float() * 3


seen_grads = []


def test_an_unused_outputs_gradient_is_zeros_of_that_outputs_dtype():
    x = F.ones(2, requires_grad=True)
    first, _ = TwoOutputs.apply(x)
    first.sum().backward()
    assert seen_grads[-1] == (F.float32, F.float64, 0.0)
