"""Dropout and SpatialDropout (Torch7 semantics)."""

from __future__ import annotations

import flambeau

from .module import Module, reuse


class Dropout(Module):
    """Zeroes each element with probability p in training.

    Default (Torch7's v2): kept elements are scaled by 1/(1-p) in training, evaluation is
    the identity. v1=True: no scaling in training, outputs scaled by (1-p) in evaluation.

    >>> from flambeau.legacy import nn
    >>> m = nn.Dropout(0.5)
    >>> _ = flambeau.manual_seed(0)
    >>> m.forward(flambeau.ones(6))
    tensor([2., 0., 0., 0., 0., 2.])
    >>> m.evaluate()
    >>> m.forward(flambeau.ones(6))
    tensor([1., 1., 1., 1., 1., 1.])
    """

    def __init__(self, p=0.5, v1=False, inplace=False, stochasticInference=False):
        super().__init__()
        if not 0 <= p < 1:
            raise ValueError("Dropout: p must lie in [0, 1)")
        self.p, self.v2, self.inplace = p, not v1, inplace
        self.stochastic_inference = stochasticInference
        self.noise = flambeau.empty(0)
        self._buffers = ("noise",)

    def setp(self, p):
        self.p = p
        return self

    def _noise_shape(self, input):
        return input.shape

    def _scale_kept(self):
        return self.v2

    def updateOutput(self, input):
        if self.p > 0 and (self.train or self.stochastic_inference):
            noise = flambeau.empty(self._noise_shape(input), dtype=input.dtype)
            noise.bernoulli_(1 - self.p)
            if self._scale_kept():
                noise.div_(1 - self.p)
            self.noise = noise
            out = input * noise
        else:
            self.noise = None
            out = input * (1 - self.p) if not self._scale_kept() else input.clone()
        self.output = input.copy_(out) if self.inplace else reuse(self.output, out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        if self.noise is not None:
            gi = gradOutput * self.noise
        elif not self._scale_kept():
            gi = gradOutput * (1 - self.p)
        else:
            gi = gradOutput
        self.gradInput = gradOutput.copy_(gi) if self.inplace else reuse(self.gradInput, gi)
        return self.gradInput

    def __repr__(self):
        return f"nn.{type(self).__name__}({self.p:.4f})"


class SpatialDropout(Dropout):
    """Drops whole feature planes of (C, H, W) or (N, C, H, W) input; as Torch7, kept planes
    are not rescaled in training and evaluation multiplies by (1-p).

    >>> from flambeau.legacy import nn
    >>> m = nn.SpatialDropout(0.5)
    >>> _ = flambeau.manual_seed(0)
    >>> m.forward(flambeau.ones(3, 1, 2)).squeeze(1)  # 3 planes of 1 x 2, each kept or dropped
    tensor([[1., 1.],
            [0., 0.],
            [0., 0.]])
    >>> m.evaluate()
    >>> m.forward(flambeau.ones(3, 1, 2)).squeeze(1)
    tensor([[0.5000, 0.5000],
            [0.5000, 0.5000],
            [0.5000, 0.5000]])
    """

    def __init__(self, p=0.5):
        super().__init__(p, v1=True)

    def _noise_shape(self, input):
        if input.dim() == 4:
            return (input.shape[0], input.shape[1], 1, 1)
        if input.dim() == 3:
            return (input.shape[0], 1, 1)
        raise ValueError(f"SpatialDropout expects a 3-D or 4-D input, got {input.dim()}-D")
