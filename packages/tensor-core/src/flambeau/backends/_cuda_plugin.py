"""The answers a CUDA backend plugin may give flambeau.backends.cuda.

Some of flambeau.backends.cuda's functions can only be answered by CUDA code: whether a
fused attention kernel takes some inputs, the cuFFT plan cache, cuBLAS's workspace. The
core has none, so each asks the CUDA plugin's module for a function under PyTorch's
``torch._C`` name (``_can_use_flash_attention``, ``_cufft_get_plan_cache_size``...) and,
when there is no plugin or it has no such function, gives what PyTorch gives on a build
without CUDA.
"""

from __future__ import annotations


def plugin():
    """The CUDA plugin's module; None when none is installed or it failed to load."""
    from flambeau.cuda import _facade

    return _facade.plugin()


def hook(name: str):
    """The CUDA plugin's function ``name``, or None."""
    module = plugin()
    return getattr(module, name, None) if module is not None else None


def install_hint() -> str:
    """How to get a CUDA backend, for messages."""
    from flambeau import backends

    return (
        f"install a distribution that provides the 'cuda' entry point of group {backends.GROUP!r}"
    )
