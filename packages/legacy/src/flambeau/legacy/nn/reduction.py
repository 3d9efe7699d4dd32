"""Reductions along one dimension: Sum, Mean, Max, Min."""

from __future__ import annotations

import flambeau

from .module import Module, reuse


def _dim(dimension, input, nInputDims):
    if nInputDims is not None and input.dim() > nInputDims and dimension >= 0:
        return dimension + 1
    return dimension


class Sum(Module):
    """Sums over `dimension` (mean with sizeAverage=True); squeeze=False keeps the dimension.

    >>> from flambeau.legacy import nn
    >>> nn.Sum(0).forward(flambeau.tensor([[1.0, 5.0], [3.0, 2.0]]))
    tensor([4., 7.])
    """

    def __init__(self, dimension=0, nInputDims=None, sizeAverage=False, squeeze=True):
        super().__init__()
        self.dimension, self.nInputDims = dimension, nInputDims
        self.sizeAverage, self.squeeze = sizeAverage, squeeze

    def updateOutput(self, input):
        d = _dim(self.dimension, input, self.nInputDims)
        out = input.sum(d, keepdim=not self.squeeze)
        if self.sizeAverage:
            out = out / input.shape[d]
        self.output = reuse(self.output, out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        d = _dim(self.dimension, input, self.nInputDims)
        g = gradOutput.unsqueeze(d) if self.squeeze else gradOutput
        g = g.expand(input.shape)
        if self.sizeAverage:
            g = g / input.shape[d]
        self.gradInput = reuse(self.gradInput, g.contiguous())
        return self.gradInput


class Mean(Sum):
    """Averages over `dimension`.

    >>> from flambeau.legacy import nn
    >>> nn.Mean(1).forward(flambeau.tensor([[1.0, 5.0], [3.0, 2.0]]))
    tensor([3.0000, 2.5000])
    """

    def __init__(self, dimension=0, nInputDims=None, squeeze=True):
        super().__init__(dimension, nInputDims, sizeAverage=True, squeeze=squeeze)


class Max(Module):
    """Maximum over `dimension`; the gradient goes to the (first) arg-max.

    >>> from flambeau.legacy import nn
    >>> nn.Max(1).forward(flambeau.tensor([[1.0, 5.0], [3.0, 2.0]]))
    tensor([5., 3.])
    """

    _reduce = staticmethod(flambeau.max)

    def __init__(self, dimension=0, nInputDims=None):
        super().__init__()
        self.dimension, self.nInputDims = dimension, nInputDims
        self.indices = None
        self._buffers = ()

    def updateOutput(self, input):
        d = _dim(self.dimension, input, self.nInputDims)
        values, self.indices = self._reduce(input, d, True)
        self.output = reuse(self.output, values.squeeze(d))
        return self.output

    def updateGradInput(self, input, gradOutput):
        d = _dim(self.dimension, input, self.nInputDims)
        grad = flambeau.zeros_like(input)
        grad.scatter_(d, self.indices, gradOutput.unsqueeze(d))
        self.gradInput = reuse(self.gradInput, grad)
        return self.gradInput

    def clearState(self):
        super().clearState()
        self.indices = None
        return self


class Min(Max):
    """Minimum over `dimension`; the gradient goes to the (first) arg-min.

    >>> from flambeau.legacy import nn
    >>> nn.Min(0).forward(flambeau.tensor([[1.0, 5.0], [3.0, 2.0]]))
    tensor([1., 2.])
    """

    _reduce = staticmethod(flambeau.min)
