"""detect_anomaly: creation tracebacks on nodes and a NaN check in backward."""

from __future__ import annotations

import threading

_state = threading.local()


def is_enabled() -> bool:
    return getattr(_state, "enabled", False)


class detect_anomaly:  # noqa: N801 - PyTorch's name
    """Within this context, a backward formula that produces NaN raises a RuntimeError
    naming the forward operation and showing where it was created.

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
        self._prev = is_enabled()
        _set(self.check_nan)
        return self

    def __exit__(self, *exc):
        _set(self._prev)
        return False


def _set(enabled: bool) -> None:
    from . import saved_tensors  # it imports this module

    _state.enabled = enabled
    # Nodes then record tracebacks, which only the Python recorder does: the core's C++
    # fast path is off while anomaly mode (or saved tensor hooks) is on.
    saved_tensors.refresh_fast_path()


class set_detect_anomaly(detect_anomaly):  # noqa: N801
    """:class:`detect_anomaly` turned on or off by ``mode``.

    >>> x = flambeau.zeros(1, requires_grad=True)
    >>> with flambeau.autograd.set_detect_anomaly(True):
    ...     (x.sqrt() * 0).sum().backward()  # 0 * d(sqrt)/dx at 0 is nan
    Traceback (most recent call last):
      ...
    RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
    ...
    """

    def __init__(self, mode: bool, check_nan: bool = True):
        super().__init__(check_nan and mode)
