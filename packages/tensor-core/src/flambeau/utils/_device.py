"""The default device of factory functions, as PyTorch's torch.utils._device: a
TorchFunctionMode that gives ``device=`` to each factory called without one. It sits at
the bottom of the mode stack while ``with flambeau.device(d):`` or
``flambeau.set_default_device(d)`` is in force, so other modes still see the calls
first (and exiting them cannot pop it).

>>> with flambeau.device("meta"):
...     flambeau.zeros(2).device
device(type='meta')
>>> flambeau.zeros(2).device
device(type='cpu')
"""

from __future__ import annotations

import functools

import flambeau
from flambeau.overrides import (
    TorchFunctionMode,
    _get_current_function_mode_stack,
    _pop_mode,
    _push_mode,
)

CURRENT_DEVICE = None  # the innermost default device in force, else None (the CPU)


@functools.cache
def _device_constructors() -> frozenset:
    """The factories that take ``device=`` (PyTorch's list, for the names flambeau has);
    the *_like ones keep their input's device."""
    names = """
        empty empty_permuted empty_strided empty_quantized ones arange bartlett_window
        blackman_window eye full hamming_window hann_window kaiser_window linspace logspace
        rand randn randint randperm range sparse_coo_tensor sparse_compressed_tensor
        sparse_csr_tensor sparse_csc_tensor sparse_bsr_tensor sparse_bsc_tensor tril_indices
        triu_indices zeros asarray tensor as_tensor scalar_tensor
    """
    found = {getattr(flambeau, n) for n in names.split() if hasattr(flambeau, n)}
    found |= {getattr(flambeau.fft, n) for n in ("fftfreq", "rfftfreq")}
    return frozenset(found)


def _stack_depth() -> int:
    return len(_get_current_function_mode_stack())


class DeviceContext(TorchFunctionMode):
    """Factories called without ``device=`` inside it make their tensors on ``device``."""

    def __init__(self, device) -> None:
        self.device = flambeau.device(device)
        self.prev_mode: DeviceContext | None = None

    def __enter__(self):
        global CURRENT_DEVICE
        self.old_device = CURRENT_DEVICE
        CURRENT_DEVICE = self.device
        # At the bottom of the stack, replacing an outer DeviceContext (kept to restore).
        above = [_pop_mode() for _ in range(_stack_depth())]
        _push_mode(self)
        for mode in reversed(above):
            if isinstance(mode, DeviceContext):
                self.prev_mode = mode
            else:
                _push_mode(mode)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        global CURRENT_DEVICE
        CURRENT_DEVICE = self.old_device
        above = [_pop_mode() for _ in range(_stack_depth() - 1)]
        if any(isinstance(mode, DeviceContext) for mode in above):
            raise AssertionError("Found nested DeviceContext on the mode stack where none expected")
        if _stack_depth() > 0 and not isinstance(_pop_mode(), DeviceContext):
            raise AssertionError("Expected a DeviceContext at the bottom of the mode stack")
        if self.prev_mode is not None:
            _push_mode(self.prev_mode)
        for mode in reversed(above):
            _push_mode(mode)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _device_constructors() and kwargs.get("device") is None:
            kwargs["device"] = self.device
        return func(*args, **kwargs)
