"""LAPACK's failures as PyTorch reports them: flambeau.linalg.LinAlgError (a RuntimeError)
from the functions that raise, and info tensors from the _ex variants (solve_ex,
lu_factor_ex; inv_ex and cholesky_ex are in test_linalg.py)."""

import numpy as np
import pytest

import flambeau
from flambeau import linalg as LA

SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])


def t(x):
    return flambeau.from_numpy(np.array(x))


def batch_with_singular():
    return t(np.stack([np.eye(2), SINGULAR]))


def test_linalg_error_is_a_runtime_error_from_the_core():
    assert issubclass(LA.LinAlgError, RuntimeError)
    assert LA.LinAlgError is flambeau._C._LinAlgError
    assert not hasattr(flambeau, "LinAlgError")  # as torch, only in torch.linalg
    with pytest.raises(RuntimeError):  # callers catching RuntimeError still catch it
        LA.inv(t(SINGULAR))


@pytest.mark.parametrize(
    "call,msg",
    [
        (
            lambda: LA.inv(t(SINGULAR)),
            "linalg.inv: The diagonal element 2 is zero, the inversion could not be "
            "completed because the input matrix is singular.",
        ),
        (
            lambda: LA.inv(batch_with_singular()),
            r"linalg.inv: \(Batch element 1\): The diagonal element 2 is zero",
        ),
        (lambda: LA.inv_ex(t(SINGULAR), check_errors=True), "linalg.inv_ex: The diagonal"),
        (lambda: flambeau.inverse(t(SINGULAR)), "linalg.inv: The diagonal element 2"),
        (lambda: LA.matrix_power(t(SINGULAR), -1), "linalg.inv: The diagonal element 2"),
        (
            lambda: LA.cholesky(-flambeau.eye(2)),
            r"linalg.cholesky: The factorization could not be completed because the input is "
            r"not positive-definite \(the leading minor of order 1 is not positive-definite\).",
        ),
        (
            lambda: LA.cholesky_ex(-flambeau.eye(2), check_errors=True),
            "linalg.cholesky_ex: The factorization could not be completed",
        ),
        (
            lambda: LA.solve(t(SINGULAR), flambeau.ones(2, dtype=flambeau.float64)),
            "torch.linalg.solve: The solver failed because the input matrix is singular.",
        ),
        (
            lambda: LA.solve(batch_with_singular(), flambeau.ones(2, 1, dtype=flambeau.float64)),
            r"torch.linalg.solve: \(Batch element 1\): The solver failed",
        ),
        (
            lambda: flambeau.cholesky_inverse(flambeau.zeros(2, 2)),
            "cholesky_inverse: The diagonal element 1 is zero, the inversion could not be",
        ),
        (
            lambda: flambeau.cholesky_inverse(t(np.stack([np.eye(2), [[1.0, 0.0], [1.0, 0.0]]]))),
            r"cholesky_inverse: \(Batch element 1\): The diagonal element 2 is zero",
        ),
    ],
)
def test_lapack_failures_raise_linalg_error(call, msg):
    with pytest.raises(LA.LinAlgError, match=msg):
        call()


# ---- solve_ex -------------------------------------------------------------------------------


def test_solve_ex_returns_solution_and_info():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((3, 2))
    r = LA.solve_ex(t(a), t(b))
    assert type(r).__name__ == "linalg_solve_ex" and r._fields == ("result", "info")
    np.testing.assert_allclose(r.result.numpy(), np.linalg.solve(a, b))
    assert r.info.dtype == flambeau.int32 and r.info.shape == () and r.info.item() == 0


def test_solve_ex_singular_gives_info_not_an_error():
    r = LA.solve_ex(batch_with_singular(), flambeau.ones(2, 2, 1, dtype=flambeau.float64))
    assert r.info.tolist() == [0, 2]
    np.testing.assert_allclose(r.result[0].numpy(), np.ones((2, 1)))
    assert not np.isfinite(r.result[1].numpy()).all()  # LAPACK's division by the zero pivot
    with pytest.raises(
        LA.LinAlgError,
        match=r"torch.linalg.solve_ex: \(Batch element 1\): The solver failed because the "
        "input matrix is singular.",
    ):
        LA.solve_ex(batch_with_singular(), t(np.ones((2, 1))), check_errors=True)


def test_solve_ex_info_has_the_batch_shape_of_a():
    eye = flambeau.eye(3, dtype=flambeau.float64)
    assert LA.solve_ex(eye, flambeau.ones(4, 3, 1, dtype=flambeau.float64)).info.shape == ()
    r = LA.solve_ex(eye.expand(4, 1, 3, 3), flambeau.ones(5, 3, 2, dtype=flambeau.float64))
    assert r.info.shape == (4, 1) and r.result.shape == (4, 5, 3, 2)
    r = LA.solve_ex(eye.expand(4, 3, 3), flambeau.ones(3, dtype=flambeau.float64))
    assert r.info.shape == (4,) and r.result.shape == (4, 3)


def test_solve_left_false_and_vector_messages():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((4, 3))
    x = LA.solve_ex(t(a), t(b), left=False).result.numpy()
    np.testing.assert_allclose(x @ a, np.broadcast_to(b, (2, 4, 3)), atol=1e-12)
    with pytest.raises(
        RuntimeError,
        match=r"linalg.solve: Incompatible shapes of A and B for the equation "
        r"XA = B \(3x3 and 3x1\)",
    ):
        LA.solve(t(a[0]), t(b[0]), left=False)
    with pytest.raises(RuntimeError, match="Vector broadcasting of the left hand side is not"):
        LA.solve(flambeau.eye(1), flambeau.ones(1), left=False)
    with pytest.raises(RuntimeError, match=r"equation AX = B \(3x3 and 2x1\)"):
        LA.solve_ex(t(a[0]), flambeau.ones(2, 1, dtype=flambeau.float64))


def test_solve_ex_out():
    outs = (flambeau.empty(0), flambeau.empty(0, dtype=flambeau.int32))
    r = LA.solve_ex(flambeau.eye(3), flambeau.ones(3, 2), out=outs)
    assert r.result is outs[0] and r.info is outs[1] and outs[1].shape == ()
    with pytest.raises(RuntimeError, match="dtype"):
        LA.solve_ex(flambeau.eye(3), flambeau.ones(3, 2), out=(outs[0], flambeau.empty(0)))


# ---- lu_factor_ex ---------------------------------------------------------------------------


def test_lu_factor_ex_matches_scipy_and_reports_zero_pivots():
    import scipy.linalg  # after flambeau: see the note in optable/linalg.py

    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 4))
    r = LA.lu_factor_ex(t(a))
    assert r._fields == ("LU", "pivots", "info")
    lu, piv = scipy.linalg.lu_factor(a)
    np.testing.assert_allclose(r.LU.numpy(), lu, atol=1e-12)
    np.testing.assert_array_equal(r.pivots.numpy(), piv + 1)
    assert r.info.item() == 0
    r = LA.lu_factor_ex(t(SINGULAR))
    assert r.info.item() == 2 and r.pivots.tolist() == [2, 2]
    assert LA.lu_factor_ex(flambeau.zeros(2, 3, 3)).info.tolist() == [1, 1]
    assert LA.lu_factor_ex(t([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])).info.item() == 2


def test_lu_factor_of_singular_matrix_raises_runtime_error_not_linalg_error():
    msg = (
        "U[2,2] is zero and using it on lu_solve would result in a division by zero. If you "
        "still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
        "linalg.lu_factor_ex(A, pivot)"
    )
    for call, prefix in [
        (lambda: LA.lu_factor(t(SINGULAR)), "torch.linalg.lu_factor: "),
        (lambda: LA.lu_factor_ex(t(SINGULAR), check_errors=True), "torch.linalg.lu_factor_ex: "),
    ]:
        with pytest.raises(RuntimeError) as e:
            call()
        assert str(e.value) == prefix + msg
        assert not isinstance(e.value, LA.LinAlgError)
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): U\[2,2\] is zero"):
        LA.lu_factor(batch_with_singular())
    # torch.lu keeps factoring singular matrices, with their infos
    LU, piv, infos = flambeau.lu(batch_with_singular(), get_infos=True)
    assert infos.tolist() == [0, 2]


def test_lu_factor_ex_errors_and_out():
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        LA.lu_factor_ex(flambeau.eye(3), pivot=False)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        LA.lu_factor_ex(flambeau.ones(3))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor"):
        LA.lu_factor_ex(flambeau.ones(3, 3, dtype=flambeau.int64))
    outs = (
        flambeau.empty(0),
        flambeau.empty(0, dtype=flambeau.int32),
        flambeau.empty(0, dtype=flambeau.int32),
    )
    r = LA.lu_factor_ex(flambeau.eye(3), out=outs)
    assert all(x is y for x, y in zip(r, outs)) and outs[1].tolist() == [1, 2, 3]
