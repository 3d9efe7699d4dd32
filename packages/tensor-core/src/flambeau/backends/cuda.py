"""``flambeau.backends.cuda``: settings for CUDA libraries (cuBLAS, attention kernels).

CUDA comes from a backend plugin (device type ``"cuda"``); the core itself has no CUDA
code. These settings keep PyTorch's defaults and checks so programs that set them run
unchanged, and a CUDA plugin may read them. On the CPU they change nothing: flambeau's
float32 matmuls always compute in full precision and its attention always runs the
math kernel. ``matmul.allow_tf32`` is tied to ``flambeau.set_float32_matmul_precision``
as in PyTorch (True means a precision other than "highest").
"""

from __future__ import annotations

from flambeau import backends as _backends
from flambeau.backends._flags import BoolFlag

__all__ = ["is_built", "matmul"]
__all__ += ["cudnn_sdp_enabled", "enable_cudnn_sdp", "enable_flash_sdp", "enable_math_sdp"]
__all__ += ["enable_mem_efficient_sdp", "flash_sdp_enabled", "math_sdp_enabled"]
__all__ += ["mem_efficient_sdp_enabled"]


def is_built() -> bool:
    """Whether a CUDA backend plugin is installed (which does not mean a GPU is present)."""
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

# Which scaled_dot_product_attention kernels a CUDA plugin may use (the CPU always runs
# the math kernel, whatever these say).
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def flash_sdp_enabled() -> bool:
    return _sdp["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled() -> bool:
    return _sdp["math"]


def enable_math_sdp(enabled: bool) -> None:
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled: bool) -> None:
    _sdp["cudnn"] = bool(enabled)
