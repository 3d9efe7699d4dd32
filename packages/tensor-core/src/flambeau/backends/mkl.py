"""``flambeau.backends.mkl``: flambeau is not built with Intel MKL."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """False: linear algebra uses OpenBLAS and FFTs pocketfft; MKL is never used."""
    return False
