"""Errors and out= of the matrix products."""

import numpy as np
import pytest

import flambeau


def test_matmul_shape_mismatch_names_both_shapes():
    with pytest.raises(
        RuntimeError,
        match=r"matmul: shapes \(2, 3\) and \(4, 5\) cannot be "
        r"multiplied \(3 != 4\)",
    ):
        flambeau.ones(2, 3) @ flambeau.ones(4, 5)


def test_matmul_needs_1d_operands():
    with pytest.raises(RuntimeError, match="at least 1D"):
        flambeau.matmul(flambeau.ones(()), flambeau.ones(3))


def test_matmul_dtype_mismatch():
    with pytest.raises(RuntimeError, match="same dtype"):
        flambeau.ones(2, 2) @ flambeau.ones(2, 2, dtype=flambeau.float64)


def test_mm_out_is_written_and_returned():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = flambeau.empty(0)
    r = flambeau.mm(flambeau.from_numpy(a), flambeau.from_numpy(a.T.copy()), out=out)
    assert r is out
    np.testing.assert_allclose(out.numpy(), a @ a.T)


def test_matmul_large_float32_matches_numpy():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((130, 70)).astype(np.float32)
    b = rng.standard_normal((70, 90)).astype(np.float32)
    np.testing.assert_allclose(
        (flambeau.from_numpy(a) @ flambeau.from_numpy(b)).numpy(), a @ b, rtol=1e-4, atol=1e-4
    )
