"""Normalisation: BatchNormalization, SpatialBatchNormalization, SpatialCrossMapLRN, Normalize."""

from __future__ import annotations

import math

import flambeau

from .module import Module, reuse


class BatchNormalization(Module):
    """Normalises each feature over the batch: input (N, C) (or (N, C, L)).

    Training uses the batch statistics and updates `running_mean` / `running_var`
    (unbiased) with `momentum`; evaluate() switches to the running statistics.
    With affine=True, `weight` starts uniform in [0, 1) and `bias` at 0, as Torch7.

    >>> from flambeau.legacy import nn
    >>> m = nn.BatchNormalization(2, affine=False)
    >>> m.forward(flambeau.tensor([[1.0, 2.0], [3.0, 6.0]]))
    tensor([[-1.0000, -1.0000],
            [ 1.0000,  1.0000]])
    >>> m.running_mean
    tensor([0.2000, 0.4000])
    """

    nDim = 2

    def __init__(self, nOutput, eps=1e-5, momentum=0.1, affine=True):
        super().__init__()
        if nOutput <= 0:
            raise ValueError("BatchNormalization: nOutput must be positive")
        self.eps, self.momentum, self.affine = eps, momentum, affine
        self.running_mean = flambeau.zeros(nOutput)
        self.running_var = flambeau.ones(nOutput)
        if affine:
            self.weight = flambeau.empty(nOutput)
            self.bias = flambeau.empty(nOutput)
            self.gradWeight = flambeau.zeros(nOutput)
            self.gradBias = flambeau.zeros(nOutput)
            self.reset()
        else:
            self.weight = self.bias = self.gradWeight = self.gradBias = None
        self.save_mean = None
        self.save_std = None
        self._buffers = ()

    def reset(self, stdv=None):
        if self.weight is not None:
            self.weight.uniform_()
            self.bias.zero_()
        self.running_mean.zero_()
        self.running_var.fill_(1)
        return self

    def _check(self, input):
        ok = (self.nDim, self.nDim + 1) if self.nDim == 2 else (self.nDim - 1, self.nDim)
        if input.dim() not in ok:
            raise ValueError(
                f"{type(self).__name__} expects a {' or '.join(f'{d}-D' for d in ok)} input, "
                f"got {input.dim()}-D"
            )
        if self.nDim == 4 and input.dim() == 3:
            return input.unsqueeze(0), True
        return input, False

    def updateOutput(self, input):
        x, unbatched = self._check(input)
        out, self.save_mean, self.save_std = flambeau.native_batch_norm(
            x.contiguous(), self.weight, self.bias, self.running_mean, self.running_var,
            self.train, self.momentum, self.eps,
        )  # fmt: skip
        self.output = reuse(self.output, out.squeeze(0) if unbatched else out)
        return self.output

    def _backward(self, input, gradOutput, mask):
        x, unbatched = self._check(input)
        g = gradOutput.unsqueeze(0) if unbatched else gradOutput
        gi, gw, gb = flambeau.native_batch_norm_backward(
            g.contiguous(), x.contiguous(), self.weight, self.running_mean, self.running_var,
            self.save_mean, self.save_std, self.train, self.eps, mask,
        )  # fmt: skip
        return (gi.squeeze(0) if unbatched and gi is not None else gi), gw, gb

    def updateGradInput(self, input, gradOutput):
        gi, _, _ = self._backward(input, gradOutput, [True, False, False])
        self.gradInput = reuse(self.gradInput, gi)
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        if self.weight is None:
            return
        _, gw, gb = self._backward(input, gradOutput, [False, True, True])
        self.gradWeight.add_(gw, alpha=scale)
        self.gradBias.add_(gb, alpha=scale)

    def clearState(self):
        super().clearState()
        self.save_mean = self.save_std = None
        return self

    def __repr__(self):
        s = f"nn.{type(self).__name__} ({self.running_mean.shape[0]})"
        return s if self.affine else s + " without affine"


class SpatialBatchNormalization(BatchNormalization):
    """BatchNormalization per feature plane of (N, C, H, W) (or a single (C, H, W)) input.

    >>> from flambeau.legacy import nn
    >>> m = nn.SpatialBatchNormalization(3)
    >>> m.forward(flambeau.ones(2, 3, 4, 4)).shape
    flambeau.Size([2, 3, 4, 4])
    """

    nDim = 4


class SpatialCrossMapLRN(Module):
    """Local response normalisation across channels (Torch7's formula):
    scale_c = k + alpha/size · Σ_{c' in window(c)} x_{c'}², y = x · scale^-beta.

    >>> from flambeau.legacy import nn
    >>> m = nn.SpatialCrossMapLRN(3, alpha=3.0, beta=1.0, k=1.0)
    >>> m.forward(flambeau.ones(3, 1, 1)).flatten()
    tensor([0.3333, 0.2500, 0.3333])
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k
        self.scale = None
        self._buffers = ()

    def _window_sum(self, t, before, after):
        # Σ over channels c-before .. c+after (dim 1), zero outside the range.
        padded = flambeau.constant_pad_nd(t, [0, 0, 0, 0, before, after])
        total = padded.narrow(1, 0, t.shape[1]).clone()
        for i in range(1, before + after + 1):
            total.add_(padded.narrow(1, i, t.shape[1]))
        return total

    def _pads(self):
        before = (self.size - 1) // 2
        return before, self.size - 1 - before

    def _batched(self, x):
        if x.dim() == 3:
            return x.unsqueeze(0), True
        if x.dim() != 4:
            raise ValueError(f"SpatialCrossMapLRN expects a 3-D or 4-D input, got {x.dim()}-D")
        return x, False

    def updateOutput(self, input):
        x, unbatched = self._batched(input)
        before, after = self._pads()
        self.scale = self._window_sum(x * x, before, after).mul_(self.alpha / self.size)
        self.scale.add_(self.k)
        out = x * flambeau.pow(self.scale, -self.beta)
        self.output = reuse(self.output, out.squeeze(0) if unbatched else out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        x, unbatched = self._batched(input)
        g = gradOutput.unsqueeze(0) if unbatched else gradOutput
        y = x * flambeau.pow(self.scale, -self.beta)
        before, after = self._pads()
        # Channel c appears in the windows of c-after .. c+before: the reversed window.
        ratio = self._window_sum(g * y / self.scale, after, before)
        gi = g * flambeau.pow(self.scale, -self.beta)
        gi.sub_(x * ratio, alpha=2 * self.alpha * self.beta / self.size)
        self.gradInput = reuse(self.gradInput, gi.squeeze(0) if unbatched else gi)
        return self.gradInput

    def __repr__(self):
        return f"nn.SpatialCrossMapLRN({self.size}, {self.alpha}, {self.beta}, {self.k})"


class Normalize(Module):
    """Divides each row (1-D input: the vector) by its p-norm (p may be math.inf):
    ‖x‖_p = (Σ|x|^p + eps)^(1/p), or max|x| + eps.

    >>> from flambeau.legacy import nn
    >>> nn.Normalize(2).forward(flambeau.tensor([[3.0, 4.0], [1.0, 0.0]]))
    tensor([[0.6000, 0.8000],
            [1.0000, 0.0000]])
    """

    def __init__(self, p, eps=1e-10):
        super().__init__()
        if p <= 0:
            raise ValueError("Normalize: p must be positive")
        self.p, self.eps = p, eps

    def _rows(self, x):
        if x.dim() not in (1, 2):
            raise ValueError(f"Normalize expects a 1-D or 2-D input, got {x.dim()}-D")
        return x.view(1, -1) if x.dim() == 1 else x

    def _norm(self, x):
        if math.isinf(self.p):
            return x.abs().amax(1, keepdim=True) + self.eps
        return flambeau.pow(
            flambeau.pow(x.abs(), self.p).sum(1, keepdim=True) + self.eps, 1 / self.p
        )

    def updateOutput(self, input):
        x = self._rows(input)
        out = x / self._norm(x)
        self.output = reuse(self.output, out.view(input.shape))
        return self.output

    def updateGradInput(self, input, gradOutput):
        x = self._rows(input)
        g = gradOutput.reshape(x.shape)
        n = self._norm(x)
        dot = (g * x).sum(1, keepdim=True)
        if math.isinf(self.p):
            # Only the element achieving the max moves the norm.
            idx = x.abs().argmax(1, keepdim=True)
            dn = flambeau.zeros_like(x).scatter_(1, idx, x.gather(1, idx).sign())
        else:
            dn = flambeau.pow(x.abs(), self.p - 1) * x.sign() / flambeau.pow(n, self.p - 1)
        gi = g / n - dot * dn / (n * n)
        self.gradInput = reuse(self.gradInput, gi.view(input.shape))
        return self.gradInput

    def __repr__(self):
        return f"nn.Normalize({self.p})"
