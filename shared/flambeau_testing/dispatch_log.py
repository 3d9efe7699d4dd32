"""What a call hands to ``__torch_function__``: a logging TorchFunctionMode and a logging
Tensor subclass, for the tests of the functions that take part in the protocol
(tensor-core's and nn's), built against either library (``L``: flambeau or torch) so
that the same cases can be checked against PyTorch's answers.

``build(L)`` returns ``(fn, args, kwargs)``; ``handed_over`` calls it once under the
mode and once with the floating-point tensor arguments re-classed as the subclass.
"""

from __future__ import annotations

import warnings


def log_mode(L):
    """A TorchFunctionMode that records each function it is handed, then runs it."""

    class Log(L.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.funcs = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.funcs.append(func)
            return func(*args, **(kwargs or {}))

    return Log()


def log_subclass(L):
    """A Tensor subclass whose class records each function it is handed."""

    class Logged(L.Tensor):
        funcs: list = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.funcs.append(func)
            return super().__torch_function__(func, types, args, kwargs)

    return Logged


def as_subclass_if_float(cls, L, value):
    """Floating-point tensors (the ones every case has) re-classed as cls."""
    if isinstance(value, L.Tensor) and value.is_floating_point():
        return value.as_subclass(cls)
    return value


def handed_over(L, build, mode=True):
    """(fn, the functions a logging mode was handed or None without ``mode``, the
    functions a logging subclass was handed) for the call ``build(L)`` describes."""
    fn, args, kwargs = build(L)
    mode_funcs = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if mode:
            with log_mode(L) as log:
                fn(*args, **kwargs)
            mode_funcs = log.funcs
        sub = log_subclass(L)
        fn(
            *[as_subclass_if_float(sub, L, a) for a in args],
            **{k: as_subclass_if_float(sub, L, v) for k, v in kwargs.items()},
        )
    return fn, mode_funcs, sub.funcs


def names(funcs):
    return [getattr(f, "__name__", repr(f)) for f in funcs]
