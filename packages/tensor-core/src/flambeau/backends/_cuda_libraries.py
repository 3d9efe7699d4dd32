"""Which CUDA library runs BLAS, linear algebra and (ROCm) flash attention, and cuBLAS's
workspace sizes: PyTorch's ``preferred_*_library`` and ``*_workspace_size`` of
torch.backends.cuda.

The preferences are settings, kept here with PyTorch's enums, defaults, environment
variables (``TORCH_BLAS_PREFER_CUBLASLT``, ``TORCH_LINALG_PREFER_CUSOLVER``,
``TORCH_ROCM_FA_PREFER_CK``, read when this module is first imported) and checks. A
library the build lacks cannot be preferred: cuBLASLt, cuSOLVER and MAGMA are there only
when the CUDA plugin says so (``_has_cublaslt()``...). The workspaces belong to cuBLAS
handles, so their sizes come from the plugin (``_cuda_getCublasWorkspaceSize``...);
without one they raise AttributeError, as PyTorch does without CUDA.
"""

from __future__ import annotations

import enum
import os
import warnings

from flambeau.backends import _cuda_plugin

__all__ = [
    "blas_workspace_size",
    "cublas_workspace_size",
    "cublaslt_workspace_size",
    "preferred_blas_library",
    "preferred_linalg_library",
    "preferred_rocm_fa_library",
]


class _NumberedEnum(enum.Enum):
    def __int__(self) -> int:
        return self.value

    __index__ = __int__


class _BlasBackend(_NumberedEnum):
    """The BLAS libraries (PyTorch's ``torch._C._BlasBackend``).

    >>> from flambeau.backends.cuda import _BlasBackend
    >>> _BlasBackend.Cublaslt, int(_BlasBackend.Ck)
    (<_BlasBackend.Cublaslt: 2>, 3)
    """

    Default = 0
    Cublas = 1
    Cublaslt = 2
    Ck = 3


class _LinalgBackend(_NumberedEnum):
    """The linear-algebra libraries (PyTorch's ``torch._C._LinalgBackend``).

    >>> from flambeau.backends.cuda import _LinalgBackend
    >>> list(_LinalgBackend)
    [<_LinalgBackend.Default: 0>, <_LinalgBackend.Cusolver: 1>, <_LinalgBackend.Magma: 2>]
    """

    Default = 0
    Cusolver = 1
    Magma = 2


class _ROCmFABackend(_NumberedEnum):
    """The flash-attention libraries of ROCm (PyTorch's ``torch._C._ROCmFABackend``).

    >>> from flambeau.backends.cuda import _ROCmFABackend
    >>> list(_ROCmFABackend)
    [<_ROCmFABackend.Default: 0>, <_ROCmFABackend.AOTriton: 1>, <_ROCmFABackend.Ck: 2>]
    """

    Default = 0
    AOTriton = 1
    Ck = 2


_BLAS_NAMES = {
    "default": _BlasBackend.Default,
    "cublas": _BlasBackend.Cublas,
    "hipblas": _BlasBackend.Cublas,  # ROCm's names for the same two
    "cublaslt": _BlasBackend.Cublaslt,
    "hipblaslt": _BlasBackend.Cublaslt,
    "ck": _BlasBackend.Ck,
}
_LINALG_NAMES = {
    "default": _LinalgBackend.Default,
    "cusolver": _LinalgBackend.Cusolver,
    "magma": _LinalgBackend.Magma,
}
_ROCM_FA_NAMES = {
    "default": _ROCmFABackend.Default,
    "aotriton": _ROCmFABackend.AOTriton,
    "ck": _ROCmFABackend.Ck,
}


def _env_flag(name: str) -> bool:
    """PyTorch's boolean environment variables: "1" or "0", anything else warned about."""
    value = os.environ.get(name)
    if value is None or value == "0":
        return False
    if value == "1":
        return True
    warnings.warn(
        f"Ignoring invalid value for boolean flag {name}: {value}; valid values are 0 or 1.",
        stacklevel=2,
    )
    return False


_preferred = {
    "blas": _BlasBackend.Cublaslt
    if _env_flag("TORCH_BLAS_PREFER_CUBLASLT") or _env_flag("TORCH_BLAS_PREFER_HIPBLASLT")
    else _BlasBackend.Cublas,
    "linalg": _LinalgBackend.Cusolver
    if _env_flag("TORCH_LINALG_PREFER_CUSOLVER")
    else _LinalgBackend.Default,
    "rocm_fa": _ROCmFABackend.Ck
    if _env_flag("TORCH_ROCM_FA_PREFER_CK")
    else _ROCmFABackend.Default,
}
_warned_experimental: set = set()  # the settings whose "experimental" warning was given


def _has(library: str) -> bool:
    """Whether the CUDA plugin says it was built with ``library`` (cublaslt, cusolver, magma)."""
    answer = _cuda_plugin.hook(f"_has_{library}")
    return bool(answer()) if answer is not None else False


def _not_built(title: str) -> str:
    return (
        f"Cannot set preferred backend to {title} if flambeau has not been built with "
        f"{title} (no CUDA backend with it is installed)."
    )


def _warn_experimental(setting: str) -> None:
    if setting not in _warned_experimental:
        _warned_experimental.add(setting)
        warnings.warn(
            f"torch.backends.cuda.{setting} is an experimental feature. If you see any error "
            "or unexpected behavior when this flag is set please file an issue on GitHub.",
            stacklevel=3,
        )


def _chosen(backend, names: dict, enum_type: type, bad_type: type):
    """The enum member ``backend`` (a name or a member) stands for."""
    if isinstance(backend, str):
        if backend not in names:
            raise RuntimeError(f"Unknown input value. Choose from: {', '.join(names)}.")
        return names[backend]
    if isinstance(backend, enum_type):
        return backend
    if bad_type is ValueError:  # preferred_rocm_fa_library's message names the choices
        raise ValueError(f"Unknown input value. Choose from: {', '.join(names)}.")
    raise RuntimeError("Unknown input value type.")


def preferred_blas_library(backend=None) -> _BlasBackend:
    """The BLAS library CUDA matmuls prefer, after setting it to ``backend`` (a name:
    ``"cublas"``, ``"cublaslt"``, ``"ck"``, ``"default"``, ROCm's ``"hipblas"`` and
    ``"hipblaslt"``; or a ``_BlasBackend``) when given. ``"default"`` reads back as
    cuBLAS; cuBLASLt needs a build with it (RuntimeError otherwise).

    >>> flambeau.backends.cuda.preferred_blas_library()
    <_BlasBackend.Cublas: 1>
    >>> flambeau.backends.cuda.preferred_blas_library("cublaslt")  # no CUDA plugin here
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot set preferred backend to cuBLASLt if flambeau has not been built ...
    """
    if backend is not None:
        chosen = _chosen(backend, _BLAS_NAMES, _BlasBackend, RuntimeError)
        if chosen is _BlasBackend.Cublaslt and not _has("cublaslt"):
            raise RuntimeError(_not_built("cuBLASLt"))
        if chosen not in (_BlasBackend.Default, _BlasBackend.Cublas):
            _warn_experimental("preferred_blas_library")
        _preferred["blas"] = chosen
    if _preferred["blas"] is _BlasBackend.Default:
        return _BlasBackend.Cublas  # the platform's default
    return _preferred["blas"]


def preferred_linalg_library(backend=None) -> _LinalgBackend:
    """The library CUDA linear algebra prefers, after setting it to ``backend``
    (``"cusolver"``, ``"magma"``, ``"default"`` or a ``_LinalgBackend``) when given.
    cuSOLVER and MAGMA need a build with them (RuntimeError otherwise).

    >>> flambeau.backends.cuda.preferred_linalg_library()
    <_LinalgBackend.Default: 0>
    >>> flambeau.backends.cuda.preferred_linalg_library("magma")  # no CUDA plugin here
    Traceback (most recent call last):
      ...
    RuntimeError: Cannot set preferred backend to MAGMA if flambeau has not been built ...
    """
    if backend is not None:
        chosen = _chosen(backend, _LINALG_NAMES, _LinalgBackend, RuntimeError)
        for member, library, title in (
            (_LinalgBackend.Cusolver, "cusolver", "cuSOLVER"),
            (_LinalgBackend.Magma, "magma", "MAGMA"),
        ):
            if chosen is member and not _has(library):
                raise RuntimeError(_not_built(title))
        if chosen is not _LinalgBackend.Default:
            _warn_experimental("preferred_linalg_library")
        _preferred["linalg"] = chosen
    return _preferred["linalg"]


def preferred_rocm_fa_library(backend=None) -> _ROCmFABackend:
    """The library ROCm's flash attention prefers, after setting it to ``backend``
    (``"aotriton"``, ``"ck"``, ``"default"`` or a ``_ROCmFABackend``) when given. A
    setting only: nothing in flambeau reads it.

    >>> flambeau.backends.cuda.preferred_rocm_fa_library()
    <_ROCmFABackend.Default: 0>
    >>> flambeau.backends.cuda.preferred_rocm_fa_library("triton")
    Traceback (most recent call last):
      ...
    RuntimeError: Unknown input value. Choose from: default, aotriton, ck.
    """
    if backend is not None:
        _preferred["rocm_fa"] = _chosen(backend, _ROCM_FA_NAMES, _ROCmFABackend, ValueError)
    return _preferred["rocm_fa"]


def _workspace_size(getter: str, setter: str, size, caller: str) -> int:
    get, set_ = _cuda_plugin.hook(getter), _cuda_plugin.hook(setter)
    if get is None or (size is not None and set_ is None):
        raise AttributeError(
            f"flambeau.backends.cuda.{caller} needs cuBLAS, which comes with a CUDA backend "
            f"that reports it ({getter}): {_cuda_plugin.install_hint()}"
        )
    if size is not None:
        set_(size)
    return int(get())


def cublas_workspace_size(size: int | None = None) -> int:
    """cuBLAS's workspace size in bytes, after setting it to ``size`` when given (handles
    made afterwards use it). Needs a CUDA plugin: AttributeError without one, as PyTorch
    without CUDA.

    >>> flambeau.backends.cuda.cublas_workspace_size()  # no CUDA plugin here
    Traceback (most recent call last):
      ...
    AttributeError: flambeau.backends.cuda.cublas_workspace_size needs cuBLAS, ...
    """
    return _workspace_size(
        "_cuda_getCublasWorkspaceSize",
        "_cuda_setCublasWorkspaceSize",
        size,
        "cublas_workspace_size",
    )


def cublaslt_workspace_size(size: int | None = None) -> int:
    """cuBLASLt's workspace size in bytes, after setting it to ``size`` when given.
    Needs a CUDA plugin: AttributeError without one, as PyTorch without CUDA.

    >>> flambeau.backends.cuda.cublaslt_workspace_size(1 << 20)  # no CUDA plugin here
    Traceback (most recent call last):
      ...
    AttributeError: flambeau.backends.cuda.cublaslt_workspace_size needs cuBLAS, ...
    """
    return _workspace_size(
        "_cuda_getCublasLtWorkspaceSize",
        "_cuda_setCublasLtWorkspaceSize",
        size,
        "cublaslt_workspace_size",
    )


def blas_workspace_size(size: int | None = None, backend=None) -> int:
    """The workspace size of ``backend``'s BLAS library (the preferred one when None):
    :func:`cublaslt_workspace_size` for cuBLASLt, :func:`cublas_workspace_size`
    otherwise; CK has no workspace (RuntimeError).

    >>> flambeau.backends.cuda.blas_workspace_size(backend="ck")
    Traceback (most recent call last):
      ...
    RuntimeError: CK backend does not use a workspace.
    """
    if backend is None:
        resolved = preferred_blas_library()
    elif isinstance(backend, str):
        if backend not in _BLAS_NAMES:
            raise RuntimeError(f"Unknown backend string. Choose from: {', '.join(_BLAS_NAMES)}.")
        resolved = _BLAS_NAMES[backend]
    elif isinstance(backend, _BlasBackend):
        resolved = backend
    else:
        raise RuntimeError("Unknown backend type.")
    if resolved is _BlasBackend.Default:
        resolved = _BlasBackend.Cublas  # the platform's default
    if resolved is _BlasBackend.Ck:
        raise RuntimeError("CK backend does not use a workspace.")
    if resolved is _BlasBackend.Cublaslt:
        return cublaslt_workspace_size(size)
    return cublas_workspace_size(size)
