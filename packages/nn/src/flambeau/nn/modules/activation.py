"""Activation modules: the core's activation kernels and pointwise operators."""

from __future__ import annotations

import warnings

import flambeau

from .. import functional as F
from ..parameter import Parameter
from .module import Module


class ReLU(Module):
    """max(x, 0).

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    >>> m = nn.ReLU()
    >>> m(x)
    tensor([0., 0., 0., 1., 3.])
    """

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Threshold(Module):
    """x where x > threshold, else value.

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    >>> m = nn.Threshold(0.5, -1.0)
    >>> m(x)
    tensor([-1., -1., -1.,  1.,  3.])
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{inplace}"


class Sigmoid(Module):
    """1 / (1 + exp(-x)).

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    >>> m = nn.Sigmoid()
    >>> m(x)
    tensor([0.1192, 0.3775, 0.5000, 0.7311, 0.9526])
    """

    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    """tanh(x).

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    >>> m = nn.Tanh()
    >>> m(x)
    tensor([-0.9640, -0.4621,  0.0000,  0.7616,  0.9951])
    """

    def forward(self, input):
        return F.tanh(input)


class Softsign(Module):
    """x / (1 + |x|).

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    >>> m = nn.Softsign()
    >>> m(x)
    tensor([-0.6667, -0.3333,  0.0000,  0.5000,  0.7500])
    """

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """x - tanh(x).

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    >>> m = nn.Tanhshrink()
    >>> m(x)
    tensor([-1.0360, -0.0379,  0.0000,  0.2384,  2.0049])
    """

    def forward(self, input):
        return F.tanhshrink(input)


# ---- activations backed by the core's NN kernels --------------------------------------------


def _inplace_repr(inplace: bool, lead: str = "") -> str:
    if not inplace:
        return lead
    return f"{lead}, inplace=True" if lead else "inplace=True"


class _InplaceActivation(Module):
    """An activation with only an `inplace` flag."""

    _fn = None

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class ReLU6(_InplaceActivation):
    """min(max(x, 0), 6).

    >>> import flambeau.nn as nn
    >>> m = nn.ReLU6()
    >>> m(flambeau.tensor([-2.0, 0.5, 3.0, 7.0]))
    tensor([0.0000, 0.5000, 3.0000, 6.0000])
    """

    _fn = staticmethod(F.relu6)


class SELU(_InplaceActivation):
    """scale * elu(x, alpha) with the self-normalising constants.

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    >>> m = nn.SELU()
    >>> m(x)
    tensor([-1.5202, -0.6918,  0.0000,  1.0507,  3.1521])
    """

    _fn = staticmethod(F.selu)


class SiLU(_InplaceActivation):
    """x * sigmoid(x).

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    >>> m = nn.SiLU()
    >>> m(x)
    tensor([-0.2384, -0.1888,  0.0000,  0.7311,  2.8577])
    """

    _fn = staticmethod(F.silu)


class Mish(_InplaceActivation):
    """x * tanh(softplus(x)).

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    >>> m = nn.Mish()
    >>> m(x)
    tensor([-0.2525, -0.2207,  0.0000,  0.8651,  2.9865])
    """

    _fn = staticmethod(F.mish)


class Hardsigmoid(_InplaceActivation):
    """relu6(x + 3) / 6.

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    >>> m = nn.Hardsigmoid()
    >>> m(x)
    tensor([0.1667, 0.4167, 0.5000, 0.6667, 1.0000])
    """

    _fn = staticmethod(F.hardsigmoid)

    def extra_repr(self) -> str:
        return ""


class Hardswish(_InplaceActivation):
    """x * relu6(x + 3) / 6.

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    >>> m = nn.Hardswish()
    >>> m(x)
    tensor([-0.3333, -0.2083,  0.0000,  0.6667,  3.0000])
    """

    _fn = staticmethod(F.hardswish)

    def extra_repr(self) -> str:
        return ""


class LeakyReLU(Module):
    """x where x > 0, else negative_slope * x.

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    >>> m = nn.LeakyReLU(0.1)
    >>> m(x)
    tensor([-0.2000, -0.0500,  0.0000,  1.0000,  3.0000])
    """

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, f"negative_slope={self.negative_slope}")


class ELU(Module):
    """x where x > 0, else alpha * (exp(x) - 1).

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    >>> m = nn.ELU()
    >>> m(x)
    tensor([-0.8647, -0.3935,  0.0000,  1.0000,  3.0000])
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, f"alpha={self.alpha}")


class CELU(ELU):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    >>> m = nn.CELU(alpha=2.0)
    >>> m(x)
    tensor([-1.2642, -0.4424,  0.0000,  1.0000,  3.0000])
    """

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class GELU(Module):
    """x * Phi(x), or its tanh approximation.

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    >>> m = nn.GELU()
    >>> m(x)
    tensor([-0.0455, -0.1543,  0.0000,  0.8413,  2.9960])
    """

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Hardtanh(Module):
    """x clamped to [min_val, max_val].

    >>> import flambeau.nn as nn
    >>> m = nn.Hardtanh(-2.0, 2.0)
    >>> m(flambeau.tensor([-3.0, -1.0, 0.5, 2.5]))
    tensor([-2.0000, -1.0000,  0.5000,  2.0000])
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value=None, max_value=None):  # fmt: skip
        super().__init__()
        if min_value is not None:
            warnings.warn(
                "keyword argument `min_value` is deprecated and rename to `min_val`",
                FutureWarning,
                stacklevel=2,
            )
            min_val = min_value
        if max_value is not None:
            warnings.warn(
                "keyword argument `max_value` is deprecated and rename to `max_val`",
                FutureWarning,
                stacklevel=2,
            )
            max_val = max_value
        if max_val <= min_val:
            raise AssertionError(
                f"Hardtanh: max_val ({max_val}) must be greater than min_val ({min_val})"
            )
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, f"min_val={self.min_val}, max_val={self.max_val}")


class PReLU(Module):
    """x where x > 0, else a * x, with a learnt (one a, or one per channel).

    >>> import flambeau.nn as nn
    >>> m = nn.PReLU()
    >>> m.weight
    Parameter containing:
    tensor([0.2500], requires_grad=True)
    >>> m(flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0]))
    tensor([-0.5000, -0.1250,  0.0000,  1.0000,  3.0000], grad_fn=<...>)
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(flambeau.empty(num_parameters, dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        with flambeau.no_grad():
            self.weight.fill_(self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, linear above threshold.

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    >>> m = nn.Softplus()
    >>> m(x)
    tensor([0.1269, 0.4741, 0.6931, 1.3133, 3.0486])
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    """x - lambd above lambd, x + lambd below -lambd, else 0.

    >>> import flambeau.nn as nn
    >>> m = nn.Softshrink(0.5)
    >>> m(flambeau.tensor([-2.0, -1.0, 0.25, 1.0, 3.0]))
    tensor([-1.5000, -0.5000,  0.0000,  0.5000,  2.5000])
    """

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Softshrink):
    """x where |x| > lambd, else 0.

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    >>> m = nn.Hardshrink(0.5)
    >>> m(x)
    tensor([-2.,  0.,  0.,  1.,  3.])
    """

    def forward(self, input):
        return F.hardshrink(input, self.lambd)


class LogSigmoid(Module):
    """log(sigmoid(x)).

    >>> import flambeau.nn as nn
    >>> x = flambeau.tensor([-2.0, -0.5, 0.0, 1.0, 3.0])
    >>> m = nn.LogSigmoid()
    >>> m(x)
    tensor([-2.1269, -0.9741, -0.6931, -0.3133, -0.0486])
    """

    def forward(self, input):
        return F.logsigmoid(input)


class _SoftmaxFamily(Module):
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        return type(self)._fn(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_SoftmaxFamily):
    """exp(x) / sum(exp(x)) along dim.

    >>> import flambeau.nn as nn
    >>> m = nn.Softmax(dim=1)
    >>> m(flambeau.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]))
    tensor([[0.0900, 0.2447, 0.6652],
            [0.3333, 0.3333, 0.3333]])
    """

    _fn = staticmethod(F.softmax)


class LogSoftmax(_SoftmaxFamily):
    """log(softmax(x)) along dim.

    >>> import flambeau.nn as nn
    >>> m = nn.LogSoftmax(dim=1)
    >>> m(flambeau.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]))
    tensor([[-2.4076, -1.4076, -0.4076],
            [-1.0986, -1.0986, -1.0986]])
    """

    _fn = staticmethod(F.log_softmax)


class Softmin(_SoftmaxFamily):
    """softmax(-x) along dim.

    >>> import flambeau.nn as nn
    >>> m = nn.Softmin(dim=1)
    >>> m(flambeau.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]))
    tensor([[0.6652, 0.2447, 0.0900],
            [0.3333, 0.3333, 0.3333]])
    """

    _fn = staticmethod(F.softmin)


class GLU(Module):
    """a * sigmoid(b), a and b the halves of the input along dim.

    >>> import flambeau.nn as nn
    >>> m = nn.GLU()
    >>> m(flambeau.tensor([[1.0, 2.0, 0.0, 100.0]]))
    tensor([[0.5000, 2.0000]])
    """

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class RReLU(Module):
    """Randomized leaky ReLU: negative slope drawn from U(lower, upper) per element in
    training, (lower + upper) / 2 in eval.

    >>> import flambeau.nn as nn
    >>> m = nn.RReLU(0.1, 0.3).eval()
    >>> m(flambeau.tensor([-2.0, -1.0, 0.0, 1.0]))
    tensor([-0.4000, -0.2000,  0.0000,  1.0000])
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, f"lower={self.lower}, upper={self.upper}")


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of (N, C, H, W) or (C, H, W) input.

    >>> import flambeau.nn as nn
    >>> m = nn.Softmax2d()
    >>> out = m(flambeau.zeros(1, 4, 2, 2))
    >>> out.shape
    flambeau.Size([1, 4, 2, 2])
    >>> out[0, :, 0, 0]
    tensor([0.2500, 0.2500, 0.2500, 0.2500])
    """

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(
                f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead"
            )
        return F.softmax(input, -3, _stacklevel=5)


# PyTorch defines MultiheadAttention (with its out_proj class) in this file; programs
# import them from here.
from .linear import NonDynamicallyQuantizableLinear  # noqa: E402,F401
from .transformer import MultiheadAttention  # noqa: E402,F401
