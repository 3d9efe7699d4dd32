"""Builds and installs the plugin (flambeau-tensor-cuda) into a directory for the tests.

    python tests/plugin_build.py TARGET_DIR     # prints the seconds the build took

``pip install --no-build-isolation --no-deps --target TARGET_DIR`` of this package, against
the flambeau core importable here (as a plugin is built against the core it will run with).
The CMake build directory is kept in ``$FLAMBEAU_CUDA_BUILD_DIR`` when set, so a second run
recompiles only what changed. Compiles one file at a time (the machines here are shared),
or one per core under CI, which has its machine to itself.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]


class BuildUnavailable(RuntimeError):
    """Something the build needs is missing here; the message says what."""


def find_nvcc() -> str:
    """nvcc from $CUDACXX, PATH or /usr/local/cuda*/bin."""
    candidates = [os.environ.get("CUDACXX"), shutil.which("nvcc")]
    candidates += sorted(str(p) for p in Path("/usr/local").glob("cuda*/bin/nvcc"))[::-1]
    for c in candidates:
        if c and Path(c).exists():
            return c
    raise BuildUnavailable("no nvcc (install the CUDA 13 toolkit or set CUDACXX)")


def check_core_abi() -> None:
    """The importable core must provide the backend ABI minor its headers declare (the
    plugin compiles against those headers and refuses an older core at import)."""
    try:
        import flambeau
        from flambeau import _C
    except ImportError as e:
        raise BuildUnavailable(f"flambeau is not importable: {e}") from e
    header = Path(flambeau.get_include(), "flambeau", "backend_abi.h").read_text()
    minor = int(re.search(r"#define FLB_ABI_MINOR (\d+)", header).group(1))
    major = int(re.search(r"#define FLB_ABI_MAJOR (\d+)", header).group(1))
    if tuple(_C._backend_abi_version) < (major, minor):
        raise BuildUnavailable(
            f"the importable flambeau core provides backend ABI "
            f"{'.'.join(map(str, _C._backend_abi_version))} but its headers declare "
            f"{major}.{minor}: rebuild the core"
        )


def check_tools() -> None:
    for module in ("scikit_build_core", "pybind11"):
        try:
            __import__(module)
        except ImportError as e:
            raise BuildUnavailable(f"{module} is not installed") from e
    if not shutil.which("cmake"):
        raise BuildUnavailable("cmake is not installed")


def check_cublas_headers(nvcc: str) -> None:
    """cuBLAS's, cuSOLVER's and cuFFT's headers, which the build takes from the
    nvidia-cublas, nvidia-cusolver and nvidia-cufft wheels (or else the toolkit beside
    nvcc), as CMakeLists.txt looks for them."""
    places = [Path(nvcc).resolve().parents[1] / "include"]
    try:
        import nvidia

        places += [Path(p, "cu13", "include") for p in nvidia.__path__]
    except ImportError:
        pass
    if not any((p / "cublas_v2.h").exists() for p in places):
        raise BuildUnavailable("cuBLAS's headers are missing: pip install nvidia-cublas (CUDA 13)")
    for header, wheel in (("cusolverDn.h", "nvidia-cusolver"), ("cufft.h", "nvidia-cufft")):
        if not any((p / header).exists() for p in places):
            raise BuildUnavailable(f"{header} is missing: pip install {wheel} (CUDA 13)")


def build(target: str | os.PathLike) -> float:
    """Installs the plugin into ``target``; returns the seconds it took."""
    nvcc = find_nvcc()
    check_tools()
    check_cublas_headers(nvcc)
    check_core_abi()
    jobs = str(os.cpu_count() or 1) if os.environ.get("CI") else "1"
    env = dict(os.environ, CUDACXX=nvcc, CMAKE_BUILD_PARALLEL_LEVEL=jobs)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-build-isolation",
        "--no-deps",
        "--target",
        str(target),
        str(PACKAGE),
    ]
    build_dir = os.environ.get("FLAMBEAU_CUDA_BUILD_DIR")
    if build_dir:
        cmd += ["--config-settings", f"build-dir={build_dir}"]
    start = time.monotonic()
    result = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(
            f"building flambeau-tensor-cuda failed:\n{result.stdout}\n{result.stderr}"
        )
    return time.monotonic() - start


if __name__ == "__main__":
    print(f"{build(sys.argv[1]):.1f}")
