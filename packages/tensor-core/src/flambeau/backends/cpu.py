"""``flambeau.backends.cpu``: what the CPU kernels run with."""

from __future__ import annotations

from flambeau import _C

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """The instruction set the core's vectorized loops run with on this CPU: ``"AVX512"``,
    ``"AVX2"`` or ``"DEFAULT"`` (baseline x86-64, or any other architecture), PyTorch's
    names.

    The core builds those loops for each of these and picks, once, the best the CPU
    has; the environment variable ``FLAMBEAU_CPU_CAPABILITY`` (or PyTorch's
    ``ATEN_CPU_CAPABILITY``), set to ``default``, ``avx2`` or ``avx512`` before the
    first kernel runs, caps the choice (it never goes above what the CPU has).

    >>> flambeau.backends.cpu.get_cpu_capability() in {"DEFAULT", "AVX2", "AVX512"}
    True
    """
    return _C._cpu_capability()
