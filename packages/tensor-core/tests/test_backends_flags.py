"""PyTorch's torch.backends settings in flambeau.backends: defaults, checks and honesty."""

import platform
import subprocess
import sys

import pytest

import flambeau as F
from flambeau import backends


def test_settings_modules_load_lazily_and_by_import():
    code = (
        "import sys, flambeau\n"
        "assert 'flambeau.backends.cudnn' not in sys.modules\n"
        "import flambeau.backends.cudnn as cudnn\n"
        "assert cudnn is flambeau.backends.cudnn and cudnn.enabled is True\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        backends.nope  # noqa: B018


def test_plugin_mechanism_still_there():
    assert backends.GROUP == "flambeau.backends"
    assert callable(backends.available) and callable(backends.load)


def test_cpu_capability():
    cap = backends.cpu.get_cpu_capability()
    if platform.machine().lower() in {"x86_64", "amd64"}:
        with open("/proc/cpuinfo") as f:  # Linux CI: the kernel's view of the CPU
            avx2 = " avx2" in f.read()
        assert cap == ("AVX2" if avx2 else "NO AVX")
    else:
        assert cap == "DEFAULT"


def test_libraries_flambeau_does_not_use():
    assert backends.cudnn.is_available() is False
    assert backends.cudnn.version() is None
    assert backends.cudnn.is_acceptable(F.ones(1)) is False
    assert backends.mkldnn.is_available() is False
    assert backends.mkl.is_available() is False
    assert backends.mps.is_available() is False
    assert backends.mps.is_built() is False
    with pytest.raises(RuntimeError, match="without MPS backend"):
        backends.mps.is_macos13_or_newer()
    assert backends.openmp.is_available() is True
    assert backends.cuda.is_built() is False


def test_cudnn_flags():
    c = backends.cudnn
    assert (c.enabled, c.benchmark, c.deterministic, c.allow_tf32) == (True, False, False, True)
    with pytest.raises(RuntimeError, match="set_benchmark_cudnn expects a bool, but got int"):
        c.benchmark = 1
    with pytest.raises(RuntimeError, match="set_enabled_cudnn expects a bool, but got str"):
        c.enabled = "yes"
    c.deterministic = True
    try:
        assert c.deterministic is True
        with c.flags(enabled=False, deterministic=False):
            assert c.enabled is False and c.deterministic is False
        assert c.enabled is True and c.deterministic is True
    finally:
        c.deterministic = False
    old = c.set_flags(_benchmark=True)
    assert old[1] is False and c.benchmark is True
    c.set_flags(*old)
    assert c.benchmark is False


def test_mkldnn_flags():
    m = backends.mkldnn
    assert m.enabled is True and m.deterministic is False
    with m.flags(enabled=False):
        assert m.enabled is False
    assert m.enabled is True
    with pytest.raises(RuntimeError, match="set_deterministic_mkldnn expects a bool"):
        m.deterministic = None


def test_matmul_tf32_follows_float32_matmul_precision():
    m = backends.cuda.matmul
    from flambeau._runtime_config import (
        get_float32_matmul_precision,
        set_float32_matmul_precision,
    )

    assert get_float32_matmul_precision() == "highest" and m.allow_tf32 is False
    try:
        m.allow_tf32 = True
        assert get_float32_matmul_precision() == "high"
        set_float32_matmul_precision("medium")
        assert m.allow_tf32 is True
        m.allow_tf32 = False
        assert get_float32_matmul_precision() == "highest"
    finally:
        set_float32_matmul_precision("highest")
    with pytest.raises(RuntimeError, match="expects a bool"):
        m.allow_tf32 = 1
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        m.foo = 1
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        m.foo  # noqa: B018


def test_matmul_reduced_precision_flags():
    m = backends.cuda.matmul
    assert m.allow_fp16_reduced_precision_reduction is True
    m.allow_fp16_reduced_precision_reduction = (False, True)
    assert m.allow_fp16_reduced_precision_reduction is False
    m.allow_fp16_reduced_precision_reduction = True
    with pytest.raises(TypeError, match="a bool or a tuple/list of bools"):
        m.allow_bf16_reduced_precision_reduction = 1
    assert m.allow_fp16_accumulation is False


def test_sdp_switches():
    cuda = backends.cuda
    assert cuda.flash_sdp_enabled() and cuda.math_sdp_enabled()
    cuda.enable_flash_sdp(False)
    try:
        assert cuda.flash_sdp_enabled() is False
    finally:
        cuda.enable_flash_sdp(True)


def test_opt_einsum_is_honestly_off():
    o = backends.opt_einsum
    assert o.is_available() is False and o.get_opt_einsum() is None
    assert o.enabled is False and o.strategy is None
    o.enabled = False  # what it already is: fine
    with pytest.raises(ValueError, match="opt_einsum is not available"):
        o.enabled = True
    with pytest.raises(ValueError, match="opt_einsum is not available"):
        o.strategy = "greedy"
    with o.flags(enabled=False):
        assert o.enabled is False
