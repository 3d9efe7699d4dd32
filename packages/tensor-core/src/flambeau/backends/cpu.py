"""``flambeau.backends.cpu``: what the CPU kernels were built to use."""

from __future__ import annotations

import platform

__all__ = ["get_cpu_capability"]


def _numpy_cpu_features() -> dict:
    """The CPU features NumPy detected at import (its runtime dispatch uses the same probe)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # NumPy 1.x
        from numpy.core._multiarray_umath import __cpu_features__
    return __cpu_features__


def get_cpu_capability() -> str:
    """The instruction set the core's vectorized kernels run with on this CPU.

    The core builds its hot loops twice, for AVX2 and for baseline x86-64, and picks the
    AVX2 copy at load where the CPU has it; it has no AVX-512 kernels. So this is
    ``"AVX2"`` or ``"NO AVX"`` on x86 (PyTorch's names; a CPU with AVX-512 still reports
    ``"AVX2"``), and ``"DEFAULT"`` on other architectures, which use portable loops.
    """
    machine = platform.machine().lower()
    if machine not in {"x86_64", "amd64", "i386", "i686", "x86"}:
        return "DEFAULT"
    return "AVX2" if _numpy_cpu_features().get("AVX2") else "NO AVX"
