"""Pooling over the core's pooling kernels and their backward kernels."""

from __future__ import annotations

import flambeau

from .module import Module, reuse


def _batched(module, x, nd):
    if x.dim() == nd + 1:
        return x.unsqueeze(0), True
    if x.dim() != nd + 2:
        raise ValueError(
            f"{type(module).__name__} expects a {nd + 1}-D or {nd + 2}-D input, got {x.dim()}-D"
        )
    return x, False


class _CeilMode:
    """Torch7's :ceil() / :floor(): how the output size rounds."""

    def ceil(self):
        self.ceil_mode = True
        return self

    def floor(self):
        self.ceil_mode = False
        return self


class _MaxPooling(_CeilMode, Module):
    nd = 2

    def __init__(self, kernel, stride, padding):
        super().__init__()
        self.kernel, self.stride_, self.padding = list(kernel), list(stride), list(padding)
        self.ceil_mode = False
        self.indices = flambeau.empty(0, dtype=flambeau.int64)
        self._buffers = ("indices",)

    def _kernels(self):
        if self.nd == 2:
            return flambeau.max_pool2d_with_indices, flambeau.max_pool2d_with_indices_backward
        return flambeau.max_pool3d_with_indices, flambeau.max_pool3d_with_indices_backward

    def updateOutput(self, input):
        x, unbatched = _batched(self, input, self.nd)
        fwd, _ = self._kernels()
        out, self.indices = fwd(
            x.contiguous(), self.kernel, self.stride_, self.padding, [1] * self.nd, self.ceil_mode
        )
        self.output = reuse(self.output, out.squeeze(0) if unbatched else out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        x, unbatched = _batched(self, input, self.nd)
        g = gradOutput.unsqueeze(0) if unbatched else gradOutput
        _, bwd = self._kernels()
        gi = bwd(
            g.contiguous(), x.contiguous(), self.kernel, self.stride_, self.padding,
            [1] * self.nd, self.ceil_mode, self.indices,
        )  # fmt: skip
        self.gradInput = reuse(self.gradInput, gi.squeeze(0) if unbatched else gi)
        return self.gradInput


class SpatialMaxPooling(_MaxPooling):
    """Max over kH x kW windows; `ceil()` switches the output size to ceil mode.

    >>> from flambeau.legacy import nn
    >>> x = flambeau.arange(16.0).view(1, 4, 4)
    >>> nn.SpatialMaxPooling(2, 2).forward(x)
    tensor([[[ 5.,  7.],
             [13., 15.]]])
    """

    def __init__(self, kW, kH, dW=None, dH=None, padW=0, padH=0):
        dW = kW if dW is None else dW
        dH = kH if dH is None else dH
        self.kW, self.kH, self.dW, self.dH, self.padW, self.padH = kW, kH, dW, dH, padW, padH
        super().__init__((kH, kW), (dH, dW), (padH, padW))

    def __repr__(self):
        s = f"nn.SpatialMaxPooling({self.kW}x{self.kH}, {self.dW},{self.dH}"
        if self.padW or self.padH:
            s += f", {self.padW},{self.padH}"
        return s + ")"


class VolumetricMaxPooling(_MaxPooling):
    """Max over kT x kH x kW windows of a 4-D or 5-D input.

    >>> from flambeau.legacy import nn
    >>> x = flambeau.arange(8.0).view(1, 2, 2, 2)
    >>> nn.VolumetricMaxPooling(2, 2, 2).forward(x)
    tensor([[[[7.]]]])
    """

    nd = 3

    def __init__(self, kT, kW, kH, dT=None, dW=None, dH=None, padT=0, padW=0, padH=0):
        dT = kT if dT is None else dT
        dW = kW if dW is None else dW
        dH = kH if dH is None else dH
        self.kT, self.kW, self.kH, self.dT, self.dW, self.dH = kT, kW, kH, dT, dW, dH
        self.padT, self.padW, self.padH = padT, padW, padH
        super().__init__((kT, kH, kW), (dT, dH, dW), (padT, padH, padW))

    def __repr__(self):
        return (
            f"nn.VolumetricMaxPooling({self.kT}x{self.kW}x{self.kH}, {self.dT},{self.dW},{self.dH})"
        )


class TemporalMaxPooling(Module):
    """Max over windows of kW frames: input (nFrames, C) or (N, nFrames, C).

    >>> from flambeau.legacy import nn
    >>> x = flambeau.tensor([[1.0, 8.0], [4.0, 2.0], [3.0, 5.0], [0.0, 6.0]])  # 4 frames of 2
    >>> nn.TemporalMaxPooling(2).forward(x)
    tensor([[4., 8.],
            [3., 6.]])
    """

    def __init__(self, kW, dW=None):
        super().__init__()
        self.kW, self.dW = kW, kW if dW is None else dW
        self.indices = flambeau.empty(0, dtype=flambeau.int64)
        self._buffers = ("indices",)

    def _planes(self, x):
        # (N, T, C) -> (N, C, 1, T): a 2-D max pooling with a 1 x kW window.
        if x.dim() == 2:
            return x.unsqueeze(0).transpose(1, 2).unsqueeze(2), True
        if x.dim() != 3:
            raise ValueError(f"TemporalMaxPooling expects a 2-D or 3-D input, got {x.dim()}-D")
        return x.transpose(1, 2).unsqueeze(2), False

    @staticmethod
    def _frames(y, unbatched):
        y = y.squeeze(2).transpose(1, 2)
        return y.squeeze(0) if unbatched else y

    def updateOutput(self, input):
        x, unbatched = self._planes(input)
        out, self.indices = flambeau.max_pool2d_with_indices(
            x.contiguous(), [1, self.kW], [1, self.dW], [0, 0], [1, 1], False
        )
        self.output = reuse(self.output, self._frames(out, unbatched))
        return self.output

    def updateGradInput(self, input, gradOutput):
        x, unbatched = self._planes(input)
        g, _ = self._planes(gradOutput)
        gi = flambeau.max_pool2d_with_indices_backward(
            g.contiguous(), x.contiguous(), [1, self.kW], [1, self.dW], [0, 0], [1, 1], False,
            self.indices,
        )  # fmt: skip
        self.gradInput = reuse(self.gradInput, self._frames(gi, unbatched))
        return self.gradInput

    def __repr__(self):
        return f"nn.TemporalMaxPooling({self.kW}, {self.dW})"


class SpatialAveragePooling(_CeilMode, Module):
    """Mean over kH x kW windows; `ceil()`, `setCountIncludePad()`/`setCountExcludePad()`.
    With divide=False it sums instead (Torch7's legacy option).

    >>> from flambeau.legacy import nn
    >>> x = flambeau.arange(16.0).view(1, 4, 4)
    >>> nn.SpatialAveragePooling(2, 2, 2, 2).forward(x)
    tensor([[[ 2.5000,  4.5000],
             [10.5000, 12.5000]]])
    """

    def __init__(self, kW, kH, dW=1, dH=1, padW=0, padH=0):
        super().__init__()
        self.kW, self.kH, self.dW, self.dH, self.padW, self.padH = kW, kH, dW, dH, padW, padH
        self.ceil_mode = False
        self.count_include_pad = True
        self.divide = True

    def setCountIncludePad(self):
        self.count_include_pad = True
        return self

    def setCountExcludePad(self):
        self.count_include_pad = False
        return self

    def _args(self):
        divisor = None if self.divide else 1
        return (
            [self.kH, self.kW], [self.dH, self.dW], [self.padH, self.padW], self.ceil_mode,
            self.count_include_pad, divisor,
        )  # fmt: skip

    def updateOutput(self, input):
        x, unbatched = _batched(self, input, 2)
        out = flambeau.avg_pool2d(x.contiguous(), *self._args())
        self.output = reuse(self.output, out.squeeze(0) if unbatched else out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        x, unbatched = _batched(self, input, 2)
        g = gradOutput.unsqueeze(0) if unbatched else gradOutput
        gi = flambeau.avg_pool2d_backward(g.contiguous(), x.contiguous(), *self._args())
        self.gradInput = reuse(self.gradInput, gi.squeeze(0) if unbatched else gi)
        return self.gradInput

    def __repr__(self):
        s = f"nn.SpatialAveragePooling({self.kW}x{self.kH}, {self.dW},{self.dH}"
        if self.padW or self.padH:
            s += f", {self.padW},{self.padH}"
        return s + ")"


class SpatialAdaptiveMaxPooling(Module):
    """Max pooling whose windows give an oH x oW output whatever the input size.

    >>> from flambeau.legacy import nn
    >>> x = flambeau.arange(16.0).view(1, 4, 4)
    >>> nn.SpatialAdaptiveMaxPooling(2, 1).forward(x)  # output width 2, height 1
    tensor([[[13., 15.]]])
    """

    def __init__(self, W, H):
        super().__init__()
        self.W, self.H = W, H
        self.indices = flambeau.empty(0, dtype=flambeau.int64)
        self._buffers = ("indices",)

    def updateOutput(self, input):
        x, unbatched = _batched(self, input, 2)
        out, self.indices = flambeau.adaptive_max_pool2d(x.contiguous(), [self.H, self.W])
        self.output = reuse(self.output, out.squeeze(0) if unbatched else out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        x, unbatched = _batched(self, input, 2)
        g = gradOutput.unsqueeze(0) if unbatched else gradOutput
        gi = flambeau.adaptive_max_pool2d_backward(g.contiguous(), x.contiguous(), self.indices)
        self.gradInput = reuse(self.gradInput, gi.squeeze(0) if unbatched else gi)
        return self.gradInput

    def __repr__(self):
        return f"nn.SpatialAdaptiveMaxPooling({self.W}x{self.H})"
