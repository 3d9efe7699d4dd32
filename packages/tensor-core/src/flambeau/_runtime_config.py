"""Process-wide settings and build facts PyTorch exposes at top level: the default
device, interop threads, float32 matmul precision, warn-always, flush-denormal, and the
``has_*`` flags.

flambeau computes on the CPU (other devices come from backend plugins, see
``flambeau.backends``), always in full float32 precision, and has no interop thread pool;
these functions accept PyTorch's arguments, validate them as PyTorch does, and report
the truth about this build.
"""

from __future__ import annotations

import threading

from flambeau import _C

# The core is linked against OpenBLAS's LAPACK and built with OpenMP; there is no MKL.
has_lapack = True
has_mkl = False
has_openmp = True
has_spectral = True

_settings_lock = threading.Lock()
_warn_always = False
_float32_matmul_precision = "highest"
_interop_threads: int | None = None


def get_default_device() -> _C.device:
    """The device factory functions use when given none: the CPU, or the one
    ``set_default_device`` or a ``with flambeau.device(...)`` block set.

    >>> flambeau.get_default_device()
    device(type='cpu')
    """
    from flambeau.utils import _device

    return _device.CURRENT_DEVICE or _C.device("cpu")


class _GlobalDeviceContext(threading.local):
    device_context = None


_GLOBAL_DEVICE_CONTEXT = _GlobalDeviceContext()


def set_default_device(device) -> None:
    """Makes ``device`` the one factory functions (zeros, randn, tensor, ...) use when
    given none, on this thread, as PyTorch's: a TorchFunctionMode gives them ``device=``
    (so calls cost a little more while a device other than None is set). None goes back
    to the CPU.

    >>> flambeau.set_default_device("meta")
    >>> flambeau.zeros(2).device
    device(type='meta')
    >>> flambeau.set_default_device(None)
    >>> flambeau.zeros(2).device
    device(type='cpu')
    """
    from flambeau.utils._device import DeviceContext

    context = _GLOBAL_DEVICE_CONTEXT.device_context
    if context is not None:
        context.__exit__(None, None, None)
    if device is None:
        context = None
    else:
        context = DeviceContext(device)
        context.__enter__()
    _GLOBAL_DEVICE_CONTEXT.device_context = context


def _device_enter(self):
    """``with flambeau.device("meta"):`` makes the device the factories' default in the
    block, as PyTorch's device context manager does.

    >>> with flambeau.device("meta"):
    ...     flambeau.zeros(1).device
    device(type='meta')
    """
    from flambeau.utils._device import DeviceContext

    context = DeviceContext(self)
    _DEVICE_CONTEXTS.stack.append(context)
    context.__enter__()
    return self


def _device_exit(self, *exc) -> None:
    _DEVICE_CONTEXTS.stack.pop().__exit__(*exc)


class _DeviceContexts(threading.local):
    def __init__(self):
        self.stack = []


_DEVICE_CONTEXTS = _DeviceContexts()


_C.device.__enter__ = _device_enter
_C.device.__exit__ = _device_exit


def is_warn_always_enabled() -> bool:
    """Whether :func:`set_warn_always` turned on repeating warnings that normally show once
    per process. False until it is set.

    >>> flambeau.is_warn_always_enabled()
    False
    """
    return _warn_always


def set_warn_always(b: bool) -> None:
    """Records the flag PyTorch uses to repeat once-only warnings.

    >>> flambeau.set_warn_always(True)
    >>> flambeau.is_warn_always_enabled()
    True
    >>> flambeau.set_warn_always(False)
    """
    global _warn_always
    _warn_always = bool(b)


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision last set with :func:`set_float32_matmul_precision`:
    ``'highest'`` (the default), ``'high'`` or ``'medium'``. flambeau's CPU kernels compute
    in full float32 precision whichever is set.

    >>> flambeau.get_float32_matmul_precision()
    'highest'
    """
    return _float32_matmul_precision


def set_float32_matmul_precision(precision: str) -> None:
    """Records 'highest', 'high' or 'medium'. flambeau's CPU kernels always compute float32
    matmuls in full precision, which every one of the three settings permits.

    >>> flambeau.set_float32_matmul_precision("high")
    >>> flambeau.get_float32_matmul_precision()
    'high'
    >>> flambeau.set_float32_matmul_precision("highest")
    """
    global _float32_matmul_precision
    if precision not in ("highest", "high", "medium"):
        import warnings

        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
            "set_float32_matmul_precision call has no effect.",
            UserWarning,
            stacklevel=2,
        )
        return
    _float32_matmul_precision = precision


def get_num_interop_threads() -> int:
    """The interop thread count set last (flambeau runs ops on one pool, so this is the
    intra-op count until set).

    >>> flambeau.get_num_interop_threads() >= 1
    True
    """
    return _interop_threads if _interop_threads is not None else _C.get_num_threads()


def set_num_interop_threads(num: int) -> None:
    """Records the number of threads for inter-op parallelism; read it back with
    :func:`get_num_interop_threads`.

    ``num`` must be a positive int (RuntimeError otherwise). flambeau runs operators on one
    intra-op thread pool (see :func:`set_num_threads`), so the value changes no scheduling.

    >>> flambeau.set_num_interop_threads(2)
    >>> flambeau.get_num_interop_threads()
    2
    """
    global _interop_threads
    if isinstance(num, bool) or not isinstance(num, int) or num <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    with _settings_lock:
        _interop_threads = num


def init_num_threads() -> None:
    """Nothing to do: the core's OpenMP pool sizes itself when first used.

    >>> flambeau.init_num_threads()
    >>> flambeau.get_num_threads() >= 1
    True
    """


def set_flush_denormal(mode: bool) -> bool:
    """Returns False: flambeau does not switch the CPU's denormal mode (PyTorch returns False
    too where it cannot), so denormals keep their IEEE values.

    >>> flambeau.set_flush_denormal(True)  # not supported: denormals are kept
    False
    >>> flambeau.tensor([1e-40])
    tensor([9.9999e-41])
    """
    del mode
    return False


__all__ = [
    "has_lapack",
    "has_mkl",
    "has_openmp",
    "has_spectral",
    "get_default_device",
    "set_default_device",
    "is_warn_always_enabled",
    "set_warn_always",
    "get_float32_matmul_precision",
    "set_float32_matmul_precision",
    "get_num_interop_threads",
    "set_num_interop_threads",
    "init_num_threads",
    "set_flush_denormal",
]
