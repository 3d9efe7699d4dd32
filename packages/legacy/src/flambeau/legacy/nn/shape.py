"""Modules that reshape, slice, pad or copy: View, Reshape, Transpose, Narrow, Select, ..."""

from __future__ import annotations

import math

import flambeau

from .module import Module, _dtype_of, reuse


def _sizes(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list, flambeau.Size)):
        return [int(s) for s in args[0]]
    return [int(s) for s in args]


class View(Module):
    """A view of the input with new sizes (one may be -1). With setNumInputDims(n), extra
    leading input dimensions are kept as batch dimensions; without it a batch is assumed when
    the sizes (with no -1) do not account for every element.

    >>> from flambeau.legacy import nn
    >>> nn.View(2, 2).forward(flambeau.arange(4.0))
    tensor([[0., 1.],
            [2., 3.]])
    """

    def __init__(self, *sizes):
        super().__init__()
        self.size = _sizes(sizes)
        if self.size.count(-1) > 1:
            raise ValueError("View: at most one size may be -1")
        self.numElements = math.prod(self.size)
        self.numInputDims = None

    def setNumInputDims(self, numInputDims):
        self.numInputDims = numInputDims
        return self

    def _batch_shape(self, input):
        if self.numInputDims is not None:
            if input.dim() > self.numInputDims:
                return list(input.shape[: input.dim() - self.numInputDims])
            return []
        if -1 not in self.size and input.numel() != self.numElements:
            return [input.shape[0]]
        return []

    def updateOutput(self, input):
        self.output = input.contiguous().view(self._batch_shape(input) + self.size)
        return self.output

    def updateGradInput(self, input, gradOutput):
        self.gradInput = gradOutput.contiguous().view(input.shape)
        return self.gradInput

    def __repr__(self):
        return "nn.View(" + ", ".join(str(s) for s in self.size) + ")"


class Reshape(View):
    """Like View, but batchMode=True/False says whether dim 0 is a batch (None: guessed as
    Torch7 does, from the element count and a leading 1).

    >>> from flambeau.legacy import nn
    >>> nn.Reshape(4).forward(flambeau.ones(2, 2)).shape
    flambeau.Size([4])
    >>> nn.Reshape(4).forward(flambeau.ones(3, 2, 2)).shape  # a batch of 3
    flambeau.Size([3, 4])
    """

    def __init__(self, *sizes, batchMode=None):
        super().__init__(*sizes)
        self.batchMode = batchMode

    def _batch_shape(self, input):
        if self.batchMode is None:
            batch = not (input.numel() == self.numElements and input.shape[0] != 1)
        else:
            batch = self.batchMode
        return [input.shape[0]] if batch else []

    def __repr__(self):
        return "nn.Reshape(" + "x".join(str(s) for s in self.size) + ")"


class Transpose(Module):
    """Swaps the given pairs of dimensions in order: Transpose((0, 1), (2, 3)).

    >>> from flambeau.legacy import nn
    >>> nn.Transpose((0, 1)).forward(flambeau.ones(2, 3)).shape
    flambeau.Size([3, 2])
    """

    def __init__(self, *permutations):
        super().__init__()
        self.permutations = [tuple(p) for p in permutations]

    def updateOutput(self, input):
        out = input
        for a, b in self.permutations:
            out = out.transpose(a, b)
        self.output = out
        return self.output

    def updateGradInput(self, input, gradOutput):
        g = gradOutput
        for a, b in reversed(self.permutations):
            g = g.transpose(a, b)
        self.gradInput = g
        return self.gradInput


class Narrow(Module):
    """input.narrow(dimension, offset, length); a negative offset counts from the end and a
    negative length keeps up to size + length + 1 (length=-1: to the end).

    >>> from flambeau.legacy import nn
    >>> x = flambeau.arange(5.0)
    >>> nn.Narrow(0, 1, 2).forward(x)
    tensor([1., 2.])
    >>> nn.Narrow(0, 2, -1).forward(x)  # from index 2 to the end
    tensor([2., 3., 4.])
    """

    def __init__(self, dimension, offset, length=1):
        super().__init__()
        self.dimension, self.index, self.length = dimension, offset, length

    def _range(self, input):
        size = input.shape[self.dimension]
        offset = self.index + size if self.index < 0 else self.index
        length = self.length
        if length < 0:
            length = size - offset + length + 1
        return offset, length

    def updateOutput(self, input):
        offset, length = self._range(input)
        self.output = input.narrow(self.dimension, offset, length)
        return self.output

    def updateGradInput(self, input, gradOutput):
        offset, length = self._range(input)
        grad = flambeau.zeros_like(input)
        grad.narrow(self.dimension, offset, length).copy_(gradOutput)
        self.gradInput = reuse(self.gradInput, grad)
        return self.gradInput


class Select(Module):
    """input.select(dimension, index) (negative indices count from the end).

    >>> from flambeau.legacy import nn
    >>> nn.Select(0, 1).forward(flambeau.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([3., 4.])
    """

    def __init__(self, dimension, index):
        super().__init__()
        self.dimension, self.index = dimension, index

    def updateOutput(self, input):
        self.output = input.select(self.dimension, self.index)
        return self.output

    def updateGradInput(self, input, gradOutput):
        grad = flambeau.zeros_like(input)
        grad.select(self.dimension, self.index).copy_(gradOutput)
        self.gradInput = reuse(self.gradInput, grad)
        return self.gradInput


def _batch_offset(dim, input, numInputDims):
    if numInputDims is not None and input.dim() > numInputDims and dim >= 0:
        return dim + 1
    return dim


class Squeeze(Module):
    """Removes size-1 dimensions (all, or only `dim`).

    >>> from flambeau.legacy import nn
    >>> nn.Squeeze().forward(flambeau.ones(2, 1, 3)).shape
    flambeau.Size([2, 3])
    """

    def __init__(self, dim=None, numInputDims=None):
        super().__init__()
        self.dim, self.numInputDims = dim, numInputDims

    def updateOutput(self, input):
        if self.dim is None:
            self.output = input.squeeze()
        else:
            self.output = input.squeeze(_batch_offset(self.dim, input, self.numInputDims))
        return self.output

    def updateGradInput(self, input, gradOutput):
        self.gradInput = gradOutput.reshape(input.shape)
        return self.gradInput


class Unsqueeze(Module):
    """Inserts a size-1 dimension at `pos`.

    >>> from flambeau.legacy import nn
    >>> nn.Unsqueeze(0).forward(flambeau.ones(2, 3)).shape
    flambeau.Size([1, 2, 3])
    """

    def __init__(self, pos, numInputDims=None):
        super().__init__()
        self.pos, self.numInputDims = pos, numInputDims

    def setNumInputDims(self, numInputDims):
        self.numInputDims = numInputDims
        return self

    def updateOutput(self, input):
        self.output = input.unsqueeze(_batch_offset(self.pos, input, self.numInputDims))
        return self.output

    def updateGradInput(self, input, gradOutput):
        self.gradInput = gradOutput.reshape(input.shape)
        return self.gradInput


class Replicate(Module):
    """Repeats the input nfeature times along a new dimension `dim` (a stride-0 view).

    >>> from flambeau.legacy import nn
    >>> nn.Replicate(3).forward(flambeau.tensor([1.0, 2.0]))
    tensor([[1., 2.],
            [1., 2.],
            [1., 2.]])
    """

    def __init__(self, nfeature, dim=0, ndim=None):
        super().__init__()
        self.nfeatures, self.dim, self.ndim = nfeature, dim, ndim

    def updateOutput(self, input):
        dim = _batch_offset(self.dim, input, self.ndim)
        size = list(input.shape)
        size.insert(dim, self.nfeatures)
        self.output = input.unsqueeze(dim).expand(size)
        return self.output

    def updateGradInput(self, input, gradOutput):
        dim = _batch_offset(self.dim, input, self.ndim)
        self.gradInput = reuse(self.gradInput, gradOutput.sum(dim))
        return self.gradInput


class Padding(Module):
    """Adds |pad| entries of `value` along `dim`: before the data when pad < 0, after it when
    pad > 0; `index` moves the insertion point that many entries into the data.

    >>> from flambeau.legacy import nn
    >>> x = flambeau.tensor([1.0, 2.0, 3.0])
    >>> nn.Padding(0, 2).forward(x)
    tensor([1., 2., 3., 0., 0.])
    >>> nn.Padding(0, -1, value=9).forward(x)
    tensor([9., 1., 2., 3.])
    """

    def __init__(self, dim, pad, nInputDim=None, value=0, index=0):
        super().__init__()
        self.dim, self.pad, self.nInputDim, self.value, self.index = (
            dim, pad, nInputDim, value, index,
        )  # fmt: skip

    def _where(self, input):
        dim = self.dim
        if self.nInputDim is not None and input.dim() != self.nInputDim and dim >= 0:
            dim += 1
        size = input.shape[dim]
        pad = abs(self.pad)
        at = size - self.index if self.pad > 0 else self.index
        return dim, size, pad, at

    def updateOutput(self, input):
        dim, size, pad, at = self._where(input)
        shape = list(input.shape)
        shape[dim] += pad
        out = flambeau.full(shape, self.value, dtype=input.dtype)
        out.narrow(dim, 0, at).copy_(input.narrow(dim, 0, at))
        out.narrow(dim, at + pad, size - at).copy_(input.narrow(dim, at, size - at))
        self.output = reuse(self.output, out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        dim, size, pad, at = self._where(input)
        grad = flambeau.cat(
            [gradOutput.narrow(dim, 0, at), gradOutput.narrow(dim, at + pad, size - at)], dim
        )
        self.gradInput = reuse(self.gradInput, grad)
        return self.gradInput


class SpatialZeroPadding(Module):
    """Pads (or, with negative sizes, crops) the last two dimensions with zeros.

    >>> from flambeau.legacy import nn
    >>> x = flambeau.tensor([[[1.0, 2.0], [3.0, 4.0]]])
    >>> nn.SpatialZeroPadding(1, 0, 0, 1).forward(x)  # left 1, right 0, top 0, bottom 1
    tensor([[[0., 1., 2.],
             [0., 3., 4.],
             [0., 0., 0.]]])
    """

    def __init__(self, pad_l, pad_r=None, pad_t=None, pad_b=None):
        super().__init__()
        self.pad_l = pad_l
        self.pad_r = pad_l if pad_r is None else pad_r
        self.pad_t = pad_l if pad_t is None else pad_t
        self.pad_b = pad_l if pad_b is None else pad_b

    def _pads(self):
        return [self.pad_l, self.pad_r, self.pad_t, self.pad_b]

    def updateOutput(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"{type(self).__name__} expects a 3-D or 4-D input")
        self.output = reuse(self.output, flambeau.constant_pad_nd(input, self._pads()))
        return self.output

    def updateGradInput(self, input, gradOutput):
        grad = flambeau.constant_pad_nd(gradOutput, [-p for p in self._pads()])
        self.gradInput = reuse(self.gradInput, grad)
        return self.gradInput

    def __repr__(self):
        l, r, t, b = self._pads()  # noqa: E741
        return f"nn.{type(self).__name__}(l={l}, r={r}, t={t}, b={b})"


class SpatialReflectionPadding(SpatialZeroPadding):
    """Pads the last two dimensions with their mirror image (edge excluded).

    >>> from flambeau.legacy import nn
    >>> x = flambeau.tensor([[[0.0, 1.0], [2.0, 3.0]]])
    >>> nn.SpatialReflectionPadding(1, 1, 0, 0).forward(x)
    tensor([[[1., 0., 1., 0.],
             [3., 2., 3., 2.]]])
    """

    _fwd, _bwd = "reflection_pad2d", "reflection_pad2d_backward"

    def __init__(self, pad_l, pad_r=None, pad_t=None, pad_b=None):
        super().__init__(pad_l, pad_r, pad_t, pad_b)
        if min(self._pads()) < 0:
            raise ValueError(f"{type(self).__name__}: padding must be non-negative")

    def updateOutput(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"{type(self).__name__} expects a 3-D or 4-D input")
        out = getattr(flambeau, self._fwd)(input.contiguous(), self._pads())
        self.output = reuse(self.output, out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        grad = getattr(flambeau, self._bwd)(
            gradOutput.contiguous(), input.contiguous(), self._pads()
        )
        self.gradInput = reuse(self.gradInput, grad)
        return self.gradInput


class SpatialReplicationPadding(SpatialReflectionPadding):
    """Pads the last two dimensions by repeating their edge values.

    >>> from flambeau.legacy import nn
    >>> x = flambeau.tensor([[[0.0, 1.0], [2.0, 3.0]]])
    >>> nn.SpatialReplicationPadding(1, 1, 0, 0).forward(x)
    tensor([[[0., 0., 1., 1.],
             [2., 2., 3., 3.]]])
    """

    _fwd, _bwd = "replication_pad2d", "replication_pad2d_backward"


class Copy(Module):
    """Copies (and casts) the input to `outtype`; the gradient goes back as `intype`.

    >>> from flambeau.legacy import nn
    >>> m = nn.Copy("torch.FloatTensor", "torch.DoubleTensor")
    >>> m.forward(flambeau.tensor([1.0, 2.0]))
    tensor([1., 2.], dtype=flambeau.float64)
    """

    def __init__(self, intype=None, outtype=None, forceCopy=False, dontCast=False):
        super().__init__()
        self.intype = None if intype is None else _dtype_of(intype)
        self.outtype = None if outtype is None else _dtype_of(outtype)
        self.forceCopy, self.dontCast = forceCopy, dontCast

    def updateOutput(self, input):
        dtype = self.outtype or input.dtype
        if not self.forceCopy and input.dtype == dtype:
            self.output = input
        else:
            self.output = reuse(self.output, input.to(dtype))
        return self.output

    def updateGradInput(self, input, gradOutput):
        dtype = self.intype or input.dtype
        if not self.forceCopy and gradOutput.dtype == dtype:
            self.gradInput = gradOutput
        else:
            self.gradInput = reuse(self.gradInput, gradOutput.to(dtype))
        return self.gradInput

    def type(self, type=None, tensorCache=None):
        if type is not None and self.dontCast:
            return self
        return super().type(type, tensorCache)


class Contiguous(Module):
    """A contiguous copy of a non-contiguous input (the input itself otherwise).

    >>> from flambeau.legacy import nn
    >>> x = flambeau.ones(2, 3).t()
    >>> x.is_contiguous(), nn.Contiguous().forward(x).is_contiguous()
    (False, True)
    """

    def updateOutput(self, input):
        self.output = input if input.is_contiguous() else reuse(self.output, input.contiguous())
        return self.output

    def updateGradInput(self, input, gradOutput):
        g = gradOutput
        self.gradInput = g if g.is_contiguous() else reuse(self.gradInput, g.contiguous())
        return self.gradInput
