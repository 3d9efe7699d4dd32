"""``flambeau.backends.cuda``: settings for CUDA libraries (cuBLAS, attention kernels).

CUDA comes from a backend plugin (device type ``"cuda"``); the core itself has no CUDA
code. These settings keep PyTorch's defaults and checks so programs that set them run
unchanged, and a CUDA plugin may read them. On the CPU the matmul settings change
nothing (flambeau's float32 matmuls always compute in full precision); the attention
switches (``enable_flash_sdp``, ``enable_math_sdp``...) decide, as PyTorch's do on the
CPU, which inputs ``scaled_dot_product_attention`` accepts: see flambeau.nn.attention.
``matmul.allow_tf32`` is tied to ``flambeau.set_float32_matmul_precision`` as in PyTorch
(True means a precision other than "highest").

What only CUDA code can answer (may a fused attention kernel run these inputs, the
cuFFT plan caches, cuBLAS's workspaces) the CUDA plugin answers when it can; otherwise
each gives PyTorch's answer on a build without CUDA (False, or PyTorch's exception).
"""

from __future__ import annotations

import warnings

from flambeau import backends as _backends
from flambeau.backends import _sdp
from flambeau.backends._cuda_libraries import (
    _BlasBackend,
    _LinalgBackend,
    _ROCmFABackend,
    blas_workspace_size,
    cublas_workspace_size,
    cublaslt_workspace_size,
    preferred_blas_library,
    preferred_linalg_library,
    preferred_rocm_fa_library,
)
from flambeau.backends._cufft_plan_cache import (
    cufft_plan_cache,
    cuFFTPlanCache,
    cuFFTPlanCacheManager,
)
from flambeau.backends._flags import BoolFlag
from flambeau.backends._sdp import ENABLED as _sdp_enabled
from flambeau.backends._sdp import SDPBackend
from flambeau.backends._sdpa_params import (
    SDPAParams,
    can_use_cudnn_attention,
    can_use_efficient_attention,
    can_use_flash_attention,
    is_ck_sdpa_available,
    is_flash_attention_available,
)

__all__ = ["is_built", "matmul", "SDPAParams", "SDPBackend"]
__all__ += ["cuFFTPlanCache", "cuFFTPlanCacheManager", "cufft_plan_cache"]
__all__ += ["preferred_blas_library", "preferred_linalg_library", "preferred_rocm_fa_library"]
__all__ += ["blas_workspace_size", "cublas_workspace_size", "cublaslt_workspace_size"]
__all__ += ["cudnn_sdp_enabled", "enable_cudnn_sdp", "enable_flash_sdp", "enable_math_sdp"]
__all__ += ["enable_mem_efficient_sdp", "flash_sdp_enabled", "math_sdp_enabled"]
__all__ += ["mem_efficient_sdp_enabled", "sdp_kernel"]
__all__ += ["allow_fp16_bf16_reduction_math_sdp", "fp16_bf16_reduction_math_sdp_allowed"]
__all__ += ["can_use_cudnn_attention", "can_use_efficient_attention", "can_use_flash_attention"]
__all__ += ["is_ck_sdpa_available", "is_flash_attention_available"]
# PyTorch's enums of torch._C, for preferred_*_library.
_enums = (_BlasBackend, _LinalgBackend, _ROCmFABackend)


def is_built() -> bool:
    """Whether a CUDA backend plugin is installed (which does not mean a GPU is present).

    >>> flambeau.backends.cuda.is_built()  # no CUDA plugin here
    False
    """
    return "cuda" in _backends._installed()


class _ReducedPrecisionFlag:
    """A bool, or a (bool, ...) tuple or list whose first entry is the setting."""

    def __init__(self, name: str):
        self.name = name
        self.value = True

    def __get__(self, obj, owner=None):
        return self if obj is None else self.value

    def __set__(self, obj, value) -> None:
        first = value[0] if isinstance(value, (tuple, list)) and value else value
        if not isinstance(first, bool) or (
            isinstance(value, (tuple, list)) and not all(isinstance(v, bool) for v in value)
        ):
            raise TypeError(
                f"{self.name} expects a bool or a tuple/list of bools, but got {type(value)}"
            )
        self.value = first


class _TF32:
    """``allow_tf32``: reads and sets ``flambeau.set_float32_matmul_precision``."""

    def __get__(self, obj, owner=None):
        from flambeau._runtime_config import get_float32_matmul_precision

        return self if obj is None else get_float32_matmul_precision() != "highest"

    def __set__(self, obj, value) -> None:
        from flambeau._runtime_config import set_float32_matmul_precision

        if not isinstance(value, bool):
            raise RuntimeError(
                f"set_allow_tf32_cublas expects a bool, but got {type(value).__name__}"
            )
        set_float32_matmul_precision("high" if value else "highest")


class _Matmul:
    """``flambeau.backends.cuda.matmul``: cuBLAS matmul settings (no effect on the CPU)."""

    allow_tf32 = _TF32()
    allow_fp16_reduced_precision_reduction = _ReducedPrecisionFlag(
        "allow_fp16_reduced_precision_reduction"
    )
    allow_bf16_reduced_precision_reduction = _ReducedPrecisionFlag(
        "allow_bf16_reduced_precision_reduction"
    )
    allow_fp16_accumulation = BoolFlag(
        False, "set_allow_fp16_accumulation_cublas", "fp16 accumulation in cuBLAS (no effect)."
    )

    def __setattr__(self, name, value):
        if not hasattr(type(self), name):
            raise AttributeError(f"Unknown attribute {name}")
        super().__setattr__(name, value)

    def __getattr__(self, name):  # only reached for names the class lacks
        raise AttributeError(f"Unknown attribute {name}")


matmul = _Matmul()

# Which scaled_dot_product_attention kernels may run (flambeau.backends._sdp: on the CPU
# flambeau.nn.functional applies PyTorch's rule; a CUDA plugin may read them).


def flash_sdp_enabled() -> bool:
    """Whether the flash attention backend of scaled_dot_product_attention is enabled.

    >>> flambeau.backends.cuda.flash_sdp_enabled()
    True
    """
    return _sdp_enabled["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    """Enables or disables the flash attention backend (RuntimeError for a non-bool).

    >>> flambeau.backends.cuda.enable_flash_sdp(False)
    >>> flambeau.backends.cuda.flash_sdp_enabled()
    False
    >>> flambeau.backends.cuda.enable_flash_sdp(True)
    """
    _sdp_enabled["flash"] = _sdp.check_bool(enabled, "set_sdp_use_flash")


def mem_efficient_sdp_enabled() -> bool:
    """Whether the memory-efficient attention backend is enabled.

    >>> flambeau.backends.cuda.mem_efficient_sdp_enabled()
    True
    """
    return _sdp_enabled["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Enables or disables the memory-efficient attention backend (RuntimeError for a
    non-bool).

    >>> flambeau.backends.cuda.enable_mem_efficient_sdp(1)
    Traceback (most recent call last):
      ...
    RuntimeError: set_sdp_use_mem_efficient expects a bool, but got int
    """
    _sdp_enabled["mem_efficient"] = _sdp.check_bool(enabled, "set_sdp_use_mem_efficient")


def math_sdp_enabled() -> bool:
    """Whether the math backend of scaled_dot_product_attention is enabled.

    >>> flambeau.backends.cuda.math_sdp_enabled()
    True
    """
    return _sdp_enabled["math"]


def enable_math_sdp(enabled: bool) -> None:
    """Enables or disables the math backend (RuntimeError for a non-bool).

    >>> flambeau.backends.cuda.enable_math_sdp(True)
    >>> flambeau.backends.cuda.math_sdp_enabled()
    True
    """
    _sdp_enabled["math"] = _sdp.check_bool(enabled, "set_sdp_use_math")


def cudnn_sdp_enabled() -> bool:
    """Whether the cuDNN attention backend is enabled.

    >>> flambeau.backends.cuda.cudnn_sdp_enabled()
    True
    """
    return _sdp_enabled["cudnn"]


def enable_cudnn_sdp(enabled: bool) -> None:
    """Enables or disables the cuDNN attention backend (RuntimeError for a non-bool).

    >>> flambeau.backends.cuda.enable_cudnn_sdp(True)
    >>> flambeau.backends.cuda.cudnn_sdp_enabled()
    True
    """
    _sdp_enabled["cudnn"] = _sdp.check_bool(enabled, "set_sdp_use_cudnn")


def allow_fp16_bf16_reduction_math_sdp(enabled: bool) -> None:
    """Lets the math backend reduce float16/bfloat16 inputs in their own precision
    (RuntimeError for a non-bool). A setting for a CUDA plugin: flambeau's CPU attention
    kernel does not read it.

    >>> cuda = flambeau.backends.cuda
    >>> cuda.allow_fp16_bf16_reduction_math_sdp(True)
    >>> cuda.fp16_bf16_reduction_math_sdp_allowed()
    True
    >>> cuda.allow_fp16_bf16_reduction_math_sdp(False)
    """
    _sdp.MATH_REDUCTION["fp16_bf16"] = _sdp.check_bool(
        enabled, "set_math_sdp_allow_fp16_bf16_reduction"
    )


def fp16_bf16_reduction_math_sdp_allowed() -> bool:
    """Whether the math backend may reduce float16/bfloat16 inputs in their own precision
    (False by default).

    >>> flambeau.backends.cuda.fp16_bf16_reduction_math_sdp_allowed()
    False
    """
    return _sdp.MATH_REDUCTION["fp16_bf16"]


def sdp_kernel(
    enable_flash: bool = True,
    enable_math: bool = True,
    enable_mem_efficient: bool = True,
    enable_cudnn: bool = True,
):
    """Deprecated (FutureWarning): only the backends asked for are enabled inside the
    ``with`` block, the others (the overrideable backend too) disabled; the previous
    flags come back after it. :func:`flambeau.nn.attention.sdpa_kernel` replaces it.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     with flambeau.backends.cuda.sdp_kernel(enable_flash=False):
    ...         print(flambeau.backends.cuda.flash_sdp_enabled())
    False
    >>> flambeau.backends.cuda.flash_sdp_enabled()
    True
    """
    warnings.warn(
        "`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context "
        "manager will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new "
        "context manager, with updated signature.",
        FutureWarning,
        stacklevel=2,
    )
    wanted = (
        (SDPBackend.FLASH_ATTENTION, enable_flash),
        (SDPBackend.EFFICIENT_ATTENTION, enable_mem_efficient),
        (SDPBackend.MATH, enable_math),
        (SDPBackend.CUDNN_ATTENTION, enable_cudnn),
    )
    return _sdp.only_enabled([backend for backend, enabled in wanted if enabled])
