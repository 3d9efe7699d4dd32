"""Folding an eval-mode BatchNorm into the convolution or linear layer before it.

BatchNorm in eval mode is the affine map y = (x - mean) * w / sqrt(var + eps) + b per
channel, so it folds into the preceding layer's weight (scaled per output channel) and bias.
"""

from __future__ import annotations

import copy

import flambeau

from ..parameter import Parameter

__all__ = [
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
]


def _check_eval(layer, bn) -> None:
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of `conv` whose output equals bn(conv(x)) with both in eval mode.

    transpose: conv is a transposed convolution (output channels on weight dim 1).

    >>> import flambeau.nn as nn
    >>> conv, bn = nn.Conv2d(3, 4, 3).eval(), nn.BatchNorm2d(4).eval()
    >>> fused = nn.utils.fuse_conv_bn_eval(conv, bn)
    >>> x = flambeau.randn(1, 3, 5, 5)
    >>> flambeau.allclose(fused(x), bn(conv(x)), atol=1e-6)
    True
    """
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose,
    )  # fmt: skip
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The (weight, bias) Parameters of the convolution that equals conv then batch norm.

    conv_b, bn_w and bn_b may be None (zero bias, unit scale, zero shift). The results keep
    the convolution's dtypes.

    >>> import flambeau.nn as nn
    >>> w, b = flambeau.ones(2, 1, 1, 1), flambeau.zeros(2)
    >>> mean, var = flambeau.tensor([1.0, 0.0]), flambeau.tensor([4.0, 1.0])
    >>> fw, fb = nn.utils.fuse_conv_bn_weights(w, b, mean, var, 0.0, None, None)
    >>> fw.data.flatten(), fb.data
    (tensor([0.5000, 1.0000]), tensor([-0.5000,  0.0000]))
    """
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    if conv_b is None:
        conv_b = flambeau.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = flambeau.ones_like(bn_rm)
    if bn_b is None:
        bn_b = flambeau.zeros_like(bn_rm)
    inv_std = flambeau.rsqrt(bn_rv + bn_eps)
    channel_axis = [1, -1] if transpose else [-1, 1]
    shape = channel_axis + [1] * (conv_w.dim() - 2)
    fused_w = (conv_w * (bn_w * inv_std).reshape(shape)).to(weight_dtype)
    fused_b = ((conv_b - bn_rm) * inv_std * bn_w + bn_b).to(bias_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of `linear` whose output equals bn(linear(x)) with both in eval mode; bn has
    linear.out_features features, or 1.

    >>> import flambeau.nn as nn
    >>> linear, bn = nn.Linear(3, 4).eval(), nn.BatchNorm1d(4).eval()
    >>> fused = nn.utils.fuse_linear_bn_eval(linear, bn)
    >>> x = flambeau.randn(2, 3)
    >>> flambeau.allclose(fused(x), bn(linear(x)), atol=1e-6)
    True
    """
    _check_eval(linear, bn)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
            f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}"
        )
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The (weight, bias) Parameters of the linear layer that equals linear then batch norm.

    >>> import flambeau.nn as nn
    >>> w, b = flambeau.eye(2), flambeau.zeros(2)
    >>> mean, var = flambeau.tensor([1.0, 0.0]), flambeau.tensor([4.0, 1.0])
    >>> gamma, beta = flambeau.ones(2), flambeau.tensor([0.0, 5.0])
    >>> fw, fb = nn.utils.fuse_linear_bn_weights(w, b, mean, var, 0.0, gamma, beta)
    >>> fw.data, fb.data
    (tensor([[0.5000, 0.0000],
            [0.0000, 1.0000]]), tensor([-0.5000,  5.0000]))
    """
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    if linear_b is None:
        linear_b = flambeau.zeros_like(bn_rm)
    scale = bn_w * flambeau.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * scale.unsqueeze(-1).to(weight_dtype)
    fused_b = ((linear_b - bn_rm) * scale + bn_b).to(bias_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)
