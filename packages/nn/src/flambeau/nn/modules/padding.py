"""Padding layers: zero, constant, reflection, replication and circular in 1, 2 and 3 dims."""

from __future__ import annotations

from .. import _functional_conv as FC
from .module import Module

__all__ = [
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
]


class _PadNd(Module):
    _nd = 0
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        n = 2 * self._nd
        if isinstance(padding, int):
            padding = (padding,) * n
        padding = tuple(int(p) for p in padding)
        if len(padding) != n:
            raise ValueError(
                f"{type(self).__name__}: padding must be an int or a tuple of {n} ints, got "
                f"{padding}"
            )
        self.padding = padding

    def _check(self, input):
        nd = self._nd
        if input.dim() not in (nd + 1, nd + 2):
            raise ValueError(
                f"{type(self).__name__}: expected a {nd + 1}-D or {nd + 2}-D input, but got input "
                f"of shape {tuple(input.shape)}"
            )

    def forward(self, input):
        self._check(input)
        return FC.pad(input, list(self.padding), self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        self._check(input)
        return FC.pad(input, list(self.padding), "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with a constant: padding (left, right).

    >>> import flambeau.nn as nn
    >>> m = nn.ConstantPad1d((2, 1), -1.0)
    >>> m(flambeau.tensor([[1.0, 2.0, 3.0]]))
    tensor([[-1., -1.,  1.,  2.,  3., -1.]])
    """

    _nd = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims with a constant: (left, right, top, bottom).

    >>> import flambeau.nn as nn
    >>> m = nn.ConstantPad2d((1, 0, 0, 1), 9.0)
    >>> m(flambeau.tensor([[[1.0, 2.0], [3.0, 4.0]]]))
    tensor([[[9., 1., 2.],
             [9., 3., 4.],
             [9., 9., 9.]]])
    """

    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims with a constant: (left, right, top, bottom, front, back).

    >>> import flambeau.nn as nn
    >>> m = nn.ConstantPad3d(1, 0.5)
    >>> out = m(flambeau.ones(1, 2, 2, 2, 2))
    >>> out.shape, out[0, 0, 0, 0, 0].item()
    (flambeau.Size([1, 2, 4, 4, 4]), 0.5)
    """

    _nd = 3


class ZeroPad1d(ConstantPad1d):
    """Pads the last dim with zeros.

    >>> import flambeau.nn as nn
    >>> m = nn.ZeroPad1d((1, 2))
    >>> m(flambeau.tensor([[1.0, 2.0, 3.0]]))
    tensor([[0., 1., 2., 3., 0., 0.]])
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pads the last 2 dims with zeros.

    >>> import flambeau.nn as nn
    >>> m = nn.ZeroPad2d(1)
    >>> m(flambeau.tensor([[[1.0, 2.0], [3.0, 4.0]]]))
    tensor([[[0., 0., 0., 0.],
             [0., 1., 2., 0.],
             [0., 3., 4., 0.],
             [0., 0., 0., 0.]]])
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pads the last 3 dims with zeros.

    >>> import flambeau.nn as nn
    >>> m = nn.ZeroPad3d((1, 1, 2, 0, 0, 1))
    >>> m(flambeau.ones(1, 2, 3, 4, 4)).shape
    flambeau.Size([1, 2, 4, 6, 6])
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    """Pads the last dim with its mirror image (edge excluded).

    >>> import flambeau.nn as nn
    >>> m = nn.ReflectionPad1d(2)
    >>> m(flambeau.tensor([[1.0, 2.0, 3.0, 4.0]]))
    tensor([[3., 2., 1., 2., 3., 4., 3., 2.]])
    """

    _nd = 1


class ReflectionPad2d(_ReflectionPadNd):
    """Pads the last 2 dims with their mirror image (edge excluded).

    >>> import flambeau.nn as nn
    >>> m = nn.ReflectionPad2d(1)
    >>> m(flambeau.arange(9.0).reshape(1, 3, 3))
    tensor([[[4., 3., 4., 5., 4.],
             [1., 0., 1., 2., 1.],
             [4., 3., 4., 5., 4.],
             [7., 6., 7., 8., 7.],
             [4., 3., 4., 5., 4.]]])
    """

    _nd = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Pads the last 3 dims with their mirror image (edge excluded).

    >>> import flambeau.nn as nn
    >>> m = nn.ReflectionPad3d(1)
    >>> m(flambeau.arange(8.0).reshape(1, 1, 2, 2, 2)).shape
    flambeau.Size([1, 1, 4, 4, 4])
    """

    _nd = 3


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    """Pads the last dim by repeating its edge values.

    >>> import flambeau.nn as nn
    >>> m = nn.ReplicationPad1d((2, 1))
    >>> m(flambeau.tensor([[1.0, 2.0, 3.0, 4.0]]))
    tensor([[1., 1., 1., 2., 3., 4., 4.]])
    """

    _nd = 1


class ReplicationPad2d(_ReplicationPadNd):
    """Pads the last 2 dims by repeating their edge values.

    >>> import flambeau.nn as nn
    >>> m = nn.ReplicationPad2d(1)
    >>> m(flambeau.tensor([[[1.0, 2.0], [3.0, 4.0]]]))
    tensor([[[1., 1., 2., 2.],
             [1., 1., 2., 2.],
             [3., 3., 4., 4.],
             [3., 3., 4., 4.]]])
    """

    _nd = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Pads the last 3 dims by repeating their edge values.

    >>> import flambeau.nn as nn
    >>> m = nn.ReplicationPad3d((1, 1, 1, 1, 0, 2))
    >>> m(flambeau.ones(1, 2, 3, 4, 4)).shape
    flambeau.Size([1, 2, 5, 6, 6])
    """

    _nd = 3


class _CircularPadNd(_PadNd):
    _mode = "circular"


class CircularPad1d(_CircularPadNd):
    """Pads the last dim by wrapping around.

    >>> import flambeau.nn as nn
    >>> m = nn.CircularPad1d((2, 1))
    >>> m(flambeau.tensor([[1.0, 2.0, 3.0, 4.0]]))
    tensor([[3., 4., 1., 2., 3., 4., 1.]])
    """

    _nd = 1


class CircularPad2d(_CircularPadNd):
    """Pads the last 2 dims by wrapping around.

    >>> import flambeau.nn as nn
    >>> m = nn.CircularPad2d(1)
    >>> m(flambeau.tensor([[[1.0, 2.0], [3.0, 4.0]]]))
    tensor([[[4., 3., 4., 3.],
             [2., 1., 2., 1.],
             [4., 3., 4., 3.],
             [2., 1., 2., 1.]]])
    """

    _nd = 2


class CircularPad3d(_CircularPadNd):
    """Pads the last 3 dims by wrapping around.

    >>> import flambeau.nn as nn
    >>> m = nn.CircularPad3d(1)
    >>> m(flambeau.ones(1, 2, 3, 4, 4)).shape
    flambeau.Size([1, 2, 5, 6, 6])
    """

    _nd = 3
