"""``flambeau.nn.init``: in-place initialisers with PyTorch's fans, gains and distributions.

Every function fills its tensor without recording gradients and returns it. The names
without the trailing underscore are PyTorch's deprecated aliases.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import warnings

import flambeau
from flambeau import no_grad
from flambeau.overrides import _dispatch_on

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
    "uniform",
    "normal",
    "constant",
    "eye",
    "dirac",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_uniform",
    "kaiming_normal",
    "orthogonal",
    "sparse",
]

# nn.utils.skip_init builds a module with its initialisers turned into no-ops (flambeau has no
# meta device to build on); the flag is per thread and per async context.
_skipping = contextvars.ContextVar("flambeau_nn_init_skipping", default=False)


@contextlib.contextmanager
def _skip_initialization():
    token = _skipping.set(True)
    try:
        yield
    finally:
        _skipping.reset(token)


def _initializer(fill):
    """Marks an in-place initialiser: under _skip_initialization it returns its tensor as is."""

    @functools.wraps(fill)
    def initialize(tensor, *args, **kwargs):
        return tensor if _skipping.get() else fill(tensor, *args, **kwargs)

    return initialize


_LINEAR_GAIN_ONE = {
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
}


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for a nonlinearity (param: leaky_relu's negative slope).

    >>> import flambeau.nn as nn
    >>> nn.init.calculate_gain("relu"), nn.init.calculate_gain("tanh")
    (1.4142135623730951, 1.6666666666666667)
    >>> nn.init.calculate_gain("leaky_relu", 0.2)
    1.3867504905630728
    """
    if nonlinearity in _LINEAR_GAIN_ONE:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = math.prod(tensor.shape[2:])
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _calculate_correct_fan(tensor, mode: str) -> int:
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


@_dispatch_on("tensor")  # PyTorch hands it to __torch_function__
@_initializer
def uniform_(tensor, a: float = 0.0, b: float = 1.0, generator=None):
    """Fills with U(a, b).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> w = nn.init.uniform_(flambeau.empty(2, 3), a=-1.0, b=1.0)
    >>> w
    tensor([[-0.2019,  0.7610,  0.4714],
            [ 0.2110,  0.9445, -0.2758]])
    >>> bool(w.abs().max() <= 1.0)
    True
    """
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


@_dispatch_on("tensor")  # PyTorch hands it to __torch_function__
@_initializer
def normal_(tensor, mean: float = 0.0, std: float = 1.0, generator=None):
    """Fills with N(mean, std^2).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> w = nn.init.normal_(flambeau.empty(100, 100), mean=2.0, std=0.5)
    >>> round(w.mean().item(), 1), round(w.std().item(), 1)
    (2.0, 0.5)
    """
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


@_initializer
def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fills with N(mean, std^2) truncated to [a, b], by inverting the normal CDF.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> w = nn.init.trunc_normal_(flambeau.empty(100, 100), std=1.0, a=-2.0, b=2.0)
    >>> bool(w.abs().max() <= 2.0)
    True
    >>> round(w.std().item(), 1)
    0.9
    """

    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of "
            "values may be incorrect.",
            stacklevel=3,  # past the _initializer wrapper
        )
    with no_grad():
        lo, hi = cdf((a - mean) / std), cdf((b - mean) / std)
        tensor.uniform_(2 * lo - 1, 2 * hi - 1, generator=generator)
        tensor.copy_(flambeau.erfinv(tensor))
        tensor.mul_(std * math.sqrt(2.0))
        tensor.add_(mean)
        tensor.clamp_(min=a, max=b)
        return tensor


@_dispatch_on("tensor")  # PyTorch hands it to __torch_function__
@_initializer
def constant_(tensor, val: float):
    """Fills with val.

    >>> import flambeau.nn as nn
    >>> nn.init.constant_(flambeau.empty(2, 3), 0.3)
    tensor([[0.3000, 0.3000, 0.3000],
            [0.3000, 0.3000, 0.3000]])
    """
    with no_grad():
        return tensor.fill_(val)


@_initializer
def ones_(tensor):
    """Fills ``tensor`` with 1, in place and without recording autograd history. Returns
    ``tensor``.

    >>> import flambeau.nn as nn
    >>> nn.init.ones_(flambeau.empty(2, 3))
    tensor([[1., 1., 1.],
            [1., 1., 1.]])
    """
    with no_grad():
        return tensor.fill_(1.0)


@_initializer
def zeros_(tensor):
    """Fills ``tensor`` with 0, in place and without recording autograd history. Returns
    ``tensor``.

    >>> import flambeau.nn as nn
    >>> nn.init.zeros_(flambeau.empty(2, 3))
    tensor([[0., 0., 0.],
            [0., 0., 0.]])
    """
    with no_grad():
        return tensor.zero_()


@_initializer
def eye_(tensor):
    """Fills a 2-D tensor with the identity matrix.

    >>> import flambeau.nn as nn
    >>> nn.init.eye_(flambeau.empty(2, 3))
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return tensor.copy_(flambeau.eye(tensor.size(0), tensor.size(1), dtype=tensor.dtype))


@_initializer
def dirac_(tensor, groups: int = 1):
    """Fills a 3/4/5-D convolution weight with the identity (per group).

    >>> import flambeau.nn as nn
    >>> w = nn.init.dirac_(flambeau.empty(2, 2, 3))
    >>> w[0]
    tensor([[0., 1., 0.],
            [0., 0., 0.]])
    >>> w[:, :, 1]
    tensor([[1., 0.],
            [0., 1.]])
    """
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    with no_grad():
        tensor.zero_()
        centre = tuple(s // 2 for s in sizes[2:])
        for g in range(groups):
            for d in range(min(per_group, sizes[1])):
                tensor[(g * per_group + d, d, *centre)] = 1
    return tensor


@_initializer
def xavier_uniform_(tensor, gain: float = 1.0, generator=None):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> w = nn.init.xavier_uniform_(flambeau.empty(30, 20))
    >>> bool(w.abs().max() <= (6 / (20 + 30)) ** 0.5)
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


@_initializer
def xavier_normal_(tensor, gain: float = 1.0, generator=None):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> w = nn.init.xavier_normal_(flambeau.empty(300, 200))
    >>> round(w.std().item(), 2), round((2 / (200 + 300)) ** 0.5, 2)
    (0.06, 0.06)
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity) -> float | None:
    if 0 in tuple(tensor.shape):
        # stacklevel: past _kaiming_std, the initialiser and its _initializer wrapper
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=4)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


@_dispatch_on("tensor")  # PyTorch hands it to __torch_function__
@_initializer
def kaiming_uniform_(tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None):  # fmt: skip
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al., 2015).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> w = nn.init.kaiming_uniform_(flambeau.empty(64, 50), nonlinearity="relu")
    >>> bool(w.abs().max() <= (6 / 50) ** 0.5)
    True
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


@_initializer
def kaiming_normal_(tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None):  # fmt: skip
    """N(0, std^2) with std = gain / sqrt(fan).

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> w = nn.init.kaiming_normal_(flambeau.empty(500, 200), mode="fan_in", nonlinearity="relu")
    >>> round(w.std().item(), 2), round((2 / 200) ** 0.5, 2)
    (0.1, 0.1)
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


@_initializer
def orthogonal_(tensor, gain: float = 1, generator=None):
    """A (semi-)orthogonal matrix from the QR decomposition of a normal sample, times gain.

    Dimensions after the first are flattened.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> w = nn.init.orthogonal_(flambeau.empty(3, 5))
    >>> flambeau.allclose(w @ w.T, flambeau.eye(3), atol=1e-6)
    True
    """
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    import numpy as np  # here: importing NumPy would triple the time of `import flambeau.nn`

    rows = tensor.size(0)
    cols = tensor.numel() // rows
    sample = flambeau.empty((rows, cols), dtype=flambeau.float64).normal_(0, 1, generator=generator)
    a = sample.numpy()
    if rows < cols:
        a = a.T
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))  # makes the decomposition unique (uniform over O(n))
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.view(rows, cols).copy_(flambeau.from_numpy(np.ascontiguousarray(q)) * gain)
    return tensor


@_initializer
def sparse_(tensor, sparsity: float, std: float = 0.01, generator=None):
    """N(0, std^2) with a fraction `sparsity` of each column set to zero.

    >>> import flambeau.nn as nn
    >>> _ = flambeau.manual_seed(0)
    >>> w = nn.init.sparse_(flambeau.empty(4, 3), sparsity=0.5)
    >>> (w == 0).sum(0)
    tensor([2, 2, 2])
    """
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            zero_rows = flambeau.randperm(rows, generator=generator)[:num_zeros]
            for row in zero_rows.tolist():
                tensor[row, col] = 0
    return tensor


def _deprecated_alias(initializer, example_args: str = "flambeau.empty(2, 3)"):
    new_name = initializer.__name__
    old_name = new_name[:-1]

    def deprecated(*args, **kwargs):
        warnings.warn(
            f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
            FutureWarning,
            stacklevel=2,
        )
        return initializer(*args, **kwargs)

    deprecated.__name__ = deprecated.__qualname__ = old_name
    deprecated.__doc__ = (
        f"Deprecated alias of :func:`{new_name}` (warns FutureWarning).\n\n"
        ">>> import warnings\n"
        ">>> import flambeau.nn as nn\n"
        ">>> with warnings.catch_warnings(record=True) as caught:\n"
        '...     warnings.simplefilter("always")\n'
        f"...     w = nn.init.{old_name}({example_args})\n"
        ">>> print(caught[0].message)\n"
        f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.\n"
    )
    return deprecated


uniform = _deprecated_alias(uniform_)
normal = _deprecated_alias(normal_)
constant = _deprecated_alias(constant_, "flambeau.empty(2, 3), 0.5")
eye = _deprecated_alias(eye_)
dirac = _deprecated_alias(dirac_, "flambeau.empty(2, 2, 3)")
xavier_uniform = _deprecated_alias(xavier_uniform_)
xavier_normal = _deprecated_alias(xavier_normal_)
kaiming_uniform = _deprecated_alias(kaiming_uniform_)
kaiming_normal = _deprecated_alias(kaiming_normal_)
orthogonal = _deprecated_alias(orthogonal_)
sparse = _deprecated_alias(sparse_, "flambeau.empty(2, 3), 0.5")
