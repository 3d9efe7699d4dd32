"""Gradients of the convolutions with respect to their input and weight, as ``torch.nn.grad``.

Each function runs the core's ``convolution_backward`` for the one gradient it
returns, so the result is the one autograd computes (and is itself
differentiable). The tensor whose gradient is wanted is only known by its size:
an expanded one-element tensor stands in for it.
"""

from __future__ import annotations

import flambeau

from .modules.utils import _pair, _single, _triple

__all__ = [
    "conv1d_input",
    "conv1d_weight",
    "conv2d_input",
    "conv2d_weight",
    "conv3d_input",
    "conv3d_weight",
]

_INPUT, _WEIGHT = 0, 1


def _stand_in(like, size):
    """A tensor of `size` (no memory of its own) where only the size matters."""
    return like.new_empty(1).expand(tuple(size))


def _convolution_grad(which, widen, grad_output, input, weight, stride, padding, dilation, groups):
    """convolution_backward's one gradient `which`; widen turns an int option into a
    tuple of the convolution's spatial rank (_single, _pair, _triple)."""
    stride, padding, dilation = widen(stride), widen(padding), widen(dilation)
    output_mask = [which == _INPUT, which == _WEIGHT, False]
    grads = flambeau.convolution_backward(
        grad_output,
        input,
        weight,
        None,
        list(stride),
        list(padding),
        list(dilation),
        False,
        [0] * len(stride),
        groups,
        output_mask,
    )
    return grads[which]


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of :func:`~flambeau.nn.functional.conv1d` with respect to its input
    of size `input_size` (a transposed convolution of `grad_output` by `weight`).

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.randn(1, 1, 3, requires_grad=True)
    >>> w = flambeau.randn(1, 1, 1, requires_grad=True)
    >>> out = F.conv1d(x, w)
    >>> g = flambeau.randn(out.shape)
    >>> (expected,) = flambeau.autograd.grad(out, x, g)
    >>> flambeau.allclose(F.grad.conv1d_input(x.shape, w, g), expected)
    True
    """
    input = _stand_in(grad_output, input_size)
    return _convolution_grad(
        _INPUT, _single, grad_output, input, weight, stride, padding, dilation, groups
    )


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of :func:`~flambeau.nn.functional.conv1d` with respect to its
    weight of size `weight_size`.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.randn(1, 1, 3, requires_grad=True)
    >>> w = flambeau.randn(1, 1, 1, requires_grad=True)
    >>> out = F.conv1d(x, w)
    >>> g = flambeau.randn(out.shape)
    >>> (expected,) = flambeau.autograd.grad(out, w, g)
    >>> flambeau.allclose(F.grad.conv1d_weight(x, w.shape, g), expected)
    True
    """
    weight = _stand_in(grad_output, weight_size)
    return _convolution_grad(
        _WEIGHT, _single, grad_output, input, weight, stride, padding, dilation, groups
    )


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of :func:`~flambeau.nn.functional.conv2d` with respect to its input
    of size `input_size` (a transposed convolution of `grad_output` by `weight`).

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.randn(1, 1, 3, 3, requires_grad=True)
    >>> w = flambeau.randn(1, 1, 1, 2, requires_grad=True)
    >>> out = F.conv2d(x, w)
    >>> g = flambeau.randn(out.shape)
    >>> (expected,) = flambeau.autograd.grad(out, x, g)
    >>> flambeau.allclose(F.grad.conv2d_input(x.shape, w, g), expected)
    True
    """
    input = _stand_in(grad_output, input_size)
    return _convolution_grad(
        _INPUT, _pair, grad_output, input, weight, stride, padding, dilation, groups
    )


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of :func:`~flambeau.nn.functional.conv2d` with respect to its
    weight of size `weight_size`.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.randn(1, 1, 3, 3, requires_grad=True)
    >>> w = flambeau.randn(1, 1, 1, 2, requires_grad=True)
    >>> out = F.conv2d(x, w)
    >>> g = flambeau.randn(out.shape)
    >>> (expected,) = flambeau.autograd.grad(out, w, g)
    >>> flambeau.allclose(F.grad.conv2d_weight(x, w.shape, g), expected)
    True
    """
    weight = _stand_in(grad_output, weight_size)
    return _convolution_grad(
        _WEIGHT, _pair, grad_output, input, weight, stride, padding, dilation, groups
    )


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of :func:`~flambeau.nn.functional.conv3d` with respect to its input
    of size `input_size` (a transposed convolution of `grad_output` by `weight`).

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.randn(2, 4, 3, 3, 5, requires_grad=True)
    >>> w = flambeau.randn(2, 4, 2, 2, 3, requires_grad=True)
    >>> out = F.conv3d(x, w)
    >>> g = flambeau.randn(out.shape)
    >>> (expected,) = flambeau.autograd.grad(out, x, g)
    >>> flambeau.allclose(F.grad.conv3d_input(x.shape, w, g), expected, atol=1e-5)
    True
    """
    input = _stand_in(grad_output, input_size)
    return _convolution_grad(
        _INPUT, _triple, grad_output, input, weight, stride, padding, dilation, groups
    )


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of :func:`~flambeau.nn.functional.conv3d` with respect to its
    weight of size `weight_size`.

    >>> import flambeau.nn.functional as F
    >>> x = flambeau.randn(2, 4, 3, 3, 5, requires_grad=True)
    >>> w = flambeau.randn(2, 4, 2, 2, 3, requires_grad=True)
    >>> out = F.conv3d(x, w)
    >>> g = flambeau.randn(out.shape)
    >>> (expected,) = flambeau.autograd.grad(out, w, g)
    >>> flambeau.allclose(F.grad.conv3d_weight(x, w.shape, g), expected, atol=1e-5)
    True
    """
    weight = _stand_in(grad_output, weight_size)
    return _convolution_grad(
        _WEIGHT, _triple, grad_output, input, weight, stride, padding, dilation, groups
    )
