"""``flambeau.autocast``: regions where operators run in mixed precision.

The state (on or off per device type, the lower-precision dtype, the weight cast
cache) is thread-local in the core (``flambeau.is_autocast_enabled`` and friends);
the operators that cast are marked in the operator table. This module is the
context manager and decorator over that state, and the helpers for custom
autograd functions (``custom_fwd``, ``custom_bwd``). See docs/design/autocast.rst.
"""

from __future__ import annotations

import collections.abc
import copy
import functools
import warnings

import flambeau
from flambeau import _C

__all__ = [
    "autocast_decorator",
    "autocast",
    "is_autocast_available",
    "custom_fwd",
    "custom_bwd",
]

# The dtypes autocast may lower to on every device type but CUDA, whose backend says.
_SUPPORTED_DTYPES = (flambeau.bfloat16, flambeau.float16)


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can be used on ``device_type`` (as ``Tensor.device.type`` names it).

    >>> flambeau.amp.is_autocast_available("cpu")
    True
    """
    return _C._is_autocast_available(device_type)


def _check_device_type(device_type) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def autocast_decorator(autocast_instance, func):
    """``func`` run inside ``autocast_instance`` at every call."""

    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        # A copy per call, so recursive and concurrent calls keep their own saved state.
        with copy.copy(autocast_instance):
            return func(*args, **kwargs)

    return decorate_autocast


class autocast:
    """Context manager or decorator: operators run in mixed precision inside it.

    Operators the table marks ``lower_precision_fp`` (matmul, mm, addmm, conv*,
    scaled_dot_product_attention, ``nn.functional.linear``, ...) cast their
    floating-point inputs to ``dtype`` (bfloat16 on the CPU by default); those marked
    ``fp32`` (losses, prod, the FFTs, LAPACK solvers) cast them to float32; ``promote``
    operators (cat, stack, index_copy) cast them to the widest input type. float64
    tensors are never cast. The casts are recorded by autograd, so gradients reach
    float32 leaves in float32. The state is thread-local: a new thread starts with
    autocast off. Regions nest; ``enabled=False`` turns autocast off inside one.

    Args:
        device_type (str): the device type the region applies to ("cpu", "cuda").
        dtype (flambeau.dtype, optional): the lower-precision dtype; default
            ``flambeau.get_autocast_dtype(device_type)``.
        enabled (bool): whether autocast is on inside the region. Default True.
        cache_enabled (bool, optional): whether weight casts are kept within the
            region; default ``flambeau.is_autocast_cache_enabled()``.

    >>> a = flambeau.ones(2, 2)
    >>> with flambeau.amp.autocast("cpu"):
    ...     c = a @ a
    >>> c.dtype
    flambeau.bfloat16
    """

    def __init__(
        self,
        device_type: str,
        dtype: flambeau.dtype | None = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ):
        _check_device_type(device_type)
        self.fast_dtype = flambeau.get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'"
            )
        self._cache_enabled = (
            flambeau.is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        )
        if enabled:
            enabled = self._check_dtype()
        self._enabled = enabled

    def _check_dtype(self) -> bool:
        """Whether autocast can run in fast_dtype here; warns (and disables) when not."""
        if self.device == "cuda":
            if not flambeau.cuda.is_available():
                warnings.warn("CUDA is not available. Disabling autocast.", stacklevel=3)
                return False
            bf16_ok = getattr(flambeau.cuda, "is_bf16_supported", lambda: True)
            if self.fast_dtype == flambeau.bfloat16 and not bf16_ok():
                raise RuntimeError(
                    "Current CUDA Device does not support bfloat16. Please switch dtype to float16."
                )
            return True
        if self.fast_dtype not in _SUPPORTED_DTYPES:
            name = self.device.upper()
            warnings.warn(
                f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                f"{name} Autocast only supports dtypes of "
                + ", ".join(map(str, _SUPPORTED_DTYPES))
                + " currently.",
                stacklevel=3,
            )
            return False
        return True

    def __enter__(self):
        self.prev_cache_enabled = flambeau.is_autocast_cache_enabled()
        self.prev = flambeau.is_autocast_enabled(self.device)
        self.prev_fastdtype = flambeau.get_autocast_dtype(self.device)
        flambeau.set_autocast_enabled(self.device, self._enabled)
        flambeau.set_autocast_dtype(self.device, self.fast_dtype)
        flambeau.autocast_increment_nesting()
        flambeau.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        # Leaving the outermost region drops the weight casts it kept.
        if flambeau.autocast_decrement_nesting() == 0:
            flambeau.clear_autocast_cache()
        flambeau.set_autocast_enabled(self.device, self.prev)
        flambeau.set_autocast_dtype(self.device, self.prev_fastdtype)
        flambeau.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with flambeau.autocast(device_type=...):\n"
                "        output = model(input)"
            )
        return autocast_decorator(self, func)


def _enter_autocast(*vals):
    """Enters an autocast region outside a with statement; returns it for _exit_autocast."""
    mode = autocast(*vals)
    mode.__enter__()
    return mode


def _exit_autocast(mode):
    mode.__exit__(None, None, None)


def _cast(value, device_type: str, dtype):
    """``value`` with its floating-point tensors of ``device_type`` (not float64) cast to
    ``dtype``, looking into mappings and iterables (strings and arrays stay as they are)."""
    if isinstance(value, flambeau.Tensor):
        eligible = (
            value.is_floating_point()
            and value.device.type == device_type
            and value.dtype != flambeau.float64
        )
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)) or type(value).__module__ == "numpy":
        return value
    if isinstance(value, collections.abc.Mapping):
        return {
            _cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()
        }
    if isinstance(value, collections.abc.Iterable):
        items = (_cast(v, device_type, dtype) for v in value)
        return type(value)(items) if isinstance(value, (list, tuple)) else items
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs: flambeau.dtype | None = None):
    """Decorator for the ``forward`` of a custom ``autograd.Function``.

    Inside an autocast region of ``device_type``: with ``cast_inputs`` given, the
    floating-point tensor arguments are cast to it and ``forward`` runs with autocast
    off; without it, ``forward`` runs under the region's autocast state. Outside a
    region it changes nothing. ``custom_bwd`` then runs ``backward`` in the same state.

    >>> from flambeau.amp import custom_bwd, custom_fwd
    >>> class Square(flambeau.autograd.Function):
    ...     @staticmethod
    ...     @custom_fwd(device_type="cpu", cast_inputs=flambeau.float32)
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...
    ...     @staticmethod
    ...     @custom_bwd(device_type="cpu")
    ...     def backward(ctx, grad):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * grad
    >>> x = flambeau.ones(2, dtype=flambeau.bfloat16, requires_grad=True)
    >>> with flambeau.amp.autocast("cpu"):
    ...     y = Square.apply(x)  # forward ran in float32, autocast off
    >>> y.dtype
    flambeau.float32
    >>> y.sum().backward()
    >>> x.grad
    tensor([2., 2.], dtype=flambeau.bfloat16)
    """
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = flambeau.get_autocast_dtype(device_type)
        in_region = flambeau.is_autocast_enabled(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = in_region
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not in_region:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(
                *_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs)
            )

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorator for the ``backward`` of a custom ``autograd.Function``: runs it with the
    autocast state (on or off, and the dtype) its ``custom_fwd`` forward ran with.

    >>> from flambeau.amp import custom_bwd, custom_fwd
    >>> class Square(flambeau.autograd.Function):
    ...     @staticmethod
    ...     @custom_fwd(device_type="cpu", cast_inputs=flambeau.float32)
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...
    ...     @staticmethod
    ...     @custom_bwd(device_type="cpu")
    ...     def backward(ctx, grad):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * grad
    >>> x = flambeau.ones(2, dtype=flambeau.bfloat16, requires_grad=True)
    >>> with flambeau.amp.autocast("cpu"):
    ...     y = Square.apply(x)  # forward ran in float32, autocast off
    >>> y.dtype
    flambeau.float32
    >>> y.sum().backward()
    >>> x.grad
    tensor([2., 2.], dtype=flambeau.bfloat16)
    """
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
