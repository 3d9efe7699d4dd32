"""``flambeau.backends.opt_einsum``: contraction-order optimization for einsum.

flambeau's einsum contracts its operands left to right and never calls the opt_einsum
package, installed or not, so ``is_available()`` is False, ``enabled`` False and
``strategy`` None. Turning it on raises ValueError, as PyTorch does where opt_einsum
is missing, rather than pretending to optimize.
"""

from __future__ import annotations

from flambeau.backends import _flags
from flambeau.backends._flags import install

# Also the flags enabled and strategy (descriptors of the module).
__all__ = ["flags", "get_opt_einsum", "is_available", "set_flags"]


def is_available() -> bool:
    """False: einsum does not use opt_einsum."""
    return False


def get_opt_einsum():
    """None: the opt_einsum package is not used."""
    return None


class _Enabled:
    """False; only False may be assigned."""

    def __get__(self, module, owner=None):
        return self if module is None else False

    def __set__(self, module, value) -> None:
        if value:
            raise ValueError(
                f"opt_einsum is not available, so setting `enabled` to {value} will not reap "
                "the benefits of calculating an optimal path for einsum. flambeau.einsum "
                "contracts from left to right."
            )


class _Strategy:
    """None; nothing may be assigned."""

    def __get__(self, module, owner=None):
        return self if module is None else None

    def __set__(self, module, value) -> None:
        raise ValueError(
            f"opt_einsum is not available, so setting `strategy` to {value} will not be "
            "meaningful. flambeau.einsum contracts from left to right."
        )


_module = install(__name__, {"enabled": _Enabled(), "strategy": _Strategy()})


def set_flags(_enabled=None, _strategy=None) -> tuple:
    """Sets the given flags (None leaves one as it is); returns the previous values."""
    return _flags.set_flags(_module, {"enabled": _enabled, "strategy": _strategy})


def flags(enabled=None, strategy=None):
    """Sets the flags inside the ``with`` block (only to what they already are here)."""
    return _flags.flags_set(set_flags, enabled, strategy)
