"""``flambeau.backends.mkl``: flambeau is not built with Intel MKL.

Linear algebra uses OpenBLAS and FFTs pocketfft, so MKL's on-demand verbose mode is
what PyTorch's is without MKL: :class:`verbose` with ``VERBOSE_ON`` cannot be entered.
"""

from __future__ import annotations

__all__ = ["VERBOSE_OFF", "VERBOSE_ON", "is_available", "verbose"]

VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available() -> bool:
    """False: linear algebra uses OpenBLAS and FFTs pocketfft; MKL is never used.

    >>> flambeau.backends.mkl.is_available()
    False
    """
    return False


def _check_level(level) -> None:
    """A verbose level is an int (PyTorch's binding refuses floats, strings...)."""
    if isinstance(level, float) or not (
        hasattr(type(level), "__index__") or hasattr(type(level), "__int__")
    ):
        raise TypeError(
            f"mkl_set_verbose(): argument 'level' must be int, not {type(level).__name__}"
        )


class verbose:
    """MKL's verbose messages inside a ``with`` block: ``verbose(VERBOSE_ON)`` would
    print what each MKL call does. Without MKL, as in PyTorch, entering it with
    ``VERBOSE_OFF`` does nothing and with any other level raises AssertionError.

    >>> from flambeau.backends import mkl
    >>> with mkl.verbose(mkl.VERBOSE_OFF):
    ...     flambeau.ones(2).sum()
    tensor(2.)
    >>> with mkl.verbose(mkl.VERBOSE_ON):
    ...     pass
    Traceback (most recent call last):
      ...
    AssertionError: Failed to set MKL into verbose mode. ...
    """

    def __init__(self, enable):
        self.enable = enable

    def __enter__(self):
        if self.enable == VERBOSE_OFF:
            return None
        _check_level(self.enable)
        raise AssertionError(
            "Failed to set MKL into verbose mode. Please consider to disable this verbose scope."
        )

    def __exit__(self, exc_type, exc_val, exc_tb):
        return False
