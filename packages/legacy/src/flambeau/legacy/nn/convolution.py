"""Convolutions over the core's `convolution` / `convolution_backward` kernels.

Torch7 orders sizes width first (kW, kH, dW, dH, padW, padH); the kernels take
them height first. Every module accepts an unbatched input (one dimension fewer).
"""

from __future__ import annotations

import flambeau

from .module import Module, default_stdv, reuse, uniform_


class _Convolution(Module):
    """Shared forward/backward; subclasses set the geometry and the weight layout."""

    nd = 2  # spatial dimensions
    transposed = False

    def _init(self, weight_shape, nOutputPlane, stride, padding, dilation=None, adj=None):
        self.weight = flambeau.empty(*weight_shape)
        self.gradWeight = flambeau.zeros(*weight_shape)
        self.bias = flambeau.empty(nOutputPlane)
        self.gradBias = flambeau.zeros(nOutputPlane)
        self.stride = list(stride)
        self.padding = list(padding)
        self.dilation = list(dilation or [1] * self.nd)
        self.output_padding = list(adj or [0] * self.nd)
        self.reset()

    def noBias(self):
        self.bias = None
        self.gradBias = None
        return self

    def _fan_in(self):
        w = self._kernel_weight()
        n = w.shape[0] if self.transposed else w.shape[1]
        return n * w[0, 0].numel()

    def reset(self, stdv=None):
        stdv = default_stdv(stdv, self._fan_in())
        uniform_(self.weight, stdv)
        uniform_(self.bias, stdv)
        return self

    # The weight as the kernel wants it, and where a kernel-layout gradient goes.
    def _kernel_weight(self):
        return self.weight

    def _add_grad_weight(self, gw, scale):
        self.gradWeight.add_(gw, alpha=scale)

    def _batched(self, x):
        if x.dim() == self.nd + 1:
            return x.unsqueeze(0), True
        if x.dim() != self.nd + 2:
            raise ValueError(
                f"{type(self).__name__} expects a {self.nd + 1}-D or {self.nd + 2}-D input, "
                f"got {x.dim()}-D"
            )
        return x, False

    def _conv_input(self, input):
        return self._batched(input)

    def _conv_output(self, out, unbatched):
        return out.squeeze(0) if unbatched else out

    def _conv_grad(self, grad, unbatched):
        return self._batched(grad)[0]

    def updateOutput(self, input):
        x, unbatched = self._conv_input(input)
        out = flambeau.convolution(
            x.contiguous(), self._kernel_weight().contiguous(), self.bias, self.stride,
            self.padding, self.dilation, self.transposed, self.output_padding, 1,
        )  # fmt: skip
        self.output = reuse(self.output, self._conv_output(out, unbatched))
        return self.output

    def _backward(self, input, gradOutput, mask):
        x, unbatched = self._conv_input(input)
        g = self._conv_grad(gradOutput, unbatched)
        bias_sizes = None if self.bias is None else list(self.bias.shape)
        return x, unbatched, flambeau.convolution_backward(
            g.contiguous(), x.contiguous(), self._kernel_weight().contiguous(), bias_sizes,
            self.stride, self.padding, self.dilation, self.transposed, self.output_padding,
            1, mask,
        )  # fmt: skip

    def _input_grad_layout(self, gi, unbatched):
        return gi.squeeze(0) if unbatched else gi

    def updateGradInput(self, input, gradOutput):
        _, unbatched, (gi, _, _) = self._backward(input, gradOutput, [True, False, False])
        self.gradInput = reuse(self.gradInput, self._input_grad_layout(gi, unbatched))
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        mask = [False, True, self.bias is not None]
        _, _, (_, gw, gb) = self._backward(input, gradOutput, mask)
        self._add_grad_weight(gw, scale)
        if self.bias is not None:
            self.gradBias.add_(gb, alpha=scale)


class SpatialConvolution(_Convolution):
    """2-D convolution; weight (nOutputPlane, nInputPlane, kH, kW); input (C, H, W) or
    (N, C, H, W).

    >>> from flambeau.legacy import nn
    >>> m = nn.SpatialConvolution(1, 4, 3, 3)  # 1 -> 4 planes, 3x3 kernel
    >>> m.forward(flambeau.ones(2, 1, 5, 5)).shape
    flambeau.Size([2, 4, 3, 3])
    """

    def __init__(self, nInputPlane, nOutputPlane, kW, kH, dW=1, dH=1, padW=0, padH=None):
        super().__init__()
        padH = padW if padH is None else padH
        self.nInputPlane, self.nOutputPlane = nInputPlane, nOutputPlane
        self.kW, self.kH, self.dW, self.dH, self.padW, self.padH = kW, kH, dW, dH, padW, padH
        self._init((nOutputPlane, nInputPlane, kH, kW), nOutputPlane, (dH, dW), (padH, padW))

    def __repr__(self):
        s = f"nn.{type(self).__name__}({self.nInputPlane} -> {self.nOutputPlane}, "
        s += f"{self.kW}x{self.kH}"
        if self.dW != 1 or self.dH != 1 or self.padW or self.padH:
            s += f", {self.dW},{self.dH}"
        if self.padW or self.padH:
            s += f", {self.padW},{self.padH}"
        return s + ")" + ("" if self.bias is not None else " without bias")


class SpatialConvolutionMM(SpatialConvolution):
    """SpatialConvolution with Torch7's 2-D weight layout (nOutputPlane, nInputPlane·kH·kW).

    >>> from flambeau.legacy import nn
    >>> m = nn.SpatialConvolutionMM(1, 4, 3, 3)
    >>> m.weight.shape
    flambeau.Size([4, 9])
    >>> m.forward(flambeau.ones(2, 1, 5, 5)).shape
    flambeau.Size([2, 4, 3, 3])
    """

    def __init__(self, nInputPlane, nOutputPlane, kW, kH, dW=1, dH=1, padW=0, padH=None):
        super().__init__(nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH)
        self.weight = self.weight.reshape(nOutputPlane, -1).clone()
        self.gradWeight = self.gradWeight.reshape(nOutputPlane, -1).clone()

    def _kernel_weight(self):
        return self.weight.view(self.nOutputPlane, self.nInputPlane, self.kH, self.kW)

    def _add_grad_weight(self, gw, scale):
        self.gradWeight.add_(gw.reshape(self.gradWeight.shape), alpha=scale)


class SpatialDilatedConvolution(SpatialConvolution):
    """SpatialConvolution whose kernel taps are dilationW/dilationH apart.

    >>> from flambeau.legacy import nn
    >>> m = nn.SpatialDilatedConvolution(1, 4, 3, 3, dilationW=2, dilationH=2)
    >>> m.forward(flambeau.ones(1, 7, 7)).shape
    flambeau.Size([4, 3, 3])
    """

    def __init__(self, nInputPlane, nOutputPlane, kW, kH, dW=1, dH=1, padW=0, padH=0,
                 dilationW=1, dilationH=1):  # fmt: skip
        super().__init__(nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH)
        self.dilationW, self.dilationH = dilationW, dilationH
        self.dilation = [dilationH, dilationW]

    def __repr__(self):
        s = super().__repr__()
        return s[: s.index(")")] + f", {self.dilationW},{self.dilationH}" + s[s.index(")") :]


class SpatialFullConvolution(_Convolution):
    """Transposed 2-D convolution; weight (nInputPlane, nOutputPlane, kH, kW); adjW/adjH add
    to the output size as PyTorch's output_padding.

    >>> from flambeau.legacy import nn
    >>> m = nn.SpatialFullConvolution(4, 1, 3, 3)
    >>> m.forward(flambeau.ones(2, 4, 3, 3)).shape
    flambeau.Size([2, 1, 5, 5])
    """

    transposed = True

    def __init__(self, nInputPlane, nOutputPlane, kW, kH, dW=1, dH=1, padW=0, padH=0,
                 adjW=0, adjH=0):  # fmt: skip
        super().__init__()
        if adjW > dW - 1 or adjH > dH - 1:
            raise ValueError("SpatialFullConvolution: adjW/adjH must be smaller than dW/dH")
        self.nInputPlane, self.nOutputPlane = nInputPlane, nOutputPlane
        self.kW, self.kH, self.dW, self.dH, self.padW, self.padH = kW, kH, dW, dH, padW, padH
        self.adjW, self.adjH = adjW, adjH
        self._init(
            (nInputPlane, nOutputPlane, kH, kW), nOutputPlane, (dH, dW), (padH, padW),
            adj=(adjH, adjW),
        )  # fmt: skip

    def _fan_in(self):
        return self.nInputPlane * self.kH * self.kW  # Torch7: nInputPlane·kW·kH

    def __repr__(self):
        s = f"nn.SpatialFullConvolution({self.nInputPlane} -> {self.nOutputPlane}, "
        s += f"{self.kW}x{self.kH}, {self.dW},{self.dH}, {self.padW},{self.padH})"
        return s


class VolumetricConvolution(_Convolution):
    """3-D convolution; weight (nOutputPlane, nInputPlane, kT, kH, kW); input 4-D or 5-D.

    >>> from flambeau.legacy import nn
    >>> m = nn.VolumetricConvolution(1, 2, 3, 3, 3)
    >>> m.forward(flambeau.ones(1, 1, 4, 4, 4)).shape
    flambeau.Size([1, 2, 2, 2, 2])
    """

    nd = 3

    def __init__(self, nInputPlane, nOutputPlane, kT, kW, kH, dT=1, dW=1, dH=1,
                 padT=0, padW=0, padH=0):  # fmt: skip
        super().__init__()
        self.nInputPlane, self.nOutputPlane = nInputPlane, nOutputPlane
        self.kT, self.kW, self.kH, self.dT, self.dW, self.dH = kT, kW, kH, dT, dW, dH
        self.padT, self.padW, self.padH = padT, padW, padH
        self._init(
            (nOutputPlane, nInputPlane, kT, kH, kW), nOutputPlane, (dT, dH, dW),
            (padT, padH, padW),
        )  # fmt: skip

    def __repr__(self):
        return (
            f"nn.VolumetricConvolution({self.nInputPlane} -> {self.nOutputPlane}, "
            f"{self.kT}x{self.kW}x{self.kH}, {self.dT},{self.dW},{self.dH}, "
            f"{self.padT},{self.padW},{self.padH})"
        )


class TemporalConvolution(_Convolution):
    """1-D convolution over frames: input (nFrames, inputFrameSize) or (N, nFrames, inputFrameSize);
    weight (outputFrameSize, kW·inputFrameSize), frame by frame as Torch7 lays it out.

    >>> from flambeau.legacy import nn
    >>> m = nn.TemporalConvolution(3, 5, 2)  # 3 features in, 5 out, 2 frames wide
    >>> m.forward(flambeau.ones(4, 3)).shape
    flambeau.Size([3, 5])
    """

    nd = 1

    def __init__(self, inputFrameSize, outputFrameSize, kW, dW=1):
        super().__init__()
        self.inputFrameSize, self.outputFrameSize, self.kW, self.dW = (
            inputFrameSize, outputFrameSize, kW, dW,
        )  # fmt: skip
        self._init((outputFrameSize, kW * inputFrameSize), outputFrameSize, (dW,), (0,))

    def _fan_in(self):
        return self.kW * self.inputFrameSize

    def _kernel_weight(self):
        # weight[o, k·in + i] is kernel tap k of input feature i: (out, in, kW) for conv1d.
        return self.weight.view(self.outputFrameSize, self.kW, self.inputFrameSize).permute(0, 2, 1)

    def _add_grad_weight(self, gw, scale):
        self.gradWeight.add_(gw.permute(0, 2, 1).reshape(self.gradWeight.shape), alpha=scale)

    # Frames are rows: (N, T, C) <-> the kernel's (N, C, T).
    def _conv_input(self, input):
        x, unbatched = self._batched(input)
        return x.transpose(1, 2), unbatched

    def _conv_output(self, out, unbatched):
        out = out.transpose(1, 2)
        return out.squeeze(0) if unbatched else out

    def _conv_grad(self, grad, unbatched):
        g = grad.unsqueeze(0) if unbatched else grad
        return g.transpose(1, 2)

    def _input_grad_layout(self, gi, unbatched):
        gi = gi.transpose(1, 2)
        return gi.squeeze(0) if unbatched else gi

    def __repr__(self):
        return (
            f"nn.TemporalConvolution({self.inputFrameSize} -> {self.outputFrameSize}, "
            f"{self.kW}, {self.dW})"
        )
