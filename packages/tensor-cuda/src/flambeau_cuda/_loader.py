"""Loading the extension: cudart comes from NVIDIA's ``nvidia-cuda-runtime`` wheel.

The extension links ``libcudart.so.13`` with an RPATH to ``site-packages/nvidia/cu13/lib``;
where the wheel sits elsewhere on ``sys.path`` (``pip install --target``, a second
site-packages), the library is loaded here first so that the extension finds it by its
soname. Without the wheel the system's CUDA 13 runtime is used, if there is one.
cuBLAS (``nvidia-cublas``) is not loaded here: the extension opens it at the first matrix
product, from the path found here or else by its soname; cuSOLVER (``nvidia-cusolver``) and
cuFFT (``nvidia-cufft``) likewise at the first factorization or transform.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import sys

CUDART = "libcudart.so.13"
CUBLAS = "libcublas.so.13"
CUSOLVER = "libcusolver.so.12"  # the CUDA 13 line of cuSOLVER
CUFFT = "libcufft.so.12"  # and of cuFFT


def _wheel_library(name: str) -> str | None:
    """The path of ``name`` in an installed NVIDIA CUDA 13 wheel, or None."""
    for entry in sys.path:
        path = os.path.join(entry or ".", "nvidia", "cu13", "lib", name)
        if os.path.exists(path):
            return path
    return None


def preload_cudart() -> str | None:
    """Loads the wheel's cudart (globally) and returns its path; None without the wheel."""
    path = _wheel_library(CUDART)
    if path is not None:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    return path


def import_extension():
    """``flambeau_cuda._C``, imported (which registers the backend with flambeau)."""
    preload_cudart()
    try:
        module = importlib.import_module("flambeau_cuda._C")
    except ImportError as e:
        if CUDART in str(e):
            raise ImportError(
                f"flambeau-tensor-cuda needs the CUDA 13 runtime ({CUDART}): "
                "pip install nvidia-cuda-runtime"
            ) from e
        raise
    # cuBLAS is opened at the first matrix product, not now; the wheel's copy first.
    module._set_cublas_library_path(_wheel_library(CUBLAS) or "")
    module._set_cusolver_library_path(_wheel_library(CUSOLVER) or "")
    module._set_cufft_library_path(_wheel_library(CUFFT) or "")
    return module
