"""Settings of the backward engine that PyTorch exposes in torch.autograd.

Each setter works as a function (the setting changes at once), as a context manager
(the previous setting comes back on exit) and as a decorator, like ``set_grad_enabled``.
"""

from __future__ import annotations

import functools
import threading

__all__ = [
    "enforce_grad_layout_policy",
    "is_grad_layout_policy_enforced",
    "is_multithreading_enabled",
    "is_view_replay_enabled",
    "set_multithreading_enabled",
]

_process = {"multithreading": True}
_thread = threading.local()


class _Setting:
    """Sets one setting now; restores the previous value on leaving a ``with`` block.
    Subclasses say where the setting lives (static ``_get()`` and ``_set(value)``)."""

    def __init__(self, value: bool):
        self.value = bool(value)
        self.prev = self._get()
        self._set(self.value)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._set(self.prev)

    def __call__(self, fn):
        self._set(self.prev)  # as a decorator it must not change the setting now

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def clone(self):
        return self.__class__(self.value)


def is_multithreading_enabled() -> bool:
    """The setting of :class:`set_multithreading_enabled` (True by default).

    >>> flambeau.autograd.is_multithreading_enabled()
    True
    """
    return _process["multithreading"]


class set_multithreading_enabled(_Setting):  # noqa: N801 - PyTorch's name
    """Records whether backward may run on worker threads, one per device.

    flambeau's engine runs every node on the thread that called backward, which is what
    PyTorch does for CPU work either way, so the setting changes nothing here; it is kept
    (process-wide, as in PyTorch) for programs and backend plugins that read it.

    >>> with flambeau.autograd.set_multithreading_enabled(False):
    ...     print(flambeau.autograd.is_multithreading_enabled())
    False
    >>> flambeau.autograd.is_multithreading_enabled()
    True
    """

    def __init__(self, mode: bool):
        super().__init__(mode)

    @staticmethod
    def _get() -> bool:
        return _process["multithreading"]

    @staticmethod
    def _set(value: bool) -> None:
        _process["multithreading"] = value


def is_view_replay_enabled() -> bool:
    """False: the gradient of a view is taken through the view's geometry (as_strided),
    never by replaying the operations that made the view.

    >>> flambeau.autograd.is_view_replay_enabled()
    False
    """
    return False


def is_grad_layout_policy_enforced() -> bool:
    """Whether new ``.grad`` tensors take their parameter's strides (see
    :class:`enforce_grad_layout_policy`); per thread, True by default."""
    return getattr(_thread, "layout_policy", True)


class enforce_grad_layout_policy(_Setting):  # noqa: N801 - PyTorch's name
    """Whether a leaf's new ``.grad`` follows the gradient layout contract (per thread).

    Enforced (the default), a new gradient has the strides of its parameter when the
    parameter is dense and non-overlapping (a permuted parameter gets a permuted
    gradient), and is contiguous otherwise. Relaxed (``enable=False``), it keeps the
    layout of the incoming gradient when that is dense and non-overlapping. Either way the
    gradient is a fresh tensor, and a gradient accumulated into an existing ``.grad``
    keeps that tensor's layout.

    >>> p = flambeau.ones(2, 3).t().requires_grad_()  # a permuted leaf
    >>> p.stride()
    (1, 3)
    >>> (p.contiguous() * 1).sum().backward()
    >>> p.grad.stride()  # the parameter's strides
    (1, 3)
    >>> p.grad = None
    >>> with flambeau.autograd.enforce_grad_layout_policy(False):
    ...     (p.contiguous() * 1).sum().backward()
    >>> p.grad.stride()  # the incoming gradient's
    (2, 1)
    """

    def __init__(self, enable: bool = True):
        super().__init__(enable)

    @staticmethod
    def _get() -> bool:
        return is_grad_layout_policy_enforced()

    @staticmethod
    def _set(value: bool) -> None:
        _thread.layout_policy = value
