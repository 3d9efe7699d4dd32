"""Deterministic-algorithms mode: PyTorch's switches over the core's global flag.

While the mode is on, an operator whose kernels on the call's device type are
marked nondeterministic (the operator table's ``nondeterministic:`` field, or
a backend plugin's declaration) raises RuntimeError, or warns with
``warn_only=True``; and, with ``flambeau.utils.deterministic.
fill_uninitialized_memory`` on, new uninitialized memory is filled.
"""

from __future__ import annotations

import builtins

from flambeau import _C

__all__ = [
    "are_deterministic_algorithms_enabled",
    "get_deterministic_debug_mode",
    "is_deterministic_algorithms_warn_only_enabled",
    "set_deterministic_debug_mode",
    "use_deterministic_algorithms",
]


def use_deterministic_algorithms(mode: builtins.bool, *, warn_only: builtins.bool = False) -> None:
    """Sets whether operations must use deterministic algorithms; those that have
    none raise RuntimeError (or, with warn_only, warn) when called.

    >>> flambeau.use_deterministic_algorithms(True)
    >>> flambeau.are_deterministic_algorithms_enabled()
    True
    >>> flambeau.use_deterministic_algorithms(False)
    """
    if not isinstance(mode, builtins.bool):
        raise TypeError(
            "use_deterministic_algorithms(): argument 'mode' (position 1) must be bool, "
            f"not {type(mode).__name__}"
        )
    if not isinstance(warn_only, builtins.bool):
        raise TypeError(
            "use_deterministic_algorithms(): argument 'warn_only' must be bool, "
            f"not {type(warn_only).__name__}"
        )
    _C._set_deterministic_algorithms(mode, warn_only=warn_only)


def are_deterministic_algorithms_enabled() -> builtins.bool:
    """Whether use_deterministic_algorithms(True) is in effect.

    >>> flambeau.are_deterministic_algorithms_enabled()
    False
    """
    return _C._get_deterministic_algorithms()


def is_deterministic_algorithms_warn_only_enabled() -> builtins.bool:
    """Whether nondeterministic operations warn instead of raising.

    >>> flambeau.use_deterministic_algorithms(True, warn_only=True)
    >>> flambeau.is_deterministic_algorithms_warn_only_enabled()
    True
    >>> flambeau.use_deterministic_algorithms(False)
    """
    return _C._get_deterministic_algorithms_warn_only()


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: builtins.str | builtins.int) -> None:
    """The same switch as a level: "default"/0 off, "warn"/1 warn, "error"/2 raise.

    >>> flambeau.set_deterministic_debug_mode("warn")
    >>> flambeau.get_deterministic_debug_mode()
    1
    >>> flambeau.set_deterministic_debug_mode(0)
    """
    if not isinstance(debug_mode, (builtins.int, builtins.str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, builtins.str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                f"but got {debug_mode}"
            )
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode == 0:
        use_deterministic_algorithms(False)
    elif debug_mode == 1:
        use_deterministic_algorithms(True, warn_only=True)
    elif debug_mode == 2:
        use_deterministic_algorithms(True)
    else:
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
        )


def get_deterministic_debug_mode() -> builtins.int:
    """0 when the mode is off, 1 when it warns, 2 when it raises.

    >>> flambeau.get_deterministic_debug_mode()
    0
    >>> flambeau.set_deterministic_debug_mode("error")
    >>> flambeau.get_deterministic_debug_mode()
    2
    >>> flambeau.set_deterministic_debug_mode("default")
    """
    if not are_deterministic_algorithms_enabled():
        return 0
    return 1 if is_deterministic_algorithms_warn_only_enabled() else 2
