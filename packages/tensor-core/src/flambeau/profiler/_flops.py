"""Floating-point operation counts of the operators PyTorch's profiler counts
(``with_flops=True``): matrix products, convolutions, and elementwise add and mul.

A count is derived from the recorded input shapes (and, for convolutions, the stride,
padding and dilation recorded as concrete inputs); a multiply-add counts as 2.
"""

from __future__ import annotations

import ast
import math

__all__ = ["flops_of"]


def _broadcast(*shapes) -> list[int]:
    n = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(n):
        dims = [s[len(s) - n + i] for s in shapes if len(s) - n + i >= 0]
        out.append(max(dims) if dims else 1)
    return out


def _matmul(a, b) -> int:
    if not a or not b:
        return 0
    if len(a) == 1 and len(b) == 1:
        return 2 * a[0]
    a2 = [1, *a] if len(a) == 1 else list(a)
    b2 = [*b, 1] if len(b) == 1 else list(b)
    m, k, n = a2[-2], a2[-1], b2[-1]
    batch = math.prod(_broadcast(a2[:-2], b2[:-2]))
    return 2 * batch * m * k * n


def _ints(text: str, count: int) -> list[int] | None:
    """A concrete int or int list, widened to count entries; None when not recorded."""
    if not text:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    if isinstance(value, int):
        return [value] * count
    value = list(value)
    return value * count if len(value) == 1 else value


def _convolution(shapes, concrete, transposed: bool = False) -> int:
    x, w = shapes[0], shapes[1]
    if len(x) < 3 or len(w) != len(x):
        return 0
    spatial = len(x) - 2
    stride = _ints(concrete[3] if len(concrete) > 3 else "", spatial) or [1] * spatial
    padding = _ints(concrete[4] if len(concrete) > 4 else "", spatial) or [0] * spatial
    dilation = _ints(concrete[5] if len(concrete) > 5 else "", spatial) or [1] * spatial
    kernel = w[2:]
    if transposed:  # the output's size is the input's, scaled up: count per input point
        out_points = math.prod(x[2:])
        return 2 * x[0] * out_points * x[1] * math.prod(kernel) * w[1]
    out = [
        (x[2 + d] + 2 * padding[d] - dilation[d] * (kernel[d] - 1) - 1) // stride[d] + 1
        for d in range(spatial)
    ]
    if any(o <= 0 for o in out):
        return 0
    # weight (out_channels, in_channels / groups, *kernel): one multiply-add per weight
    # entry for every output point.
    return 2 * x[0] * math.prod(out) * math.prod(w)


def flops_of(name: str, shapes, concrete) -> int:
    """The count for one call of operator name ("aten::mm"), or 0 if it is not counted."""
    op = name.removeprefix("aten::")
    try:
        if op in ("mm", "matmul", "bmm"):
            return _matmul(shapes[0], shapes[1])
        if op in ("addmm", "baddbmm"):
            return _matmul(shapes[1], shapes[2])
        if op in ("conv1d", "conv2d", "conv3d", "convolution"):
            return _convolution(shapes, concrete)
        if op in ("conv_transpose1d", "conv_transpose2d", "conv_transpose3d"):
            return _convolution(shapes, concrete, transposed=True)
        if op in ("add", "add_", "mul", "mul_"):
            return math.prod(_broadcast(*(s for s in shapes[:2] if s)))
    except (IndexError, TypeError):
        return 0
    return 0
