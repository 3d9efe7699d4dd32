"""Regression tests for inputs that once crashed, hung, or returned garbage.

Each case here was a fuzzer finding: a segfault, a heap overwrite, stale heap
memory in a result, a LAPACK loop of minutes, or an unclean exception type. The
expected behaviour is PyTorch's: a clean exception of its type, or NaN where
PyTorch returns NaN. Cases that could crash run in a child process so a
regression fails one test instead of killing the run.
"""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import flambeau as F


def run_isolated(code: str) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter; a crash shows as a negative return code."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )


def assert_raises_isolated(code: str, error: str, match: str) -> None:
    """`code` must raise `error` with `match` in its message (and not crash)."""
    body = textwrap.indent(textwrap.dedent(code).strip(), "    ")
    wrapped = (
        f"import flambeau as F\ntry:\n{body}\nexcept {error} as e:\n"
        f"    assert {match!r} in str(e), str(e)\n    print('RAISED')\n"
    )
    r = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr[-2000:]}"
    assert "RAISED" in r.stdout, f"no {error} raised: {r.stdout[-500:]}"


# ---- memory safety ----


@pytest.mark.parametrize("bad", [2, 3, 100000])
def test_index_put_accumulate_rejects_index_past_the_end(bad):
    # The accumulate path used to wrap a too-large index as if negative.
    assert_raises_isolated(
        f"""
        x = F.zeros(2, dtype=F.float64)
        F.index_put(x, [F.tensor([0] * 7 + [{bad}])], F.ones(8, dtype=F.float64), accumulate=True)
        """,
        "IndexError",
        f"index {bad} is out of bounds",
    )


def test_index_put_accumulate_still_wraps_negative_indices():
    x = F.zeros(3, dtype=F.float64)
    idx = F.tensor([-1] * 8 + [0])
    r = F.index_put(x, [idx], F.ones(9, dtype=F.float64), accumulate=True)
    np.testing.assert_array_equal(r.numpy(), [1.0, 0.0, 8.0])
    with pytest.raises(IndexError, match="index -4 is out of bounds"):
        F.index_put(x, [F.tensor([0] * 8 + [-4])], F.ones(9, dtype=F.float64), accumulate=True)


@pytest.mark.parametrize(
    "pivots, match",
    [
        ([5, 9, -3], "greater or equal to 1"),
        ([100000, 2, 3], "smaller or equal to LU.size(-2)"),
        ([0, 0, 0], "greater or equal to 1"),
        ([4, 2, 3], "smaller or equal to LU.size(-2)"),
    ],
)
def test_lu_solve_checks_pivots(pivots, match):
    assert_raises_isolated(
        f"""
        A = F.tensor([[4.0, 1, 0], [1, 3, 1], [0, 1, 2]], dtype=F.float64)
        LU, _ = F.linalg.lu_factor(A)
        F.linalg.lu_solve(LU, F.tensor({pivots}, dtype=F.int32), F.ones(3, 1, dtype=F.float64))
        """,
        "RuntimeError",
        match,
    )


def test_lu_solve_with_valid_pivots_solves():
    A = np.array([[1.0, 2, 0], [3, 1, 1], [0, 2, 5]])
    LU, piv = F.linalg.lu_factor(F.tensor(A))
    b = np.array([[1.0], [2.0], [3.0]])
    x = F.linalg.lu_solve(LU, piv, F.tensor(b))
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(A, b), rtol=1e-12)


@pytest.mark.parametrize(
    "call",
    [
        "F.neg(F.tensor([3.3]).expand(2**62), out=F.zeros(3))",
        "F.add(F.tensor([3.3]).expand(2**62), 1, out=F.zeros(3))",
        "F.sum(F.ones(1, 1).expand(2**62, 1), 1, out=F.zeros(3))",
        "F.cat([F.tensor([1.0]).expand(2**61), F.tensor([1.0]).expand(2**61)], out=F.zeros(3))",
        "F.digamma(F.tensor([3.3]).expand(2**62), out=F.zeros(3))",
    ],
)
def test_out_resize_overflow_raises(call):
    assert_raises_isolated(call, "RuntimeError", "too large")


@pytest.mark.parametrize(
    "call",
    [
        "F.ones(1, 1).expand(2**32, 2**32)",
        "F.ones(1).as_strided((2**32, 2**32), (0, 0))",
        "F.ones(1, 1).expand(2**62, 4)",
        "F.unique(F.ones(1, 1).expand(2**32, 2**32), dim=0)",
    ],
)
def test_views_whose_numel_overflows_raise(call):
    assert_raises_isolated(call, "RuntimeError", "numel: integer multiplication overflow")


def test_empty_views_with_huge_dims_are_fine():
    x = F.ones(0, 1).expand(0, 2**62)
    assert x.numel() == 0 and x.shape == (0, 2**62)
    assert F.zeros(0, 2**62).stride() == (2**62, 1)
    with pytest.raises(RuntimeError, match="Stride calculation overflowed"):
        F.zeros(0, 2**62, 4)  # as PyTorch: the first stride does not fit in int64


@pytest.mark.parametrize(
    "call",
    [
        lambda: F.max_pool1d(F.randn(2, 3, 5), [2**63 - 1], dilation=[1], ceil_mode=True),
        lambda: F.max_pool3d(
            F.randn(1, 2, 3, 4, 5), [2**32, 2**63 - 1, 2**63 - 1], padding=[1, 1, 0], ceil_mode=True
        ),  # fmt: skip
        lambda: F.avg_pool1d(F.randn(2, 3, 5), [2**62], [2**62], [0], True),
    ],
)
def test_pooling_with_huge_windows_returns_at_once(call):
    # A window far larger than the input used to be walked tap by tap (a hang).
    out = call()
    assert out.numel() > 0 and np.isfinite(out.numpy()).all()


def test_pooling_windows_overflowing_int64_raise():
    with pytest.raises(RuntimeError, match="too large"):
        F.max_pool1d(F.randn(2, 3, 5), [2**62], dilation=[4], ceil_mode=True)


@pytest.mark.parametrize(
    "call",
    [
        "F.max_unpool2d(F.ones(1, 1, 2, 2), F.tensor([[[[-3, 0], [1, 2]]]]), [4, 4])",
        "F.max_unpool2d(F.ones(1, 1, 2, 2), F.tensor([[[[-1, 0], [1, 2]]]]), [4, 4])",
        "F.max_unpool1d(F.ones(1, 2, 2), F.tensor([[[0, 1], [-1, 2]]]), [4])",
        "F.max_unpool3d(F.ones(1, 1, 1, 1, 2), F.tensor([[[[[0, -7]]]]]), [1, 2, 2])",
        "F.max_unpool2d(F.ones(1, 1, 2, 2), F.tensor([[[[16, 0], [1, 2]]]]), [4, 4])",
    ],
)
def test_max_unpool_rejects_invalid_indices(call):
    assert_raises_isolated(call, "RuntimeError", "Found an invalid max index")


def test_pool_backward_rejects_negative_indices():
    x = F.randn(1, 1, 4, 4)
    out, idx = F.max_pool2d_with_indices(x, [2, 2])
    bad = idx.clone()
    bad[0, 0, 0, 0] = -1
    with pytest.raises(RuntimeError, match="Found an invalid max index: -1"):
        F.max_pool2d_with_indices_backward(F.ones(1, 1, 2, 2), x, [2, 2], [2, 2], [0, 0], [1, 1],
                                           False, bad)  # fmt: skip
    a, aidx = F.adaptive_max_pool2d(x, [2, 2])
    aidx[0, 0, 1, 1] = -5
    with pytest.raises(RuntimeError, match="Found an invalid max index: -5"):
        F.adaptive_max_pool2d_backward(F.ones(1, 1, 2, 2), x, aidx)


EMBEDDING_BAG_BACKWARD = (
    "F._embedding_bag_backward(F.ones(2, 3), F.tensor([0, 1, 2]), F.tensor([0, 1]), {o2b}, "
    "F.tensor([1, 2]), {maxi}, 5, False, {mode}, False, None, -1)"
)


@pytest.mark.parametrize(
    "o2b, maxi, mode, match",
    [
        ("F.tensor([0])", "F.tensor([0, 0])", 0, "expected offset2bag of shape (3,)"),
        ("F.tensor([], dtype=F.int64)", "F.tensor([0, 0])", 0, "offset2bag of shape"),
        ("F.tensor(0)", "F.tensor([0, 0])", 1, "offset2bag of shape"),
        ("F.tensor([0.0, 1.0, 1.0])", "F.tensor([0, 0])", 0, "must be an integer tensor"),
        ("F.tensor([0, 1, 7])", "F.tensor([0, 0])", 0, "offset2bag holds 7"),
        ("F.tensor([0, -1, 1])", "F.tensor([0, 0])", 1, "offset2bag holds -1"),
        ("F.tensor([0, 1, 1])", "F.tensor([0, 0])", 2, "expected maximum_indices of shape"),
        ("F.tensor([0, 1, 1])", "F.full((2, 3), 9)", 2, "maximum_indices holds 9"),
    ],
)
def test_embedding_bag_backward_checks_its_bookkeeping(o2b, maxi, mode, match):
    call = EMBEDDING_BAG_BACKWARD.format(o2b=o2b, maxi=maxi, mode=mode)
    error = "IndexError" if "holds" in match else "RuntimeError"
    assert_raises_isolated(call, error, match)


def test_embedding_bag_backward_matches_hand_derived_sum():
    # Bags [0] and [1, 2] of rows; the sum-mode gradient adds each bag's grad row
    # to the weight rows it used.
    grad = F.tensor([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]])
    gw = F._embedding_bag_backward(grad, F.tensor([0, 1, 1]), F.tensor([0, 1]),
                                   F.tensor([0, 1, 1]), F.tensor([1, 2]), F.tensor([0, 0]), 3,
                                   False, 0, False, None, -1)  # fmt: skip
    np.testing.assert_array_equal(gw.numpy(), [[1, 2, 3], [20, 40, 60], [0, 0, 0]])


# ---- hangs and runaway allocations ----


def _with_inf(shape=(3, 3)):
    a = F.ones(*shape, dtype=F.float64)
    a[(0,) * len(shape)] = math.inf
    return a


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_svd_of_nonfinite_matrix_is_nan_not_a_hang(value):
    a = F.ones(2, 3, 3, dtype=F.float64)
    a[0, 1, 2] = value
    U, S, Vh = F.linalg.svd(a)
    assert np.isnan(S[0].numpy()).all() and np.isnan(U[0].numpy()).all()
    # The finite matrix of the batch is untouched: all-ones has singular values 3, 0, 0.
    np.testing.assert_allclose(S[1].numpy(), [3, 0, 0], atol=1e-12)
    assert np.isnan(F.linalg.svdvals(a)[0].numpy()).all()


def test_pinv_lstsq_eigh_of_nonfinite_matrix_return_nan():
    a = _with_inf()
    assert np.isnan(F.linalg.pinv(a).numpy()).all()
    assert np.isnan(F.linalg.lstsq(a, F.ones(3, 1, dtype=F.float64)).solution.numpy()).all()
    assert np.isnan(F.linalg.eigh(a).eigenvalues.numpy()).all()
    assert np.isnan(F.linalg.lstsq(_with_inf((3, 2)), F.ones(3, 1, dtype=F.float64))[0]).all()


def test_eig_of_nonfinite_matrix_raises():
    with pytest.raises(RuntimeError, match="should not contain infs or NaNs"):
        F.linalg.eig(_with_inf())
    with pytest.raises(RuntimeError, match="should not contain infs or NaNs"):
        F.linalg.eigvals(_with_inf())


@pytest.mark.parametrize(
    "call",
    [
        "F.upsample_nearest2d(F.ones(1, 1, 2, 2), [2**31, 2**31])",
        "F.upsample_bilinear2d(F.ones(1, 1, 2, 2), [2**40, 2**40], False)",
        "F.upsample_nearest1d(F.ones(1, 1, 2), [2**62])",
        "F.upsample_nearest2d_backward(F.ones(1, 1, 2, 2), [2**31, 2**31], [1, 1, 2, 2])",
        "F.upsample_nearest2d_backward(F.ones(1, 1, 2, 2), [2, 2], [1, 1, 2**31, 2**31])",
        "F.upsample_bicubic2d_backward(F.ones(1, 1, 2, 2), [2, 2], [1, 2**40, 2**40, 1], False)",
        "F.replication_pad1d(F.ones(1, 1, 2), [2**62, 2**62])",
        "F.replication_pad1d_backward(F.ones(1, 1, 4), F.ones(1, 1, 2), [2**40, 0])",
    ],
)
def test_resize_with_huge_sizes_fails_before_allocating_tables(call):
    # These once built per-position tables of the requested size first (the
    # kernel's OOM killer ended the process); now the size check comes first.
    r = run_isolated(
        f"""
        import os, resource
        if not os.environ.get("FLAMBEAU_SANITIZED"):  # ASan needs its address space
            resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
        import flambeau as F
        try:
            {call}
        except RuntimeError as e:
            print("RAISED", e)
        """
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "RAISED" in r.stdout, r.stdout


def test_resize_backward_still_checks_grad_output_shape():
    with pytest.raises(RuntimeError, match="expected grad_output of size"):
        F.upsample_nearest2d_backward(F.ones(1, 1, 3, 3), [4, 4], [1, 1, 2, 2])
    g = F.upsample_nearest2d_backward(F.ones(1, 1, 4, 4), [4, 4], [1, 1, 2, 2])
    np.testing.assert_array_equal(g.numpy(), np.full((1, 1, 2, 2), 4.0))


# ---- unclean errors ----


@pytest.mark.parametrize(
    "call",
    [
        lambda: F.ones(2).view(2**64),
        lambda: F.zeros(2**64),
        lambda: F.zeros(2, 2**63),
        lambda: F.ones(2).expand(2**63),
        lambda: F.ones(2).reshape([2**64]),
    ],
)
def test_shapes_beyond_int64_raise_type_error(call):
    with pytest.raises(TypeError, match="does not fit in int64"):
        call()


@pytest.mark.parametrize(
    "args, match",
    [
        (("cpu:99999999999999999999",), "Could not parse device index"),
        (("cuda:32768",), "Could not parse device index"),
        (("cuda", -2), "must not be negative"),
        (("cuda", -1), "must not be negative"),
        (("cuda", 70000), "out of range"),
        (("cuda", 2**70), "out of range"),
        ((-3,), "must not be negative"),
    ],
)
def test_bad_device_indices_raise_runtime_error(args, match):
    with pytest.raises(RuntimeError, match=match):
        F.device(*args)


def test_device_argument_types():
    with pytest.raises(TypeError, match="argument 'type' must be str"):
        F.device(1.5)
    with pytest.raises(TypeError, match="argument 'index' must be int"):
        F.device("cpu", "0")
    assert F.device("cpu", 32767).index == 32767
    assert str(F.device("cpu:3")) == "cpu:3"


@pytest.mark.parametrize(
    "call",
    [
        "F.conv3d(F.ones(2, 4, 5, 2, 4), F.ones(2, 2, 2, 2, 2), None, [1, 1, 2], [0, 0, 2**63 - 1],"
        " [1, 1, 1], 2)",
        "F.conv1d(F.ones(1, 1, 4), F.ones(1, 1, 3), None, [1], [0], [2**62], 1)",
        "F.conv_transpose1d(F.ones(1, 1, 4), F.ones(1, 1, 3), None, [2**62], [0], [0], 1, [1])",
        "F.conv1d(F.ones(1, 1, 4), F.ones(1, 1, 3), None, [1], 'same', [2**62], 1)",
    ],
)
def test_convolution_geometry_overflow_raises(call):
    assert_raises_isolated(call, "RuntimeError", "int64 range")


@pytest.mark.parametrize(
    "call",
    [
        lambda: F._upsample_bicubic2d_aa(F.randn(1, 1, 3, 3), [4, 2], False, 5e-324, None),
        lambda: F._upsample_bilinear2d_aa(F.randn(1, 1, 3, 3), [4, 2], False, 1e-300, 1e300),
        lambda: F._upsample_nearest_exact3d(F.randn(1, 1, 2, 2, 2), [7, 6, 3], None, 5e-324, 2.0),
        lambda: F.upsample_nearest2d(F.randn(1, 1, 3, 3), [4, 5], 5e-324, 1e-310),
        lambda: F.upsample_bilinear2d(F.randn(1, 1, 3, 3), [4, 5], False, 5e-324, 1e-310),
        lambda: F.upsample_bicubic2d(F.randn(1, 1, 3, 3), [4, 5], False, 5e-324, 1e-310),
    ],
)
def test_resize_with_tiny_scale_factors_reads_inside_the_input(call):
    # A scale of 5e-324 makes source positions infinite; they are clamped to the
    # border before becoming indices (an out-of-range read and UB before).
    out = call()
    assert np.isfinite(out.numpy()).all()


@pytest.mark.parametrize("dtype", [F.int8, F.int16, F.int32, F.int64])
def test_integer_arithmetic_wraps_like_numpy(dtype):
    info = np.iinfo(str(dtype).split(".")[-1])
    x = F.tensor([info.max, info.min, info.max], dtype=dtype)
    y = F.tensor([1, -1, info.max], dtype=dtype)
    with np.errstate(over="ignore"):
        a, b = x.numpy(), y.numpy()
        np.testing.assert_array_equal((x + y).numpy(), a + b)
        np.testing.assert_array_equal((x - y).numpy(), a - b)
        np.testing.assert_array_equal((x * y).numpy(), a * b)
        np.testing.assert_array_equal(F.addcmul(x, x, y).numpy(), a + a * b)


def test_size_arithmetic_near_the_int64_limits():
    # Each once overflowed int64 (undefined behaviour, then a wrong size).
    np.testing.assert_array_equal(
        F.arange(-(2**62), 2**62, 2**61).numpy(), np.arange(-(2**62), 2**62, 2**61)
    )
    with pytest.raises(RuntimeError, match="arange: invalid size"):
        F.arange(-(2**63), 2**63 - 1, 1)
    assert [c.numel() for c in F.ones(5).chunk(2**63 - 1)] == [1] * 5
    with pytest.raises(RuntimeError, match="overflows the int64 range"):
        F.constant_pad_nd(F.ones(4), [2**32, 2**63 - 1])
    out = F.conv1d(F.ones(1, 2, 5), F.ones(2, 1, 1), None, [2**63 - 1], [0], [1], 2)
    np.testing.assert_array_equal(out.numpy(), np.ones((1, 2, 1)))


def test_out_that_is_also_an_input_is_not_resized():
    # Resizing it replaced the input's memory under the kernel: the result held
    # uninitialised values. PyTorch refuses, as for an in-place op.
    x = F.ones(1)
    with pytest.raises(RuntimeError, match=r"output with shape \(1,\) doesn't match"):
        F.add(x, F.ones(3), out=x)
    e = F.ones(2, 1).expand(2, 3)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        F.add(e, F.ones(4, 2, 3), out=e)
    with pytest.raises(RuntimeError, match="single memory location"):
        F.add(e, F.ones(2, 3), out=e)
    y = F.ones(3)
    np.testing.assert_array_equal(F.mul(y, 2, out=y).numpy(), [2, 2, 2])
    np.testing.assert_array_equal(F.add(F.ones(1), F.ones(3), out=y).numpy(), [2, 2, 2])


def test_unfold_with_a_step_beyond_the_size_keeps_a_valid_stride():
    r = F.randn(8, 4, 1, 3, dtype=F.float64).unfold(2, 1, step=2**62)
    assert r.shape == (8, 4, 1, 3, 1) and min(r.stride()) >= 0
    np.testing.assert_array_equal(r.clone().numpy(), r.numpy())


@pytest.mark.parametrize(
    "op, args",
    [
        ("mv", lambda: (F.ones(5, 4), F.ones(4))),
        ("mm", lambda: (F.ones(3, 4), F.ones(4, 2))),
        ("bmm", lambda: (F.ones(2, 3, 4), F.ones(2, 4, 2))),
        ("matmul", lambda: (F.ones(2, 3, 4), F.ones(4, 2))),
        ("dot", lambda: (F.ones(4), F.ones(4))),
    ],
)
def test_products_refuse_an_out_of_another_dtype(op, args):
    # The sanitizer fuzz run: a float64 out= made the float32 product run as float64 over
    # float32 memory (reads past its end). PyTorch raises.
    out = F.empty(0, dtype=F.float64)
    with pytest.raises(RuntimeError, match="expected out tensor to have dtype float32"):
        getattr(F, op)(*args(), out=out)
