"""LayerNorm, GroupNorm and LocalResponseNorm."""

from __future__ import annotations

import numbers

import flambeau

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


class LayerNorm(Module):
    """Normalise over the trailing normalized_shape dims, with an optional elementwise affine.

    >>> import flambeau.nn as nn
    >>> m = nn.LayerNorm(4)
    >>> m(flambeau.tensor([[1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 2.0, 2.0]]))
    tensor([[-1.3416, -0.4472,  0.4472,  1.3416],
            [ 0.0000,  0.0000,  0.0000,  0.0000]],
           grad_fn=<...>)
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None):  # fmt: skip
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            shape = self.normalized_shape
            self.weight = Parameter(flambeau.empty(shape, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(flambeau.empty(shape, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        k = len(self.normalized_shape)
        if input.dim() < k or tuple(input.shape[input.dim() - k :]) != self.normalized_shape:
            raise RuntimeError(
                f"LayerNorm: expected input with shape [*, "
                f"{', '.join(str(s) for s in self.normalized_shape)}], but got input of size "
                f"{list(input.shape)}"
            )
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class GroupNorm(Module):
    """Normalise each sample over num_groups groups of channels, then a per-channel affine.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.GroupNorm(num_groups=2, num_channels=6)
    >>> m(flambeau.randn(4, 6, 5, 5)).shape
    flambeau.Size([4, 6, 5, 5])
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device=None, dtype=None, *, bias: bool = True):  # fmt: skip
        super().__init__()
        if num_groups <= 0 or num_channels % num_groups != 0:
            raise ValueError(
                f"GroupNorm: num_channels must be divisible by num_groups (got num_channels="
                f"{num_channels}, num_groups={num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(flambeau.empty(num_channels, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(flambeau.empty(num_channels, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        if input.dim() < 2 or input.shape[1] != self.num_channels:
            raise RuntimeError(
                f"GroupNorm: expected input of shape (N, {self.num_channels}, *), but got input "
                f"of shape {tuple(input.shape)}"
            )
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class LocalResponseNorm(Module):
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels) ** beta.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.LocalResponseNorm(size=2)
    >>> m(flambeau.randn(2, 8, 5, 5)).shape
    flambeau.Size([2, 8, 5, 5])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing normalized_shape dims, with an
    optional elementwise weight; eps=None uses the input dtype's machine epsilon.

    >>> import flambeau.nn as nn
    >>> m = nn.RMSNorm(4)
    >>> m(flambeau.tensor([[1.0, -1.0, 1.0, -1.0], [2.0, 0.0, 0.0, 0.0]]))
    tensor([[ 1., -1.,  1., -1.],
            [ 2.,  0.,  0.,  0.]], grad_fn=<...>)
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine: bool = True, device=None,
                 dtype=None):  # fmt: skip
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(flambeau.empty(self.normalized_shape, dtype=dtype,
                                                   device=device))  # fmt: skip
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class CrossMapLRN2d(Module):
    """Local response normalisation across channels of (N, C, H, W), with the channel windows
    of Lua Torch's SpatialCrossMapLRN (which PyTorch keeps): channel 0 stays in the sum of
    every window. Its gradient is the exact derivative of this forward.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> m = nn.CrossMapLRN2d(size=3)
    >>> m(flambeau.randn(2, 8, 5, 5)).shape
    flambeau.Size([2, 8, 5, 5])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        windows = _cross_map_windows(input.shape[1], self.size).to(input.dtype)
        sums = flambeau.einsum("cj,njhw->nchw", windows, input * input)
        scale = sums * (self.alpha / self.size) + self.k
        return input * scale.pow(-self.beta)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _cross_map_windows(channels: int, size: int):
    """(C, C) 0/1 matrix: row c marks the channels summed for output channel c.

    The reference kernel builds each window from the previous one, adding channel
    c + pre_pad - 1 and dropping channel c - pre_pad only once c > pre_pad, so channel 0
    is never dropped: rows are {0} and [c - pre_pad + 1, c + pre_pad - 1], clipped.
    """
    pre_pad = int((size - 1) / 2 + 1)
    c = flambeau.arange(channels).unsqueeze(1)
    j = flambeau.arange(channels).unsqueeze(0)
    inside = (j >= c - pre_pad + 1) & (j <= c + pre_pad - 1)
    return inside | (j == 0)
