"""Packaged extensions: a setuptools project with CppExtension/BuildExtension, and a CMake
project with find_package(flambeau), each built in a temporary directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

import flambeau

SOURCE = """
#include <flambeau/extension.h>

flambeau::Tensor square(const flambeau::Tensor& x) { return flambeau::ops::mul(x, x); }

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("square", &square); }
"""

SETUP_PY = """
from setuptools import setup
from flambeau.utils.cpp_extension import BuildExtension, CppExtension

setup(
    name="squareext",
    ext_modules=[CppExtension("squareext", ["squareext.cpp"], extra_compile_args={"cxx": ["-O1"]})],
    cmdclass={"build_ext": BuildExtension},
)
"""

CMAKELISTS = """
cmake_minimum_required(VERSION 3.18)
project(squarecmake LANGUAGES CXX)
find_package(Python COMPONENTS Interpreter Development.Module REQUIRED)
find_package(pybind11 CONFIG REQUIRED)
find_package(flambeau CONFIG REQUIRED)
pybind11_add_module(squarecmake squarecmake.cpp)
target_link_libraries(squarecmake PRIVATE flambeau::extension)
"""


def run(*cmd, cwd):
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def check_import(module: str, where):
    code = (
        f"import flambeau, {module}; print({module}.square(flambeau.tensor([3.0, -2.0])).tolist())"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(where), os.environ.get("PYTHONPATH", "")]),
    }
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=where
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[9.0, 4.0]"


def test_build_extension_with_setuptools(tmp_path):
    (tmp_path / "squareext.cpp").write_text(SOURCE)
    (tmp_path / "setup.py").write_text(SETUP_PY)
    run(sys.executable, "setup.py", "build_ext", "--inplace", cwd=tmp_path)
    check_import("squareext", tmp_path)


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_cmake_project_with_find_package(tmp_path):
    import pybind11

    (tmp_path / "squarecmake.cpp").write_text(SOURCE.replace("TORCH_EXTENSION_NAME", "squarecmake"))
    (tmp_path / "CMakeLists.txt").write_text(CMAKELISTS)
    build = tmp_path / "build"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    run(
        "cmake", "-S", str(tmp_path), "-B", str(build), *generator, "-DCMAKE_BUILD_TYPE=Release",
        f"-Dflambeau_DIR={flambeau.get_cmake_dir()}", f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
        f"-DPython_EXECUTABLE={sys.executable}", cwd=tmp_path,
    )  # fmt: skip
    run("cmake", "--build", str(build), cwd=tmp_path)
    check_import("squarecmake", build)
