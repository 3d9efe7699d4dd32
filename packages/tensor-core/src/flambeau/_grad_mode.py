"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode.

The flag is thread-local and lives in the core, so the core's bindings can test
it without calling into Python. They work without flambeau-autograd installed
(inference code says ``with no_grad():`` either way); flambeau.autograd
re-exports them.
"""

from __future__ import annotations

import functools

from flambeau import _C

is_grad_enabled = _C.is_grad_enabled


class _GradMode:
    """Context manager and decorator that sets grad mode for its extent."""

    _enabled: bool

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._enabled)
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self._clone():
                return fn(*args, **kwargs)

        return wrapper

    def _clone(self):
        return self.__class__()


class no_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Disables recording of operations: results do not require grad.

    >>> x = flambeau.tensor([1.0, 2.0], requires_grad=True)
    >>> with flambeau.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    _enabled = False


class enable_grad(_GradMode):  # noqa: N801
    """Enables recording inside a no_grad region.

    >>> x = flambeau.tensor([1.0], requires_grad=True)
    >>> with flambeau.no_grad():
    ...     with flambeau.enable_grad():
    ...         y = x * 2
    >>> y.requires_grad
    True
    """

    _enabled = True


class set_grad_enabled(_GradMode):  # noqa: N801
    """Sets grad mode to ``mode``; takes effect at once, and as a context manager restores it.

    >>> x = flambeau.tensor([1.0], requires_grad=True)
    >>> with flambeau.set_grad_enabled(False):
    ...     y = x * 2
    >>> y.requires_grad, flambeau.is_grad_enabled()
    (False, True)
    """

    def __init__(self, mode: bool):
        self._enabled = bool(mode)
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._enabled)

    def __enter__(self):
        return self

    def __call__(self, fn):
        _C._set_grad_enabled(self._prev)  # as a decorator it must not change the mode now
        return super().__call__(fn)

    def _clone(self):
        return set_grad_enabled(self._enabled)


def is_inference_mode_enabled() -> bool:
    """True inside an ``inference_mode()`` block (of this thread).

    >>> with flambeau.inference_mode():
    ...     print(flambeau.is_inference_mode_enabled())
    True
    >>> flambeau.is_inference_mode_enabled()
    False
    """
    return _C._is_inference_mode_enabled()


class inference_mode(_GradMode):  # noqa: N801
    """Context manager (or decorator) for inference: no_grad, and the tensors made inside
    are *inference tensors* (``Tensor.is_inference()``), which outside the mode may not be
    updated in place, require grad or be saved for backward (a clone is a normal tensor).
    ``mode=False`` turns the mode off (and grad on) inside an enabled block.

    >>> x = flambeau.tensor([1.0, 2.0], requires_grad=True)
    >>> with flambeau.inference_mode():
    ...     y = x * x
    >>> y.requires_grad, y.is_inference()
    (False, True)
    """

    def __init__(self, mode: bool = True):
        self._enabled = not mode

    def __enter__(self):
        self._prev_inference = _C._is_inference_mode_enabled()
        _C._set_inference_mode(not self._enabled)
        return super().__enter__()

    def __exit__(self, *exc):
        _C._set_inference_mode(self._prev_inference)
        return super().__exit__(*exc)

    def _clone(self):
        return inference_mode(not self._enabled)
