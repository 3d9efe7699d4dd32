"""Element-wise scalings and offsets: Mul, Add, CMul, CAdd, MulConstant, AddConstant,
GradientReversal."""

from __future__ import annotations

import math

import flambeau

from .module import Module, default_stdv, reuse, uniform_
from .shape import _sizes


class Mul(Module):
    """y = w·x with a single learnt scalar w.

    >>> from flambeau.legacy import nn
    >>> m = nn.Mul()
    >>> _ = m.weight.fill_(3.0)
    >>> m.forward(flambeau.tensor([1.0, 2.0]))
    tensor([3., 6.])
    """

    def __init__(self):
        super().__init__()
        self.weight = flambeau.empty(1)
        self.gradWeight = flambeau.zeros(1)
        self.reset()

    def reset(self, stdv=None):
        uniform_(self.weight, default_stdv(stdv, 1))
        return self

    def updateOutput(self, input):
        self.output = reuse(self.output, input * self.weight[0])
        return self.output

    def updateGradInput(self, input, gradOutput):
        self.gradInput = reuse(self.gradInput, gradOutput * self.weight[0])
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        self.gradWeight.add_((input * gradOutput).sum().reshape(1), alpha=scale)


def _batch_view(param, input):
    """param viewed to broadcast against input (Torch7's rule): the whole sample when the
    element counts agree, else one sample of a batch along dim 0 (or a broadcastable shape)."""
    if param.numel() == input.numel():
        return param.view(input.shape)
    if math.prod(param.shape) == math.prod(input.shape[1:]):
        return param.view(1, *input.shape[1:])
    return param.view(1, *param.shape)


def _reduce_like(t, param, input):
    """Sum a tensor shaped like input down to param's shape."""
    if param.numel() == input.numel():
        return t.reshape(param.shape)
    n = input.shape[0]
    if math.prod(param.shape) == math.prod(input.shape[1:]):
        return t.reshape(n, *param.shape).sum(0)
    return t.sum_to_size([1] + list(param.shape)).reshape(param.shape)


class Add(Module):
    """y = x + b with a learnt bias of inputSize elements (or one scalar when scalar=True).

    >>> from flambeau.legacy import nn
    >>> m = nn.Add(3)
    >>> _ = m.bias.fill_(1.0)
    >>> m.forward(flambeau.tensor([1.0, 2.0, 3.0]))
    tensor([2., 3., 4.])
    """

    def __init__(self, inputSize, scalar=False):
        super().__init__()
        self.scalar = scalar
        size = 1 if scalar else inputSize
        self.bias = flambeau.empty(_sizes([size]) if isinstance(size, int) else _sizes(size))
        self.gradBias = flambeau.zeros(self.bias.shape)
        self.reset()

    def reset(self, stdv=None):
        uniform_(self.bias, default_stdv(stdv, self.bias.shape[0]))
        return self

    def updateOutput(self, input):
        b = self.bias[0] if self.scalar else _batch_view(self.bias, input)
        self.output = reuse(self.output, input + b)
        return self.output

    def updateGradInput(self, input, gradOutput):
        self.gradInput = reuse(self.gradInput, gradOutput.clone())
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        if self.scalar:
            self.gradBias.add_(gradOutput.sum().reshape(1), alpha=scale)
        else:
            self.gradBias.add_(_reduce_like(gradOutput, self.bias, input), alpha=scale)


class CMul(Module):
    """y = x ∘ w with a learnt weight of the given size (broadcast over a batch).

    >>> from flambeau.legacy import nn
    >>> m = nn.CMul(3)
    >>> _ = m.weight.copy_(flambeau.tensor([1.0, 2.0, 3.0]))
    >>> m.forward(flambeau.ones(2, 3))
    tensor([[1., 2., 3.],
            [1., 2., 3.]])
    """

    def __init__(self, *size):
        super().__init__()
        self.weight = flambeau.empty(_sizes(size))
        self.gradWeight = flambeau.zeros(self.weight.shape)
        self.reset()

    def reset(self, stdv=None):
        uniform_(self.weight, default_stdv(stdv, self.weight.numel()))
        return self

    def updateOutput(self, input):
        self.output = reuse(self.output, input * _batch_view(self.weight, input))
        return self.output

    def updateGradInput(self, input, gradOutput):
        self.gradInput = reuse(self.gradInput, gradOutput * _batch_view(self.weight, input))
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        self.gradWeight.add_(_reduce_like(input * gradOutput, self.weight, input), alpha=scale)


class CAdd(Module):
    """y = x + b with a learnt bias of the given size (broadcast over a batch).

    >>> from flambeau.legacy import nn
    >>> m = nn.CAdd(3)
    >>> _ = m.bias.copy_(flambeau.tensor([1.0, 2.0, 3.0]))
    >>> m.forward(flambeau.zeros(2, 3))
    tensor([[1., 2., 3.],
            [1., 2., 3.]])
    """

    def __init__(self, *size):
        super().__init__()
        self.bias = flambeau.empty(_sizes(size))
        self.gradBias = flambeau.zeros(self.bias.shape)
        self.reset()

    def reset(self, stdv=None):
        uniform_(self.bias, default_stdv(stdv, self.bias.numel()))
        return self

    def updateOutput(self, input):
        self.output = reuse(self.output, input + _batch_view(self.bias, input))
        return self.output

    def updateGradInput(self, input, gradOutput):
        self.gradInput = reuse(self.gradInput, gradOutput.clone())
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        self.gradBias.add_(_reduce_like(gradOutput, self.bias, input), alpha=scale)


class MulConstant(Module):
    """y = c·x for a fixed scalar c.

    >>> from flambeau.legacy import nn
    >>> nn.MulConstant(0.5).forward(flambeau.tensor([1.0, 2.0]))
    tensor([0.5000, 1.0000])
    """

    def __init__(self, constant_scalar, ip=False):
        super().__init__()
        self.constant_scalar, self.inplace = constant_scalar, ip

    def updateOutput(self, input):
        if self.inplace:
            self.output = input.mul_(self.constant_scalar)
        else:
            self.output = reuse(self.output, input * self.constant_scalar)
        return self.output

    def updateGradInput(self, input, gradOutput):
        if self.inplace:
            gradOutput.mul_(self.constant_scalar)
            self.gradInput = gradOutput
            input.div_(self.constant_scalar)  # restore the input, as Torch7
        else:
            self.gradInput = reuse(self.gradInput, gradOutput * self.constant_scalar)
        return self.gradInput


class AddConstant(Module):
    """y = x + c for a fixed scalar c.

    >>> from flambeau.legacy import nn
    >>> nn.AddConstant(2).forward(flambeau.tensor([1.0, 2.0]))
    tensor([3., 4.])
    """

    def __init__(self, constant_scalar, ip=False):
        super().__init__()
        self.constant_scalar, self.inplace = constant_scalar, ip

    def updateOutput(self, input):
        if self.inplace:
            self.output = input.add_(self.constant_scalar)
        else:
            self.output = reuse(self.output, input + self.constant_scalar)
        return self.output

    def updateGradInput(self, input, gradOutput):
        if self.inplace:
            self.gradInput = gradOutput
            input.sub_(self.constant_scalar)  # restore the input, as Torch7
        else:
            self.gradInput = reuse(self.gradInput, gradOutput.clone())
        return self.gradInput


class GradientReversal(Module):
    """Identity forward; multiplies the gradient by -lambda on the way back.

    >>> from flambeau.legacy import nn
    >>> m, x = nn.GradientReversal(), flambeau.tensor([1.0, 2.0])
    >>> m.forward(x)
    tensor([1., 2.])
    >>> m.backward(x, flambeau.tensor([0.5, -1.0]))
    tensor([-0.5000,  1.0000])
    """

    def __init__(self, lambd=1):
        super().__init__()
        self.lambd = lambd

    def setLambda(self, lambd):
        self.lambd = lambd
        return self

    def updateOutput(self, input):
        self.output = reuse(self.output, input.clone())
        return self.output

    def updateGradInput(self, input, gradOutput):
        self.gradInput = reuse(self.gradInput, gradOutput * -self.lambd)
        return self.gradInput
