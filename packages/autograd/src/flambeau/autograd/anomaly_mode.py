"""detect_anomaly: creation tracebacks on nodes and a NaN check in backward."""

from __future__ import annotations

import threading

_state = threading.local()


def is_enabled() -> bool:
    """Whether anomaly mode is on (PyTorch's torch.is_anomaly_enabled)."""
    return getattr(_state, "enabled", False)


def is_check_nan_enabled() -> bool:
    """Whether anomaly mode checks backward outputs for NaN (on unless turned off; PyTorch's
    torch.is_anomaly_check_nan_enabled)."""
    return getattr(_state, "check_nan", True)


def set_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turns anomaly mode on or off for this thread (PyTorch's torch.set_anomaly_enabled):
    nodes record where they were created, and with check_nan a backward formula that
    produces NaN raises."""
    from . import saved_tensors  # it imports this module

    _state.enabled = bool(enabled)
    _state.check_nan = bool(check_nan)
    # Nodes then record tracebacks, which only the Python recorder does: the core's C++
    # fast path is off while anomaly mode (or saved tensor hooks) is on.
    saved_tensors.refresh_fast_path()


class detect_anomaly:  # noqa: N801 - PyTorch's name
    """Within this context, a backward formula that produces NaN raises a RuntimeError
    naming the forward operation and showing where it was created (with
    ``check_nan=False`` only the creation tracebacks are recorded).

    >>> x = flambeau.zeros(1, requires_grad=True)
    >>> with flambeau.autograd.detect_anomaly():
    ...     (x.sqrt() * 0).sum().backward()  # 0 * d(sqrt)/dx at 0 is nan
    Traceback (most recent call last):
      ...
    RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
    ...
    """

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan

    def __enter__(self):
        self._prev = (is_enabled(), is_check_nan_enabled())
        set_enabled(True, self.check_nan)
        return self

    def __exit__(self, *exc):
        set_enabled(*self._prev)
        return False


class set_detect_anomaly:  # noqa: N801
    """Turns anomaly mode on or off by ``mode``: at once when called (as a function), and
    back to the previous setting when used as a context manager and left.

    >>> x = flambeau.zeros(1, requires_grad=True)
    >>> with flambeau.autograd.set_detect_anomaly(True):
    ...     (x.sqrt() * 0).sum().backward()  # 0 * d(sqrt)/dx at 0 is nan
    Traceback (most recent call last):
      ...
    RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
    ...
    """

    def __init__(self, mode: bool, check_nan: bool = True):
        self._prev = (is_enabled(), is_check_nan_enabled())
        set_enabled(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        set_enabled(*self._prev)
        return False
