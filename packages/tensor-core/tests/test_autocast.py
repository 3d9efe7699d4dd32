"""Autocast: the thread-local state, the casts of the operators the table marks
(against NumPy on bfloat16-rounded inputs), nesting, threads and the checks of
flambeau.autocast."""

from __future__ import annotations

import subprocess
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import flambeau
from flambeau import _C

F32, BF16, F16, F64 = flambeau.float32, flambeau.bfloat16, flambeau.float16, flambeau.float64


def bf16_round(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest bfloat16 (ties to even), as float32."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def values(t) -> np.ndarray:
    return t.float().numpy() if t.dtype in (BF16, F16) else t.numpy()


def rand(*shape, seed=0, dtype=F32):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return flambeau.from_numpy(x).to(dtype)


def assert_bf16_close(got, expected):
    """A bfloat16 result against a float64 reference of bfloat16-rounded inputs: the
    kernel's rounding of its output (and of float32 partial sums) only."""
    assert got.dtype == BF16
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(values(got), expected, rtol=2**-7, atol=2**-7 * scale)


@pytest.fixture(autouse=True)
def autocast_off():
    """Every test starts and ends with autocast off and the default dtypes."""
    yield
    flambeau.set_autocast_enabled("cpu", False)
    flambeau.set_autocast_dtype("cpu", BF16)
    flambeau.set_autocast_cache_enabled(True)


# A product that tells a bfloat16 computation from a float32 one: 1 + 2**-9 rounds to
# 1 in bfloat16 (7 mantissa bits), so the difference cancels to 0 only when the
# inputs were cast.
def cancelling_pair():
    a = flambeau.tensor([[1.0 + 2**-9, -1.0]])
    b = flambeau.tensor([[1.0], [1.0]])
    return a, b


# ---- the state --------------------------------------------------------------------------


def test_defaults_in_a_new_interpreter():
    code = (
        "import flambeau as f; print(f.is_autocast_enabled('cpu'), f.is_autocast_enabled(), "
        "f.get_autocast_dtype('cpu'), f.get_autocast_dtype('cuda'), "
        "f.is_autocast_cache_enabled())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [
        "False",
        "False",
        "flambeau.bfloat16",
        "flambeau.float16",
        "True",
    ]


def test_state_round_trips():
    flambeau.set_autocast_enabled("cpu", True)
    assert flambeau.is_autocast_enabled("cpu") and not flambeau.is_autocast_enabled("cuda")
    flambeau.set_autocast_dtype("cpu", F16)
    assert flambeau.get_autocast_dtype("cpu") == F16
    assert flambeau.get_autocast_dtype("cpu:0") == F16  # an index is ignored
    flambeau.set_autocast_cache_enabled(False)
    assert not flambeau.is_autocast_cache_enabled()
    flambeau.set_autocast_enabled(True)  # PyTorch's one-argument form is for cuda
    assert flambeau.is_autocast_enabled()
    flambeau.set_autocast_enabled(False)
    assert not flambeau.is_autocast_enabled("cuda")


def test_nesting_counter():
    base = flambeau.autocast_increment_nesting() - 1
    assert flambeau.autocast_increment_nesting() == base + 2
    assert flambeau.autocast_decrement_nesting() == base + 1
    assert flambeau.autocast_decrement_nesting() == base


def test_state_argument_errors():
    with pytest.raises(TypeError, match="'device_type' .* must be str, not"):
        flambeau.is_autocast_enabled(flambeau.device("cpu"))
    with pytest.raises(TypeError, match="'enabled' .* must be bool, not int"):
        flambeau.set_autocast_enabled("cpu", 1)
    with pytest.raises(TypeError, match="'dtype' .* must be flambeau.dtype, not str"):
        flambeau.set_autocast_dtype("cpu", "bfloat16")
    with pytest.raises(RuntimeError, match="at start of device string: foo"):
        flambeau.get_autocast_dtype("foo")
    with pytest.raises(TypeError):
        flambeau.get_autocast_dtype()


def test_deprecated_spellings_warn_and_work():
    with pytest.warns(DeprecationWarning, match=r"is_autocast_enabled\('cpu'\)"):
        assert flambeau.is_autocast_cpu_enabled() is False
    with pytest.warns(DeprecationWarning):
        flambeau.set_autocast_cpu_enabled(True)
    assert flambeau.is_autocast_enabled("cpu")
    with pytest.warns(DeprecationWarning):
        flambeau.set_autocast_cpu_dtype(F16)
    with pytest.warns(DeprecationWarning):
        assert flambeau.get_autocast_cpu_dtype() == F16
    with pytest.warns(DeprecationWarning):
        assert flambeau.get_autocast_gpu_dtype() == F16


def test_is_autocast_available():
    assert flambeau.amp.is_autocast_available("cpu")
    assert flambeau.amp.is_autocast_available("cuda")
    with pytest.raises(RuntimeError, match="device string: foo"):
        flambeau.amp.is_autocast_available("foo")


# ---- lower_precision_fp operators -------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda a, b: flambeau.mm(a, b),
        lambda a, b: flambeau.matmul(a, b),
        lambda a, b: a.mm(b),
        lambda a, b: a.matmul(b),
        lambda a, b: a @ b,
        lambda a, b: b.__rmatmul__(a),
        lambda a, b: flambeau.bmm(a[None], b[None])[0],
        lambda a, b: flambeau.einsum("ij,jk->ik", a, b),
        lambda a, b: flambeau.addmm(flambeau.zeros(1, 1), a, b),
    ],
    ids=[
        "mm",
        "matmul",
        "Tensor.mm",
        "Tensor.matmul",
        "@",
        "__rmatmul__",
        "bmm",
        "einsum",
        "addmm",
    ],
)
def test_products_run_on_cast_inputs(call):
    a, b = cancelling_pair()
    assert call(a, b).dtype == F32 and values(call(a, b))[0, 0] == 2**-9
    with flambeau.autocast("cpu"):
        out = call(a, b)
    assert out.dtype == BF16
    assert values(out)[0, 0] == 0.0


def test_products_match_numpy_on_rounded_inputs():
    a, b, c = rand(5, 7, seed=1), rand(7, 3, seed=2), rand(5, 3, seed=3)
    ra, rb, rc = (bf16_round(t.numpy()).astype(np.float64) for t in (a, b, c))
    with flambeau.autocast("cpu"):
        assert_bf16_close(flambeau.matmul(a, b), ra @ rb)
        assert_bf16_close(flambeau.addmm(c, a, b, beta=0.5, alpha=2.0), 0.5 * rc + 2.0 * ra @ rb)
        x, y = rand(2, 5, 7, seed=4), rand(2, 7, 3, seed=5)
        rx, ry = bf16_round(x.numpy()).astype(np.float64), bf16_round(y.numpy()).astype(np.float64)
        assert_bf16_close(flambeau.bmm(x, y), rx @ ry)
        assert_bf16_close(flambeau.baddbmm(flambeau.zeros(2, 5, 3), x, y), rx @ ry)
        assert_bf16_close(flambeau.addbmm(flambeau.zeros(5, 3), x, y), (rx @ ry).sum(0))


def correlate2d(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Valid cross-correlation of x (N, C, H, W) with w (O, C, kh, kw), in float64."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i : i + h - kh + 1, j : j + wd - kw + 1]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out


def test_convolutions_run_on_cast_inputs():
    x, w, bias = rand(2, 3, 6, 5, seed=6), rand(4, 3, 3, 2, seed=7), rand(4, seed=8)
    rx, rw, rb = (bf16_round(t.numpy()).astype(np.float64) for t in (x, w, bias))
    expected = correlate2d(rx, rw) + rb[None, :, None, None]
    with flambeau.autocast("cpu"):
        assert_bf16_close(flambeau.conv2d(x, w, bias), expected)
        out1 = flambeau.conv1d(x[:, :, 0], w[:, :, 0], bias)
        assert_bf16_close(
            out1, correlate2d(rx[:, :, :1], rw[:, :, :1])[:, :, 0] + rb[None, :, None]
        )
        assert flambeau.conv_transpose2d(x, w.transpose(0, 1)).dtype == BF16
        assert flambeau.conv3d(x[:, :, None], w[:, :, None]).dtype == BF16
    # The cancelling pair as a 1x1 convolution over two channels.
    a, b = cancelling_pair()
    xc, wc = a.reshape(1, 2, 1, 1), b.reshape(1, 2, 1, 1)
    with flambeau.autocast("cpu"):
        assert values(flambeau.conv2d(xc, wc)).item() == 0.0
    assert values(flambeau.conv2d(xc, wc)).item() == 2**-9


def test_float16_autocast_dtype():
    a, b = rand(4, 3, seed=9), rand(3, 2, seed=10)
    with flambeau.autocast("cpu", dtype=F16):
        out = flambeau.mm(a, b)
    assert out.dtype == F16
    ra = a.numpy().astype(np.float16).astype(np.float64)
    rb = b.numpy().astype(np.float16).astype(np.float64)
    np.testing.assert_allclose(values(out), ra @ rb, rtol=2**-9, atol=2**-9)


def test_what_autocast_leaves_alone():
    a, b = rand(3, 3, seed=11), rand(3, 3, seed=12)
    with flambeau.autocast("cpu"):
        assert flambeau.mm(a.double(), b.double()).dtype == F64  # float64 is never cast
        ints = flambeau.ones(2, 2, dtype=flambeau.int64)
        assert flambeau.mm(ints, ints).dtype == flambeau.int64
        assert (a + b).dtype == F32 and flambeau.relu(a).dtype == F32  # unlisted operators
        assert flambeau.mm(a.to(BF16), b.to(BF16)).dtype == BF16  # already low precision


def test_out_and_inplace_forms_are_not_cast():
    a, b = cancelling_pair()
    with flambeau.autocast("cpu"):
        out = flambeau.empty(1, 1)
        flambeau.mm(a, b, out=out)
        assert out.dtype == F32 and out.item() == 2**-9
        c = flambeau.zeros(1, 1)
        c.addmm_(a, b)
        assert c.dtype == F32 and c.item() == 2**-9


def test_outside_autocast_nothing_changes():
    a, b = cancelling_pair()
    with flambeau.autocast("cpu"):
        pass
    out = flambeau.mm(a, b)
    assert out.dtype == F32 and out.item() == 2**-9


# ---- fp32 and promote operators ---------------------------------------------------------


def test_fp32_operators_run_in_float32():
    x = rand(6, seed=13, dtype=BF16)
    y = rand(6, seed=14, dtype=BF16)
    rx, ry = values(x).astype(np.float64), values(y).astype(np.float64)
    with flambeau.autocast("cpu"):
        p = flambeau.prod(x)
        assert p.dtype == F32
        np.testing.assert_allclose(p.item(), np.prod(rx), rtol=1e-6)
        loss = flambeau.mse_loss(x, y)
        assert loss.dtype == F32
        np.testing.assert_allclose(loss.item(), np.mean((rx - ry) ** 2), rtol=1e-6)
        assert flambeau.trace(x.reshape(2, 3)).dtype == F32
        assert flambeau.linalg.inv(flambeau.eye(3, dtype=BF16)).dtype == F32
        spectrum = flambeau.fft.rfft(x)  # bfloat16 FFTs raise outside autocast
        assert spectrum.dtype == flambeau.complex64
        np.testing.assert_allclose(spectrum.numpy(), np.fft.rfft(rx), rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError):
        flambeau.fft.rfft(x)


def test_promote_operators_take_the_widest_type():
    lo, hi = flambeau.ones(2, dtype=BF16), flambeau.tensor([1.0 + 2**-9, 2.0])
    with flambeau.autocast("cpu"):
        both = flambeau.cat([lo, hi])
        assert both.dtype == F32 and both[2].item() == 1.0 + 2**-9
        assert flambeau.cat([lo, lo]).dtype == BF16
        assert flambeau.stack([lo, hi]).dtype == F32
        assert flambeau.stack([lo, hi.double()]).dtype == F64  # float64 stays, then promotes
        copied = flambeau.zeros(3, dtype=BF16).index_copy(0, flambeau.tensor([1]), hi[:1])
        assert copied.dtype == F32 and copied[1].item() == 1.0 + 2**-9


def test_composite_policies():
    # prelu (lower precision) and cdist (float32) are Python composites with a policy.
    x, w = rand(2, 3, seed=15), flambeau.tensor([0.25])
    with flambeau.autocast("cpu"):
        assert flambeau.prelu(x, w).dtype == BF16
        d = flambeau.cdist(x.to(BF16), x.to(BF16))
        assert d.dtype == F32
    assert flambeau.prelu(x, w).dtype == F32


def test_composites_with_out_are_not_cast():
    x = flambeau.tensor([1.0, 3.0, 2.0], dtype=BF16)
    with pytest.raises(RuntimeError, match="must be either float or double"):
        flambeau.quantile(x, 0.5)
    with flambeau.autocast("cpu"):
        median = flambeau.quantile(x, 0.5)  # cast to float32 first
        assert median.dtype == F32 and median.item() == 2.0
        with pytest.raises(RuntimeError, match="must be either float or double"):
            flambeau.quantile(x, 0.5, out=flambeau.empty(()))


# ---- regions ----------------------------------------------------------------------------


def test_nesting_and_disabling():
    a, b = cancelling_pair()
    with flambeau.autocast("cpu"):
        assert flambeau.mm(a, b).dtype == BF16
        with flambeau.autocast("cpu", enabled=False):
            assert flambeau.mm(a, b).dtype == F32
            with flambeau.autocast("cpu", dtype=F16):
                assert flambeau.mm(a, b).dtype == F16
                assert flambeau.get_autocast_dtype("cpu") == F16
            assert not flambeau.is_autocast_enabled("cpu")
        assert flambeau.mm(a, b).dtype == BF16
        assert flambeau.get_autocast_dtype("cpu") == BF16
    assert not flambeau.is_autocast_enabled("cpu")
    assert flambeau.mm(a, b).dtype == F32


def test_exit_restores_after_an_exception():
    with pytest.raises(ValueError):
        with flambeau.autocast("cpu", dtype=F16, cache_enabled=False):
            raise ValueError("inside")
    assert not flambeau.is_autocast_enabled("cpu")
    assert flambeau.get_autocast_dtype("cpu") == BF16
    assert flambeau.is_autocast_cache_enabled()


def test_decorator():
    a, b = cancelling_pair()

    @flambeau.autocast("cpu")
    def product(x, y, depth=0):
        inner = product(x, y, depth - 1) if depth else None
        return flambeau.mm(x, y), inner

    out, inner = product(a, b, depth=1)
    assert out.dtype == BF16 and inner[0].dtype == BF16
    assert not flambeau.is_autocast_enabled("cpu")
    assert product.__name__ == "product"


def test_amp_and_top_level_names_are_the_same():
    assert flambeau.autocast is flambeau.amp.autocast
    assert flambeau.GradScaler is flambeau.amp.GradScaler


def test_region_checks():
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        flambeau.autocast(flambeau.device("cpu"))
    with pytest.raises(RuntimeError, match="device string: foo"):
        flambeau.autocast("foo")
    with pytest.raises(TypeError, match="requires a callable, but got int"):
        flambeau.autocast("cpu")(3)
    for dtype in (F64, F32, flambeau.int32):
        with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not"):
            region = flambeau.autocast("cpu", dtype=dtype)
        with region:
            assert not flambeau.is_autocast_enabled("cpu")
            assert flambeau.get_autocast_dtype("cpu") == dtype  # set, as in PyTorch
    if not flambeau.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            region = flambeau.autocast("cuda")
        with region:
            assert not flambeau.is_autocast_enabled("cuda")


def test_deprecated_module_spellings():
    with pytest.warns(FutureWarning, match=r"flambeau.amp.autocast\('cpu'"):
        region = flambeau.cpu.amp.autocast()
    assert isinstance(region, flambeau.amp.autocast) and region.fast_dtype == BF16
    a, b = cancelling_pair()
    with region:
        assert flambeau.mm(a, b).dtype == BF16
    with pytest.warns(FutureWarning, match="GradScaler"):
        assert flambeau.cpu.amp.GradScaler().is_enabled()
    if not flambeau.cuda.is_available():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            region = flambeau.cuda.amp.autocast()
        kinds = {w.category for w in caught}
        assert kinds == {FutureWarning, UserWarning} and not region._enabled


# ---- threads ----------------------------------------------------------------------------


def test_state_is_thread_local():
    a, b = cancelling_pair()
    seen = {}

    def worker():
        seen["enabled"] = flambeau.is_autocast_enabled("cpu")
        seen["dtype"] = flambeau.mm(a, b).dtype
        with flambeau.autocast("cpu", dtype=F16):
            seen["inside"] = flambeau.mm(a, b).dtype
            barrier.wait()  # the main thread checks its own state now
            barrier.wait()

    barrier = threading.Barrier(2)
    with flambeau.autocast("cpu"):
        thread = threading.Thread(target=worker)
        thread.start()
        barrier.wait()
        assert flambeau.mm(a, b).dtype == BF16  # the worker's float16 region is its own
        assert flambeau.get_autocast_dtype("cpu") == BF16
        barrier.wait()
        thread.join()
    assert seen == {"enabled": False, "dtype": F32, "inside": F16}


# ---- the table ----------------------------------------------------------------------------


def test_ops_table_rows_show_the_policy():
    rows = {(r["name"], r["overload"]): r["autocast"] for r in flambeau.ops_table()}
    assert rows[("mm", "")] == "lower_precision_fp"
    assert rows[("conv2d", "padding")] == "lower_precision_fp"
    assert rows[("prod", "dim_int")] == "fp32"
    assert rows[("cat", "")] == "promote"
    assert all(policy is None for (name, _), policy in rows.items() if name in ("add", "relu"))


GEN_OPS = Path(__file__).resolve().parents[1] / "codegen" / "gen_ops.py"


@pytest.mark.skipif(not GEN_OPS.exists(), reason="the source tree's codegen is not here")
@pytest.mark.parametrize(
    "entry,message",
    [
        ("autocast: lower_precision", "autocast must be one of"),
        ("autocasts: fp32", "unknown table keys ['autocasts']"),
    ],
)
def test_codegen_rejects_bad_autocast_entries(tmp_path, entry, message):
    pytest.importorskip("yaml")
    table = tmp_path / "bad.yaml"
    table.write_text(f"- func: twice(Tensor input) -> Tensor\n  {entry}\n  doc: Doubles.\n")
    run = subprocess.run(
        [sys.executable, str(GEN_OPS), "--out", str(tmp_path / "out"), str(table)],
        capture_output=True,
        text=True,
    )
    assert run.returncode != 0 and message in run.stderr, run.stderr


def test_no_cast_cache_without_grad():
    with flambeau.autocast("cpu"):
        w = rand(3, 3, seed=16)
        flambeau.mm(w, w)
        assert _C._autocast_cached_casts() == 0  # plain tensors are never cached
