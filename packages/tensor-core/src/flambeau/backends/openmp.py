"""``flambeau.backends.openmp``."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """True: the core's parallel loops are built on OpenMP (see flambeau.get_num_threads)."""
    from flambeau._runtime_config import has_openmp

    return has_openmp
