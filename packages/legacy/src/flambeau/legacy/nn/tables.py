"""Modules over tables (Python lists of tensors): join, split, select, element-wise ops."""

from __future__ import annotations

import flambeau

from .module import Module, reuse


def _reuse_list(buffers, values):
    buffers = buffers if isinstance(buffers, list) else []
    out = [reuse(buffers[i] if i < len(buffers) else None, v) for i, v in enumerate(values)]
    return out


def _zeros_like_table(t):
    if isinstance(t, flambeau.Tensor):
        return flambeau.zeros_like(t)
    return [_zeros_like_table(x) for x in t]


class Identity(Module):
    """Passes input and gradOutput through unchanged (tables too).

    >>> from flambeau.legacy import nn
    >>> nn.Identity().forward(flambeau.tensor([1.0, 2.0]))
    tensor([1., 2.])
    """

    def updateOutput(self, input):
        self.output = input
        return self.output

    def updateGradInput(self, input, gradOutput):
        self.gradInput = gradOutput
        return self.gradInput


class JoinTable(Module):
    """Concatenates a table of tensors along `dimension` (shifted by one for batches
    when `nInputDims` is given and the inputs have one more dimension).

    >>> from flambeau.legacy import nn
    >>> a, b = flambeau.tensor([[1.0, 2.0]]), flambeau.tensor([[3.0, 4.0]])
    >>> nn.JoinTable(0).forward([a, b])
    tensor([[1., 2.],
            [3., 4.]])
    >>> nn.JoinTable(1).forward([a, b])
    tensor([[1., 2., 3., 4.]])
    """

    def __init__(self, dimension, nInputDims=None):
        super().__init__()
        self.dimension = dimension
        self.nInputDims = nInputDims
        self.gradInput = []

    def _dim(self, input):
        d = self.dimension
        if self.nInputDims is not None and d >= 0 and input[0].dim() == self.nInputDims + 1:
            d += 1
        return d

    def updateOutput(self, input):
        self.output = reuse(self.output, flambeau.cat(list(input), self._dim(input)))
        return self.output

    def updateGradInput(self, input, gradOutput):
        d, offset, grads = self._dim(input), 0, []
        for x in input:
            grads.append(gradOutput.narrow(d, offset, x.shape[d]))
            offset += x.shape[d]
        self.gradInput = _reuse_list(self.gradInput, grads)
        return self.gradInput

    def __repr__(self):
        return f"nn.JoinTable({self.dimension})"


class SplitTable(Module):
    """Splits a tensor into the table of its slices along `dimension`.

    >>> from flambeau.legacy import nn
    >>> nn.SplitTable(0).forward(flambeau.tensor([[1.0, 2.0], [3.0, 4.0]]))
    [tensor([1., 2.]), tensor([3., 4.])]
    """

    def __init__(self, dimension, nInputDims=None):
        super().__init__()
        self.dimension = dimension
        self.nInputDims = nInputDims
        self.output = []

    def _dim(self, input):
        d = self.dimension
        if self.nInputDims is not None and d >= 0 and input.dim() == self.nInputDims + 1:
            d += 1
        return d

    def updateOutput(self, input):
        d = self._dim(input)
        self.output = [input.select(d, i) for i in range(input.shape[d])]
        return self.output

    def updateGradInput(self, input, gradOutput):
        d = self._dim(input)
        grad = flambeau.zeros_like(input)
        for i, g in enumerate(gradOutput):
            grad.select(d, i).copy_(g)
        self.gradInput = reuse(self.gradInput, grad)
        return self.gradInput


class SelectTable(Module):
    """Output is input[index] (negative indices count from the end).

    >>> from flambeau.legacy import nn
    >>> nn.SelectTable(-1).forward([flambeau.tensor([1.0]), flambeau.tensor([2.0])])
    tensor([2.])
    """

    def __init__(self, index):
        super().__init__()
        self.index = index
        self.gradInput = []

    def updateOutput(self, input):
        self.output = input[self.index]
        return self.output

    def updateGradInput(self, input, gradOutput):
        grads = _zeros_like_table(list(input))
        grads[self.index] = gradOutput
        self.gradInput = grads
        return self.gradInput

    def __repr__(self):
        return f"nn.SelectTable({self.index})"


class NarrowTable(Module):
    """Output is input[offset : offset + length].

    >>> from flambeau.legacy import nn
    >>> a, b, c = flambeau.tensor([1.0]), flambeau.tensor([2.0]), flambeau.tensor([3.0])
    >>> nn.NarrowTable(1, 2).forward([a, b, c])
    [tensor([2.]), tensor([3.])]
    """

    def __init__(self, offset, length=1):
        super().__init__()
        self.offset = offset
        self.length = length
        self.output = []
        self.gradInput = []

    def updateOutput(self, input):
        self.output = list(input[self.offset : self.offset + self.length])
        return self.output

    def updateGradInput(self, input, gradOutput):
        grads = _zeros_like_table(list(input))
        for i, g in enumerate(gradOutput):
            grads[self.offset + i] = g
        self.gradInput = grads
        return self.gradInput


def _flatten_table(t, out):
    if isinstance(t, flambeau.Tensor):
        out.append(t)
    else:
        for x in t:
            _flatten_table(x, out)
    return out


def _unflatten_like(template, flat, pos):
    if isinstance(template, flambeau.Tensor):
        return flat[pos], pos + 1
    out = []
    for x in template:
        y, pos = _unflatten_like(x, flat, pos)
        out.append(y)
    return out, pos


class FlattenTable(Module):
    """Flattens nested tables into one table of tensors (depth-first order).

    >>> from flambeau.legacy import nn
    >>> a, b, c = flambeau.tensor([1.0]), flambeau.tensor([2.0]), flambeau.tensor([3.0])
    >>> nn.FlattenTable().forward([a, [b, [c]]])
    [tensor([1.]), tensor([2.]), tensor([3.])]
    """

    def __init__(self):
        super().__init__()
        self.output = []
        self.gradInput = []

    def updateOutput(self, input):
        self.output = _flatten_table(input, [])
        return self.output

    def updateGradInput(self, input, gradOutput):
        self.gradInput, _ = _unflatten_like(input, list(gradOutput), 0)
        return self.gradInput


class CAddTable(Module):
    """Element-wise sum of the tensors of a table.

    >>> from flambeau.legacy import nn
    >>> nn.CAddTable().forward([flambeau.tensor([1.0, 2.0]), flambeau.tensor([3.0, 4.0])])
    tensor([4., 6.])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace
        self.gradInput = []

    def updateOutput(self, input):
        if self.inplace:
            self.output = input[0]
        else:
            self.output = reuse(self.output, input[0].clone())
        for x in input[1:]:
            self.output.add_(x)
        return self.output

    def updateGradInput(self, input, gradOutput):
        if self.inplace:
            self.gradInput = [gradOutput] * len(input)
        else:
            self.gradInput = _reuse_list(
                self.gradInput, [gradOutput.expand_as(x).clone() for x in input]
            )
        return self.gradInput


class CSubTable(Module):
    """input[0] - input[1].

    >>> from flambeau.legacy import nn
    >>> nn.CSubTable().forward([flambeau.tensor([1.0, 2.0]), flambeau.tensor([3.0, 5.0])])
    tensor([-2., -3.])
    """

    def __init__(self):
        super().__init__()
        self.gradInput = []

    def updateOutput(self, input):
        self.output = reuse(self.output, input[0] - input[1])
        return self.output

    def updateGradInput(self, input, gradOutput):
        self.gradInput = _reuse_list(self.gradInput, [gradOutput.clone(), -gradOutput])
        return self.gradInput


class CMulTable(Module):
    """Element-wise product of the tensors of a table.

    >>> from flambeau.legacy import nn
    >>> nn.CMulTable().forward([flambeau.tensor([1.0, 2.0]), flambeau.tensor([3.0, 4.0])])
    tensor([3., 8.])
    """

    def __init__(self):
        super().__init__()
        self.gradInput = []

    def updateOutput(self, input):
        out = input[0].clone()
        for x in input[1:]:
            out.mul_(x)
        self.output = reuse(self.output, out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        grads = []
        for i in range(len(input)):
            g = gradOutput.clone()
            for j, x in enumerate(input):
                if j != i:
                    g.mul_(x)  # the product of the others, not output / input[i] (zeros)
            grads.append(g)
        self.gradInput = _reuse_list(self.gradInput, grads)
        return self.gradInput


class CDivTable(Module):
    """input[0] / input[1].

    >>> from flambeau.legacy import nn
    >>> nn.CDivTable().forward([flambeau.tensor([1.0, 6.0]), flambeau.tensor([2.0, 3.0])])
    tensor([0.5000, 2.0000])
    """

    def __init__(self):
        super().__init__()
        self.gradInput = []

    def updateOutput(self, input):
        self.output = reuse(self.output, input[0] / input[1])
        return self.output

    def updateGradInput(self, input, gradOutput):
        g0 = gradOutput / input[1]
        g1 = -g0 * input[0] / input[1]
        self.gradInput = _reuse_list(self.gradInput, [g0, g1])
        return self.gradInput
