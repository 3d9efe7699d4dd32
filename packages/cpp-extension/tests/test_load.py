"""load() and load_inline(): building, caching, importing, and compiler errors."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import EXAMPLES

import flambeau
from flambeau.utils import cpp_extension
from flambeau.utils.cpp_extension import load, load_inline


def test_load_builds_a_module_from_files(swish_ext, build_root):
    x = np.linspace(-4, 4, 25)
    out = swish_ext.swish_forward(flambeau.tensor(x), 1.5)
    np.testing.assert_allclose(out.numpy(), x / (1 + np.exp(-1.5 * x)), rtol=1e-12)
    # Built under the build root, in a directory named by the module and its hash.
    assert os.path.dirname(swish_ext.__file__).startswith(str(build_root / "swish_ext_"))
    assert sys.modules["swish_ext"] is swish_ext


def test_load_inline_binds_the_functions_with_docstrings():
    src = "flambeau::Tensor twice(const flambeau::Tensor& x) { return flambeau::ops::add(x, x); }"
    ext = load_inline("inline_twice", src, functions={"twice": "Doubles a tensor."})
    assert ext.twice(flambeau.tensor([1.0, -2.5])).tolist() == [2.0, -5.0]
    assert "Doubles a tensor." in ext.twice.__doc__


def test_second_load_in_a_fresh_process_only_imports(swish_ext):
    module_file = swish_ext.__file__
    mtime = os.stat(module_file).st_mtime_ns
    code = (
        "import time; t = time.perf_counter()\n"
        "from flambeau.utils.cpp_extension import load\n"
        f"m = load('swish_ext', [{str(EXAMPLES / 'swish.cpp')!r}], verbose=True)\n"
        "print('file', m.__file__)\n"
        "print('seconds', time.perf_counter() - t)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "Building extension module" not in out
    assert "Loading extension module swish_ext" in out
    assert f"file {module_file}" in out
    assert os.stat(module_file).st_mtime_ns == mtime  # not relinked
    assert float(out.split("seconds")[1]) < 2.0  # generous: an import, not a compile


def test_changed_flags_build_a_new_module(swish_ext):
    # Another key, so another directory; a process holding the first build refuses the
    # second under the same name (CPython keeps one extension module per name).
    flags = ["-DSWISH_VARIANT=1"]
    with pytest.raises(RuntimeError, match="already loaded in this process"):
        load("swish_ext", [EXAMPLES / "swish.cpp"], extra_cflags=flags)
    code = (
        "from flambeau.utils.cpp_extension import load\n"
        f"m = load('swish_ext', [{str(EXAMPLES / 'swish.cpp')!r}], extra_cflags={flags!r})\n"
        "print(m.__file__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() != swish_ext.__file__
    assert os.path.exists(swish_ext.__file__)


def test_compile_error_raises_with_the_compilers_message():
    src = "int broken() { return this_name_is_not_declared; }"
    for _ in range(2):  # a failed build is not cached as a success
        with pytest.raises(RuntimeError, match="Error building extension 'broken_ext'") as info:
            load_inline("broken_ext", src, functions="broken")
        assert "this_name_is_not_declared" in str(info.value)
        assert "error" in str(info.value)


def test_cuda_sources_and_bad_names_are_refused(tmp_path):
    with pytest.raises(RuntimeError, match="flambeau-tensor-cuda"):
        load_inline("cu_ext", "", cuda_sources="__global__ void k() {}")
    (tmp_path / "k.cu").write_text("")
    with pytest.raises(RuntimeError, match="CUDA plugin"):
        load("cu_ext", [tmp_path / "k.cu"])
    with pytest.raises(ValueError, match="identifier"):
        load_inline("not-an-identifier", "")
    with pytest.raises(FileNotFoundError, match="missing.cpp"):
        load("missing_ext", [tmp_path / "missing.cpp"])


def test_include_paths_and_build_root(monkeypatch):
    paths = cpp_extension.include_paths()
    assert any(os.path.exists(os.path.join(p, "flambeau", "extension.h")) for p in paths)
    assert any(os.path.exists(os.path.join(p, "pybind11", "pybind11.h")) for p in paths)
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere/cache")
    assert cpp_extension.get_default_build_root() == os.path.realpath(
        "/somewhere/cache/flambeau_extensions"
    )
    assert cpp_extension.is_ninja_available()
    cpp_extension.verify_ninja_availability()


def test_examples_run(swish_ext):
    # Both worked examples, each in a fresh process (swish_ext comes from the cache).
    for demo in ("demo_load_inline.py", "demo_fused_activation.py"):
        proc = subprocess.run(
            [sys.executable, str(EXAMPLES / demo)], capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "gradcheck passed" in proc.stdout
