"""Errors and out= of the matrix products; flambeau.linalg and the GEMM-based products:
errors, out=/in-place, and modes the table rows do not cover."""

import math

import numpy as np
import pytest

import flambeau
from flambeau import linalg as LA


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


def t(x):
    return flambeau.from_numpy(np.array(x))  # a copy: in-place ops must not touch x


def rnd(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(dtype)


# torch.linalg's public names in PyTorch 2.13.
TORCH_LINALG = """LinAlgError cholesky cholesky_ex cond cross det diagonal eig eigh eigvals
    eigvalsh householder_product inv inv_ex ldl_factor ldl_factor_ex ldl_solve lstsq lu
    lu_factor lu_factor_ex lu_solve matmul matrix_exp matrix_norm matrix_power matrix_rank
    multi_dot norm pinv qr slogdet solve solve_ex solve_triangular svd svdvals tensorinv
    tensorsolve vander vecdot vector_norm""".split()


def test_namespace_matches_pytorch_names():
    assert flambeau.linalg is LA
    assert sorted(LA.__all__) == sorted(TORCH_LINALG)
    for name in LA.__all__:
        assert callable(getattr(LA, name)), name
    lapack_ops = {r["name"] for r in flambeau.ops_table() if r["category"] == "linalg_lapack"}
    exported = {"linalg_" + n for n in LA.__all__}
    assert lapack_ops <= exported


def test_inv_singular_raises_like_pytorch():
    a = t(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(
        RuntimeError,
        match="linalg.inv: The diagonal element 2 is zero, the "
        "inversion could not be completed because the input matrix is singular.",
    ):
        LA.inv(a)
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): The diagonal element 2"):
        LA.inv(t(np.stack([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]])))
    inv, info = LA.inv_ex(a)
    assert info.item() == 2
    with pytest.raises(RuntimeError, match="singular"):
        LA.inv_ex(a, check_errors=True)


def test_solve_singular_and_shape_errors():
    with pytest.raises(
        RuntimeError, match="linalg.solve: The solver failed because the input matrix is singular"
    ):
        LA.solve(t(np.zeros((2, 2))), t(np.ones((2, 1))))
    with pytest.raises(
        RuntimeError, match="A must be batches of square matrices, but they are 2 by 3 matrices"
    ):
        LA.solve(t(rnd(2, 3)), t(rnd(2, 1)))
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        LA.solve(t(rnd(3, 3) + 3 * np.eye(3)), t(rnd(2, 1)))
    with pytest.raises(RuntimeError, match="same dtype"):
        LA.solve(t(rnd(2, 2)), t(rnd(2, 2, dtype=np.float32)))


def test_cholesky_not_positive_definite_names_the_minor():
    a = np.eye(3)
    a[1, 1] = -1.0
    with pytest.raises(
        RuntimeError,
        match=r"linalg.cholesky: The factorization could not be "
        r"completed because the input is not positive-definite \(the leading "
        r"minor of order 2 is not positive-definite\).",
    ):
        LA.cholesky(t(a))
    L, info = LA.cholesky_ex(t(a))
    assert info.item() == 2


@pytest.mark.parametrize(
    "fn",
    [LA.det, LA.inv, LA.cholesky, LA.eigh, LA.eig, LA.slogdet, lambda a: LA.matrix_power(a, 2)],
    ids=["det", "inv", "cholesky", "eigh", "eig", "slogdet", "matrix_power"],
)
def test_non_square_raises_naming_shapes(fn):
    with pytest.raises(RuntimeError, match="2 by 3"):
        fn(t(rnd(2, 3)))


@pytest.mark.parametrize("fn", [LA.det, LA.inv, LA.svd, LA.qr, LA.cholesky, LA.eigvalsh])
def test_integer_input_raises(fn):
    with pytest.raises(
        RuntimeError, match="Expected a floating point or complex tensor as input. Got Long"
    ):
        fn(flambeau.ones(2, 2, dtype=flambeau.int64))


def test_one_dim_input_raises():
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        LA.det(t(rnd(3)))


def test_out_and_inplace_variants():
    a, b = rnd(3, 3) + 3 * np.eye(3), rnd(3, 2)
    out = flambeau.empty(0, dtype=flambeau.float64)
    r = LA.solve(t(a), t(b), out=out)
    assert r is out
    np.testing.assert_allclose(out.numpy(), np.linalg.solve(a, b), rtol=1e-10)
    out = flambeau.empty(0, dtype=flambeau.float64)
    LA.inv(t(a), out=out)
    np.testing.assert_allclose(out.numpy(), np.linalg.inv(a), rtol=1e-10)
    # addmm family: in place and out=
    i, m1, m2 = rnd(3, 2), rnd(3, 4), rnd(4, 2)
    x = t(i)
    x.addmm_(t(m1), t(m2), beta=0.5, alpha=2)
    np.testing.assert_allclose(x.numpy(), 0.5 * i + 2 * m1 @ m2, rtol=1e-12)
    out = flambeau.empty(3, 2, dtype=flambeau.float64)
    flambeau.addmm(t(i), t(m1), t(m2), out=out)
    np.testing.assert_allclose(out.numpy(), i + m1 @ m2, rtol=1e-12)
    with pytest.raises(RuntimeError):
        t(rnd(2)).addmm_(t(m1), t(m2))  # broadcast input cannot hold the product in place
    b1, b2 = rnd(2, 3, 4), rnd(2, 4, 5)
    y = t(rnd(2, 3, 5))
    ref = y.numpy() + b1 @ b2
    y.baddbmm_(t(b1), t(b2))
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-12)


def test_addmm_beta_zero_ignores_nan_input():
    i = np.full((2, 2), np.nan)
    r = flambeau.addmm(t(i), t(np.eye(2)), t(np.eye(2)), beta=0)
    np.testing.assert_array_equal(r.numpy(), np.eye(2))


def test_einsum_list_and_varargs_forms_and_errors():
    a, b = rnd(2, 3), rnd(3, 4)
    ref = a @ b
    np.testing.assert_allclose(flambeau.einsum("ij,jk->ik", t(a), t(b)).numpy(), ref)
    np.testing.assert_allclose(flambeau.einsum("ij,jk->ik", [t(a), t(b)]).numpy(), ref)
    with pytest.raises(RuntimeError, match="more operands"):
        flambeau.einsum("ij->ij", t(a), t(b))
    with pytest.raises(RuntimeError, match="does not match the number of dimensions"):
        flambeau.einsum("ijk->i", t(a))
    with pytest.raises(RuntimeError, match="output subscript k does not appear"):
        flambeau.einsum("ij->k", t(a))
    with pytest.raises(RuntimeError, match="subscripts must be in"):
        flambeau.einsum("i1->i", t(rnd(2, 2)))


def test_einsum_is_batched_gemm_not_loops():
    # a contraction over a large shared index stays fast (one bmm)
    a, b = rnd(8, 64, 64), rnd(8, 64, 64)
    np.testing.assert_allclose(
        flambeau.einsum("bij,bjk->bik", t(a), t(b)).numpy(), a @ b, rtol=1e-10
    )


def test_tensordot_pair_of_lists():
    a, b = rnd(3, 4, 2), rnd(4, 3)
    r = flambeau.tensordot(t(a), t(b), ([1, 0], [0, 1]))
    np.testing.assert_allclose(r.numpy(), np.tensordot(a, b, axes=([1, 0], [0, 1])), rtol=1e-12)
    with pytest.raises(RuntimeError, match="contracted dimensions need to match"):
        flambeau.tensordot(t(a), t(b), ([0], [0]))


def test_cross_errors():
    with pytest.raises(RuntimeError, match="must have length 3"):
        LA.cross(t(rnd(2, 4)), t(rnd(2, 4)))


def test_qr_complete_and_r_modes():
    a = rnd(4, 2)
    q, r = LA.qr(t(a), mode="complete")
    assert tuple(q.shape) == (4, 4) and tuple(r.shape) == (4, 2)
    np.testing.assert_allclose((q @ r).numpy(), a, atol=1e-12)
    np.testing.assert_allclose((q.transpose(0, 1) @ q).numpy(), np.eye(4), atol=1e-12)
    q, r = LA.qr(t(a), mode="r")
    assert q.numel() == 0
    np.testing.assert_allclose(np.abs(r.numpy()), np.abs(np.linalg.qr(a, mode="r")), atol=1e-12)
    with pytest.raises(RuntimeError, match="unrecognized mode"):
        LA.qr(t(a), mode="full")


def test_svd_full_matrices_are_orthogonal():
    for shape in [(4, 2), (2, 5), (2, 3, 3)]:
        a = rnd(*shape)
        u, s, vh = LA.svd(t(a))
        m, n = shape[-2:]
        assert tuple(u.shape[-2:]) == (m, m) and tuple(vh.shape[-2:]) == (n, n)
        np.testing.assert_allclose(
            (u.transpose(-2, -1) @ u).numpy(), np.broadcast_to(np.eye(m), u.shape), atol=1e-12
        )
        np.testing.assert_allclose(
            (vh @ vh.transpose(-2, -1)).numpy(), np.broadcast_to(np.eye(n), vh.shape), atol=1e-12
        )
    u, s, vh = LA.svd(t(np.zeros((0, 3))))
    assert tuple(u.shape) == (0, 0) and tuple(s.shape) == (0,)
    np.testing.assert_array_equal(vh.numpy(), np.eye(3))


def test_lu_factor_rectangular_and_lu():
    import scipy.linalg  # after flambeau: see the note in optable/linalg.py

    for shape in [(3, 2), (2, 3)]:
        a = rnd(*shape)
        lu, piv = LA.lu_factor(t(a))
        ref_lu, ref_piv = scipy.linalg.lu_factor(a) if shape[0] == shape[1] else (None, None)
        p, l_, u = LA.lu(t(a))
        np.testing.assert_allclose((p @ l_ @ u).numpy(), a, atol=1e-12)
        sp, sl, su = scipy.linalg.lu(a)
        np.testing.assert_allclose(l_.numpy(), sl, atol=1e-12)
        np.testing.assert_allclose(u.numpy(), su, atol=1e-12)
        assert piv.dtype == flambeau.int32
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        LA.lu_factor(t(rnd(2, 2)), pivot=False)


def test_eigh_reads_one_triangle():
    a = rnd(3, 3)
    wl = LA.eigvalsh(t(a)).numpy()
    wu = LA.eigvalsh(t(a), UPLO="U").numpy()
    np.testing.assert_allclose(wl, np.linalg.eigvalsh(a, UPLO="L"), atol=1e-12)
    np.testing.assert_allclose(wu, np.linalg.eigvalsh(a, UPLO="U"), atol=1e-12)


def test_eig_of_real_matrix_with_complex_pairs():
    a = np.array([[0.0, -1.0], [1.0, 0.0]])
    w, v = LA.eig(t(a))
    assert w.dtype == flambeau.complex128 and v.dtype == flambeau.complex128
    np.testing.assert_allclose(np.sort_complex(w.numpy()), [-1j, 1j], atol=1e-12)
    np.testing.assert_allclose(a @ v.numpy(), v.numpy() * w.numpy()[None, :], atol=1e-12)


def test_lstsq_returns_pytorch_fields():
    a, b = rnd(5, 3), rnd(5, 2)
    r = LA.lstsq(t(a), t(b), driver="gelsd")
    x, res, rank, sv = np.linalg.lstsq(a, b, rcond=None)
    np.testing.assert_allclose(r.solution.numpy(), x, atol=1e-12)
    np.testing.assert_allclose(r.residuals.numpy(), res, atol=1e-12)
    assert r.rank.item() == rank and r.rank.dtype == flambeau.int64
    np.testing.assert_allclose(r.singular_values.numpy(), sv, atol=1e-12)
    # underdetermined: minimum-norm solution, no residuals
    a2 = rnd(2, 4)
    r2 = LA.lstsq(t(a2), t(rnd(2, 1)))
    assert r2.residuals.numel() == 0
    assert r2.solution.shape == (4, 1)
    assert LA.lstsq(t(a), t(b), driver="gelsy").singular_values.numel() == 0
    # PyTorch's CPU default (gelsy) gives neither singular values nor residuals
    default = LA.lstsq(t(a), t(b))
    np.testing.assert_allclose(default.solution.numpy(), x, atol=1e-12)
    assert default.residuals.numel() == 0 and default.singular_values.numel() == 0
    # a vector right-hand side: a vector solution, residuals of shape (1,)
    rv = LA.lstsq(t(a), t(b[:, 0]), driver="gelsd")
    assert rv.solution.shape == (3,) and rv.residuals.shape == (1,)
    np.testing.assert_allclose(rv.residuals.numpy(), res[:1], atol=1e-12)
    with pytest.raises(RuntimeError, match="input.dim"):
        LA.lstsq(t(a), t(rnd(2, 5, 2)))
    with pytest.raises(RuntimeError, match="driver"):
        LA.lstsq(t(a), t(b), driver="bogus")


def test_matrix_norm_errors_and_vector_norm_dtype():
    with pytest.raises(RuntimeError, match="Order"):
        LA.matrix_norm(t(rnd(2, 2)), 3)
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor"):
        LA.vector_norm(flambeau.ones(3, dtype=flambeau.int64))
    r = LA.vector_norm(t(rnd(3)), dtype=flambeau.float32)
    assert r.dtype == flambeau.float32
    assert LA.norm(t(np.array([3.0, 4.0]))).item() == pytest.approx(5.0)
    assert LA.vector_norm(t(np.array([3.0, -4.0])), ord=math.inf).item() == 4.0


def test_matrix_rank_and_pinv_tolerances():
    a = np.diag([1.0, 1e-3, 1e-17])
    assert LA.matrix_rank(t(a)).item() == 2
    assert LA.matrix_rank(t(a), atol=1e-2).item() == 1
    assert LA.matrix_rank(t(a), rtol=1e-2).item() == 1
    assert LA.matrix_rank(t(a), hermitian=True).item() == 2
    p = LA.pinv(t(a), atol=1e-2).numpy()
    np.testing.assert_allclose(p, np.diag([1.0, 0, 0]), atol=1e-12)


def test_matrix_power_negative_and_zero():
    a = rnd(3, 3) + 3 * np.eye(3)
    np.testing.assert_allclose(
        LA.matrix_power(t(a), -2).numpy(), np.linalg.matrix_power(a, -2), rtol=1e-10
    )
    np.testing.assert_array_equal(LA.matrix_power(t(a), 0).numpy(), np.eye(3))
    ints = flambeau.tensor([[1, 1], [0, 1]])
    assert flambeau.matrix_power(ints, 5).tolist() == [[1, 5], [0, 1]]


def test_svd_driver_keyword_rejected_on_cpu():
    with pytest.raises(RuntimeError, match="driver"):
        LA.svd(t(rnd(2, 2)), driver="gesvd")


def test_vdot_conjugates_the_first_argument():
    a = np.array([1 + 2j, 3 - 1j])
    b = np.array([2 - 1j, 1 + 1j])
    assert complex(flambeau.vdot(t(a), t(b)).item()) == pytest.approx(complex(np.vdot(a, b)))


def test_large_batched_decompositions_release_and_agree():
    a = rnd(4, 64, 64)
    spd = a @ np.swapaxes(a, -1, -2) + 64 * np.eye(64)
    L = LA.cholesky(t(spd)).numpy()
    np.testing.assert_allclose(L @ np.swapaxes(L, -1, -2), spd, rtol=1e-10)
    s = LA.svdvals(t(a)).numpy()
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-10)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("m,n,k", [(301, 67, 129), (37, 450, 64), (1, 700, 400)])
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_gemm_cut_into_blocks_matches_numpy(threads, batch, m, n, k, trans_a, trans_b):
    # Products big enough to be cut into row or column blocks over the threads,
    # with transposed (column-major) operands.
    rng = np.random.default_rng(0)
    a = rng.standard_normal((batch, k, m) if trans_a else (batch, m, k))
    b = rng.standard_normal((batch, n, k) if trans_b else (batch, k, n))
    fa, fb = flambeau.from_numpy(a), flambeau.from_numpy(b)
    if trans_a:
        a, fa = a.swapaxes(1, 2), fa.transpose(1, 2)
    if trans_b:
        b, fb = b.swapaxes(1, 2), fb.transpose(1, 2)
    before = flambeau.get_num_threads()
    flambeau.set_num_threads(threads)
    try:
        got = flambeau.bmm(fa, fb).numpy()
        got32 = flambeau.bmm(fa.float(), fb.float()).numpy()
    finally:
        flambeau.set_num_threads(before)
    np.testing.assert_allclose(got, a @ b, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got32, a @ b, rtol=1e-4, atol=1e-3)


def test_tensordot_takes_pytorch_dims_forms():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4, 5)), rng.standard_normal((4, 5, 6))
    fa, fb = flambeau.from_numpy(a), flambeau.from_numpy(b)
    want = np.tensordot(a, b, axes=([1, 2], [0, 1]))
    np.testing.assert_allclose(flambeau.tensordot(fa, fb, dims=([1, 2], [0, 1])).numpy(), want)
    np.testing.assert_allclose(flambeau.tensordot(fa, fb, ([1, 2], [0, 1])).numpy(), want)
    np.testing.assert_allclose(
        flambeau.tensordot(fa, fb, dims=flambeau.tensor([[1, 2], [0, 1]])).numpy(), want
    )
    np.testing.assert_allclose(flambeau.tensordot(fa, fb, dims=2).numpy(), want)
    np.testing.assert_allclose(
        flambeau.tensordot(fa, fb, dims=(1, 0)).numpy(), np.tensordot(a, b, axes=(1, 0))
    )
    with pytest.raises(RuntimeError, match="tensordot expects dims"):
        flambeau.tensordot(fa, fb, dims="x")
