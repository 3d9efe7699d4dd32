"""PyTorch's torch.backends settings in flambeau.backends: defaults, checks and honesty."""

import os
import platform
import subprocess
import sys
import tempfile

import numpy as np
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


def _cpu_flags() -> set:
    if platform.machine().lower() not in {"x86_64", "amd64"}:
        return set()
    with open("/proc/cpuinfo") as f:  # Linux CI: the kernel's view of the CPU
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def _hardware_capability() -> str:
    flags = _cpu_flags()
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        return "AVX512"
    return "AVX2" if {"avx2", "fma"} <= flags else "DEFAULT"


def test_cpu_capability_is_the_best_the_cpu_has():
    if os.environ.get("FLAMBEAU_CPU_CAPABILITY") or os.environ.get("ATEN_CPU_CAPABILITY"):
        pytest.skip("the environment caps the capability")
    assert backends.cpu.get_cpu_capability() == _hardware_capability()


ORDER = ["DEFAULT", "AVX2", "AVX512"]


@pytest.mark.parametrize("variable", ["FLAMBEAU_CPU_CAPABILITY", "ATEN_CPU_CAPABILITY"])
@pytest.mark.parametrize("asked", ["default", "avx2", "avx512", "AVX2"])
def test_the_environment_caps_the_capability_and_kernels_agree(variable, asked):
    """Each capability's copy of the vector loops computes the same values (within
    rounding: FMA may fuse differently), and asking above the CPU gets the CPU's."""
    code = (
        "import flambeau as F, numpy as np\n"
        "x = F.linspace(-3, 3, 1001)\n"
        "vals = [F.exp(x), F.tanh(x), F.softmax(x, 0), x.sum(),\n"
        "        F.nn.functional.layer_norm(x.reshape(7, 143), (143,))]\n"
        "p = [F.ones(1001)]; F._foreach_mul_(p, 3.0); vals.append(p[0])\n"
        "r = F.nn.RNN(5, 20, nonlinearity='relu', bias=False)\n"  # the packed GEMM kernel
        "with F.no_grad():\n"
        "    r.weight_ih_l0.copy_(F.sin(F.arange(100.0)).reshape(20, 5))\n"
        "    r.weight_hh_l0.copy_(F.cos(F.arange(400.0)).reshape(20, 20) * 0.2)\n"
        "    vals.append(r(F.linspace(-1, 1, 165).reshape(3, 11, 5))[0])\n"
        "m = F.nn.LSTM(5, 20, bias=False)\n"  # four gate panels side by side, one partial
        "with F.no_grad():\n"
        "    m.weight_ih_l0.copy_(F.sin(F.arange(400.0)).reshape(80, 5) * 0.5)\n"
        "    m.weight_hh_l0.copy_(F.cos(F.arange(1600.0)).reshape(80, 20) * 0.2)\n"
        "    vals.append(m(F.linspace(-1, 1, 165).reshape(3, 11, 5))[0])\n"
        "vals.append(x.reshape(13, 77).sum(0))\n"  # column sums: 8 rows at a time, then 5
        # Winograd: 2 panels of 12-row tiles forward, 1 panel for the input's gradient
        "cx = F.sin(F.arange(1600.0)).reshape(1, 16, 10, 10).requires_grad_()\n"
        "cw = F.cos(F.arange(4608.0)).reshape(32, 16, 3, 3) * 0.1\n"
        "cy = F.nn.functional.conv2d(cx, cw, padding=1)\n"
        "cy.sum().backward()\n"
        "vals += [cy.detach(), cx.grad]\n"
        "print(F.backends.cpu.get_cpu_capability())\n"
        "np.save('out.npy', np.concatenate([v.reshape(-1).numpy() for v in vals]))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("CPU_CAPABILITY")}
    env[variable] = asked
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, cwd=d, capture_output=True, text=True,
            check=True,
        )  # fmt: skip
        got = np.load(os.path.join(d, "out.npy"))
    cap = out.stdout.strip()
    hw = _hardware_capability()
    assert cap == ORDER[min(ORDER.index(asked.upper()), ORDER.index(hw))]
    x = np.linspace(-3, 3, 1001, dtype=np.float32)
    e = np.exp(x - x.max())
    xs = x.reshape(7, 143)
    ln = (xs - xs.mean(1, keepdims=True)) / np.sqrt(xs.var(1, keepdims=True) + 1e-5)
    w_ih = np.sin(np.arange(100.0)).reshape(20, 5)
    w_hh = np.cos(np.arange(400.0)).reshape(20, 20) * 0.2
    h, steps = np.zeros((11, 20)), []
    for xt in np.linspace(-1, 1, 165).reshape(3, 11, 5):
        h = np.maximum(xt @ w_ih.T + h @ w_hh.T, 0)
        steps.append(h)
    w_ih = np.sin(np.arange(400.0)).reshape(80, 5) * 0.5
    w_hh = np.cos(np.arange(1600.0)).reshape(80, 20) * 0.2
    h, c, lstm_steps = np.zeros((11, 20)), np.zeros((11, 20)), []
    for xt in np.linspace(-1, 1, 165).reshape(3, 11, 5):
        i, f, g, o = np.split(xt @ w_ih.T + h @ w_hh.T, 4, axis=1)
        c = c / (1 + np.exp(-f)) + np.tanh(g) / (1 + np.exp(-i))
        h = np.tanh(c) / (1 + np.exp(-o))
        lstm_steps.append(h)
    want = np.concatenate(
        [np.exp(x), np.tanh(x), e / e.sum(), [x.sum()], ln.reshape(-1), np.full(1001, 3.0)]
        + [np.stack(steps).reshape(-1), np.stack(lstm_steps).reshape(-1)]
        + [x.astype(np.float64).reshape(13, 77).sum(0)]
        + list(_conv_and_input_gradient())
    )
    total = 3 * 1001  # the sum's element: float32 rounding of a sum that is about 0
    np.testing.assert_allclose(got[total], want[total], atol=1e-3)
    np.testing.assert_allclose(np.delete(got, total), np.delete(want, total), rtol=2e-5, atol=2e-5)


def _conv_and_input_gradient():
    """The capability test's 3x3 convolution (padding 1) and the gradient of its sum with
    respect to the input, summed directly in float64."""
    x = np.sin(np.arange(1600.0)).reshape(16, 10, 10)
    w = np.cos(np.arange(4608.0)).reshape(32, 16, 3, 3) * 0.1
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1)))
    y = np.zeros((32, 10, 10))
    grad = np.zeros((16, 12, 12))
    for a in range(3):
        for b in range(3):
            y += np.einsum("oc,cij->oij", w[:, :, a, b], padded[:, a : a + 10, b : b + 10])
            grad[:, a : a + 10, b : b + 10] += w[:, :, a, b].sum(0)[:, None, None]
    return y.reshape(-1), grad[:, 1:11, 1:11].reshape(-1)


def test_an_unknown_capability_is_ignored_with_a_message():
    env = {k: v for k, v in os.environ.items() if not k.endswith("CPU_CAPABILITY")}
    env["FLAMBEAU_CPU_CAPABILITY"] = "sse9"
    code = "import flambeau as F; print(F.backends.cpu.get_cpu_capability())"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == _hardware_capability()
    assert "ignoring FLAMBEAU_CPU_CAPABILITY=sse9" in out.stderr


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
