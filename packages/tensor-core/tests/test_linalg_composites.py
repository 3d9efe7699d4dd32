"""flambeau.linalg's Python-composed functions (cond, diagonal, householder_product,
matrix_exp, multi_dot, tensorinv, tensorsolve, vander, vecdot) against NumPy/SciPy,
with PyTorch's errors. Their gradients: packages/autograd/tests/test_linalg_composites_grad.py.
"""

import math

import numpy as np
import pytest

import flambeau
from flambeau import linalg as LA

rng = np.random.default_rng(7)


def t(x):
    return flambeau.from_numpy(np.array(x))


def randn(*shape, complex_=False):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if complex_ else x


# ---- cond -----------------------------------------------------------------------------------

ORDS = [None, 2, -2, "fro", "nuc", math.inf, -math.inf, 1, -1]


@pytest.mark.parametrize("p", ORDS, ids=str)
@pytest.mark.parametrize("complex_", [False, True])
def test_cond_matches_numpy(p, complex_):
    a = randn(2, 4, 4, complex_=complex_)
    got = LA.cond(t(a), p)
    np.testing.assert_allclose(got.numpy(), np.linalg.cond(a, p), rtol=1e-10)
    assert got.dtype == flambeau.float64


@pytest.mark.parametrize("p", [None, 2, -2])
def test_cond_of_rectangular_matrices_by_singular_values(p):
    a = randn(3, 5)
    np.testing.assert_allclose(LA.cond(t(a), p).numpy(), np.linalg.cond(a, p), rtol=1e-10)


@pytest.mark.parametrize("p", ["fro", "nuc", math.inf, -math.inf, 1, -1])
def test_cond_of_singular_matrix_is_infinite(p):
    a = np.stack([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]])
    got = LA.cond(t(a), p).numpy()
    assert np.isfinite(got[0]) and got[1] == math.inf


def test_cond_empty_matrices_are_zero():
    assert LA.cond(flambeau.zeros(0, 0)).item() == 0
    assert LA.cond(flambeau.zeros(2, 0, 0), "nuc").tolist() == [0.0, 0.0]
    assert LA.cond(flambeau.zeros(2, 0, 3)).shape == (2,)


def test_cond_errors():
    a = flambeau.ones(2, 2)
    for p in (3, -1.5, "inf", 0):
        with pytest.raises(RuntimeError, match=f"linalg.cond got an invalid norm type: {p}"):
            LA.cond(a, p)
    with pytest.raises(RuntimeError, match="linalg.cond got an invalid norm type: 3$"):
        LA.cond(a, 3.0)
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        LA.cond(flambeau.ones(3))
    with pytest.raises(
        RuntimeError,
        match=r"linalg.cond\(ord=fro\): A must be batches of square matrices, but they are 2 by 3",
    ):
        LA.cond(flambeau.ones(2, 3), "fro")
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor"):
        LA.cond(flambeau.ones(2, 2, dtype=flambeau.int64))


def test_cond_out():
    out = flambeau.empty(0, dtype=flambeau.float64)
    r = LA.cond(t(np.diag([1.0, 4.0])), 1, out=out)
    assert r is out and out.item() == pytest.approx(4.0)


# ---- diagonal, vecdot, vander ---------------------------------------------------------------


def test_diagonal_is_a_view_over_the_last_two_dims():
    a = t(randn(2, 3, 4))
    d = LA.diagonal(a)
    np.testing.assert_array_equal(d.numpy(), np.diagonal(a.numpy(), 0, -2, -1))
    d[0, 0] = 100.0
    assert a[0, 0, 0].item() == 100.0
    np.testing.assert_array_equal(
        LA.diagonal(a, offset=-1, dim1=0, dim2=2).numpy(), np.diagonal(a.numpy(), -1, 0, 2)
    )
    with pytest.raises(TypeError):
        LA.diagonal(a, 1)  # offset is keyword-only, as PyTorch's


@pytest.mark.parametrize(
    "sx,sy,dim", [((3,), (3,), -1), ((2, 3), (4, 1, 3), -1), ((2, 3), (2, 3), 0), ((), (), -1)]
)
def test_vecdot_conjugates_x_and_broadcasts(sx, sy, dim):
    x, y = randn(*sx, complex_=True), randn(*sy, complex_=True)
    want = np.sum(np.conj(x) * y, axis=dim) if sx else np.conj(x) * y
    got = LA.vecdot(t(x), t(y), dim=dim)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    if sx == (3,):
        np.testing.assert_allclose(got.numpy(), np.vecdot(x, y), rtol=1e-12)


def test_vecdot_errors_and_out():
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor.*Got Long"):
        LA.vecdot(flambeau.ones(3, dtype=flambeau.int64), flambeau.ones(3))
    with pytest.raises(
        RuntimeError,
        match="Expected x and y to have the same dtype, but found x of type Float and y of "
        "type Double",
    ):
        LA.vecdot(flambeau.ones(3), flambeau.ones(3, dtype=flambeau.float64))
    with pytest.raises(RuntimeError):
        LA.vecdot(flambeau.ones(2, 3), flambeau.ones(2, 4))
    with pytest.raises(IndexError):
        LA.vecdot(flambeau.ones(2, 3), flambeau.ones(2, 3), dim=2)
    with pytest.raises(TypeError, match="argument 'y'"):
        LA.vecdot(flambeau.ones(2, 3), 3)
    out = flambeau.empty(0)
    assert LA.vecdot(flambeau.ones(2, 3), flambeau.ones(2, 3), out=out) is out
    assert out.tolist() == [3.0, 3.0]


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "complex128", "int8", "int32", "int64", "uint8"]
)
def test_vander_increasing_powers(dtype):
    x = np.array([[1, 2, 3], [0, 5, 2]]).astype(dtype)
    got = LA.vander(t(x), N=4)
    integral = x.dtype.kind in "iu"
    rows = x.astype(np.int64) if integral else x
    np.testing.assert_array_equal(got.numpy(), np.stack([np.vander(r, 4, True) for r in rows]))
    assert got.dtype == (flambeau.int64 if integral else t(x).dtype)
    assert LA.vander(t(x)).shape == (2, 3, 3)  # N defaults to x.shape[-1]


def test_vander_shapes_and_errors():
    assert LA.vander(t(2.0), N=3).tolist() == [[1.0, 2.0, 4.0]]
    assert LA.vander(flambeau.ones(2, 0), N=3).shape == (2, 0, 3)
    for n in (0, 1, -1):
        with pytest.raises(RuntimeError, match="N must be greater than 1."):
            LA.vander(flambeau.ones(2), N=n)
    with pytest.raises(RuntimeError, match="N must be greater than 1."):
        LA.vander(flambeau.ones(1))
    for dt, name in ((flambeau.bool, "Bool"), (flambeau.float16, "Half")):
        with pytest.raises(RuntimeError, match=f"integer tensors, but got {name}"):
            LA.vander(flambeau.ones(3, dtype=dt))
    with pytest.raises(TypeError, match="argument 'N' must be int, not float"):
        LA.vander(flambeau.ones(3), N=2.0)
    with pytest.raises(TypeError):
        LA.vander(flambeau.ones(3), 2)  # N is keyword-only
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        LA.vander([1, 2])


def test_torch_vander_still_decreasing_and_shares_the_powers():
    x = t([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(flambeau.vander(x).numpy(), np.vander(x.numpy()))
    np.testing.assert_array_equal(flambeau.vander(x, 0).numpy().shape, (3, 0))


# ---- matrix_exp, householder_product --------------------------------------------------------


def test_matrix_exp_is_torch_matrix_exp_and_matches_scipy():
    import scipy.linalg

    assert LA.matrix_exp is flambeau.matrix_exp
    # Its own generator: the module's draws depend on which tests a pytest-xdist worker
    # ran before this one.
    a = np.random.default_rng(11).standard_normal((3, 4, 4))
    a[1] *= 20  # needs squaring
    got = LA.matrix_exp(t(a)).numpy()
    for g, x in zip(got, a):
        want = scipy.linalg.expm(x)
        # Scaling and squaring is accurate relative to the result's norm: an entry that
        # cancels to far below the largest gets that absolute error, not a relative one.
        np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-10 * np.abs(want).max())


def test_matrix_exp_nonfinite_matrix_does_not_spoil_the_batch():
    a = np.stack([np.array([[0.0, 1.0], [0.0, 0.0]]), np.full((2, 2), np.nan)])
    got = LA.matrix_exp(t(a)).numpy()
    np.testing.assert_array_equal(got[0], [[1.0, 1.0], [0.0, 1.0]])
    assert np.isnan(got[1]).all()


def test_matrix_exp_errors():
    with pytest.raises(RuntimeError, match="linalg.matrix_exp: A must be batches of square"):
        LA.matrix_exp(flambeau.ones(2, 3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        LA.matrix_exp(flambeau.ones(3))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor.*Long"):
        LA.matrix_exp(flambeau.ones(0, 0, dtype=flambeau.int64))


@pytest.mark.parametrize("complex_", [False, True])
def test_householder_product_is_q_of_lapack_geqrf(complex_):
    import scipy.linalg

    a = randn(2, 5, 3, complex_=complex_)
    h0, tau0 = flambeau.geqrf(t(a[0]))  # torch.orgqr: the same product under LAPACK's name
    assert flambeau.equal(flambeau.orgqr(h0, tau0), LA.householder_product(h0, tau0))
    for i in range(2):
        (h, tau), _ = scipy.linalg.qr(a[i], mode="raw")
        q = LA.householder_product(t(h), t(tau)).numpy()
        q_ref, r_ref = np.linalg.qr(a[i])
        # Q from the same reflectors: Q R = A with R from the packed factor's upper part.
        np.testing.assert_allclose(q @ np.triu(h[:3]), a[i], atol=1e-12)
        np.testing.assert_allclose(np.abs(q), np.abs(q_ref), atol=1e-12)
    batch_h = np.stack([scipy.linalg.qr(x, mode="raw")[0][0] for x in a])
    batch_tau = np.stack([scipy.linalg.qr(x, mode="raw")[0][1] for x in a])
    got = LA.householder_product(t(batch_h), t(batch_tau)).numpy()
    np.testing.assert_allclose(got @ np.triu(batch_h[:, :3]), a, atol=1e-12)
    # fewer reflectors than columns: the trailing columns stay those of the identity
    q2 = LA.householder_product(t(batch_h[0]), t(batch_tau[0][:0])).numpy()
    np.testing.assert_array_equal(q2, np.eye(5, 3))


def test_householder_product_errors():
    a, tau = flambeau.ones(4, 3, dtype=flambeau.float64), flambeau.ones(2, dtype=flambeau.float64)
    name = "torch.linalg.householder_product: "
    cases = [
        ((a.mT, tau), "input.shape\\[-2\\] must be greater than or equal to input.shape\\[-1\\]"),
        (
            (a, flambeau.ones(4, dtype=flambeau.float64)),
            "input.shape\\[-1\\] must be greater than or equal to tau",
        ),
        ((a, tau.float()), "tau dtype Float does not match input dtype Double"),
        ((flambeau.ones(3), tau), "input must have at least 2 dimensions."),
        (
            (a, flambeau.ones(2, 2, dtype=flambeau.float64)),
            "Expected tau to have one dimension less",
        ),
        (
            (a.expand(2, 4, 3), flambeau.ones(3, 2, dtype=flambeau.float64)),
            "Expected batch dimensions of tau .* but got \\[3\\]",
        ),
    ]
    for args, msg in cases:
        with pytest.raises(RuntimeError, match=name + msg):
            LA.householder_product(*args)
    with pytest.raises(NotImplementedError, match="'Long'"):
        LA.householder_product(a.long(), tau.long())


# ---- multi_dot ------------------------------------------------------------------------------


def _brute_force_cost(dims):
    """The fewest multiply-adds over every parenthesization."""
    n = len(dims) - 1
    if n == 1:
        return 0
    return min(
        _brute_force_cost(dims[: k + 2])
        + _brute_force_cost(dims[k + 1 :])
        + dims[0] * dims[k + 1] * dims[-1]
        for k in range(n - 1)
    )


def _cost_of(split, dims, i, j):
    if i == j:
        return 0
    k = split[i][j]
    return (
        _cost_of(split, dims, i, k)
        + _cost_of(split, dims, k + 1, j)
        + (dims[i] * dims[k + 1] * dims[j + 1])
    )


@pytest.mark.parametrize(
    "dims", [(10, 100, 5, 50), (50, 5, 100, 10), (3, 7, 2, 9, 4), (30, 35, 15, 5, 10, 20, 25)]
)
def test_multi_dot_order_is_optimal(dims):
    from flambeau._linalg_composites import _chain_order

    split = _chain_order(list(dims))
    assert _cost_of(split, dims, 0, len(dims) - 2) == _brute_force_cost(list(dims))


@pytest.mark.parametrize(
    "shapes",
    [
        [(2, 3), (3, 4)],
        [(3,), (3,)],
        [(3,), (3, 2), (2,)],
        [(3,), (3, 2), (2, 4)],
        [(2, 3), (3, 4), (4, 5), (5,)],
        [(10, 100), (100, 5), (5, 50)],
        [(2, 0), (0, 3), (3, 2)],
    ],
)
def test_multi_dot_matches_numpy(shapes):
    arrays = [randn(*s) for s in shapes]
    got = LA.multi_dot([t(a) for a in arrays])
    np.testing.assert_allclose(got.numpy(), np.linalg.multi_dot(arrays), rtol=1e-10, atol=1e-12)
    got = LA.multi_dot(tuple(t(a) for a in arrays))
    assert got.shape == np.linalg.multi_dot(arrays).shape


def test_multi_dot_integers_and_out():
    a = [np.arange(6).reshape(2, 3), np.arange(12).reshape(3, 4), np.arange(4).reshape(4, 1)]
    got = LA.multi_dot([t(x) for x in a])
    assert got.dtype == flambeau.int64
    np.testing.assert_array_equal(got.numpy(), np.linalg.multi_dot(a))
    out = flambeau.empty(0, dtype=flambeau.int64)
    assert LA.multi_dot([t(x) for x in a], out=out) is out


def test_multi_dot_errors():
    o = flambeau.ones
    cases = [
        ([o(3)], "expected at least 2 tensors but got 1"),
        ([], "expected at least 2 tensors but got 0"),
        ([o(2, 3, 5), o(5, 2)], "the first tensor must be 1D or 2D but got 3D"),
        ([o(()), o(3)], "the first tensor must be 1D or 2D but got 0D"),
        ([o(2, 3), o(3, 2, 1)], "the last tensor must be 1D or 2D but got 3D"),
        ([o(2, 3), o(3), o(3)], "tensor 1 must be 2D but got 1D"),
        ([o(2, 3), o(4, 2)], r"tensors 0 and 1 with shapes \[2, 3\] and \[4, 2\] cannot be"),
        ([o(3), o(3, 2), o(4)], r"tensors 1 and 2 with shapes \[3, 2\] and \[4\] cannot be"),
        ([o(2, 3), o(3, 2, dtype=flambeau.float64)], "all tensors must have be the same dtype"),
    ]
    for tensors, msg in cases:
        with pytest.raises(RuntimeError, match="multi_dot\\(\\): " + msg):
            LA.multi_dot(tensors)
    with pytest.raises(TypeError, match="must be tuple of Tensors, not Tensor"):
        LA.multi_dot(o(2, 3, 3))
    with pytest.raises(TypeError, match="expected Tensor as element 1"):
        LA.multi_dot([o(2, 3), 3])


# ---- tensorinv, tensorsolve -----------------------------------------------------------------


@pytest.mark.parametrize("shape,ind", [((4, 6, 8, 3), 2), ((4, 6, 24), 2), ((6, 2, 3), 1)])
def test_tensorinv_matches_numpy(shape, ind):
    a = randn(*shape)
    got = LA.tensorinv(t(a), ind=ind)
    want = np.linalg.tensorinv(a, ind=ind)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-8, atol=1e-10)


def test_tensorinv_errors():
    with pytest.raises(RuntimeError, match="Expected a strictly positive integer for 'ind'"):
        LA.tensorinv(flambeau.ones(2, 2), ind=0)
    with pytest.raises(
        RuntimeError,
        match=r"prod\(self.shape\[ind:\]\) == prod\(self.shape\[:ind\]\), but got 144 != 4",
    ):
        LA.tensorinv(flambeau.ones(4, 6, 8, 3), ind=1)
    with pytest.raises(RuntimeError, match="at most"):
        LA.tensorinv(flambeau.ones(4, 2, 2), ind=4)
    with pytest.raises(TypeError, match="argument 'ind' \\(position 2\\) must be int, not float"):
        LA.tensorinv(flambeau.ones(4, 2, 2), 1.0)
    with pytest.raises(LA.LinAlgError, match="singular"):
        LA.tensorinv(flambeau.zeros(2, 2, 2, 2))


@pytest.mark.parametrize(
    "sa,sb,dims",
    [
        ((2, 3, 6), (2, 3), None),
        ((6, 4, 4, 3, 2), (4, 6), None),
        ((6, 2, 3), (2, 3), (0,)),
        ((2, 3, 6, 4), (2, 6), (1, 3)),
    ],
)
def test_tensorsolve_matches_numpy(sa, sb, dims):
    a, b = randn(*sa), randn(*sb)
    got = LA.tensorsolve(t(a), t(b), dims=dims)
    want = np.linalg.tensorsolve(a, b, axes=dims)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-8, atol=1e-10)


def test_tensorsolve_errors():
    with pytest.raises(RuntimeError, match=r"prod\(self.shape\[other.ndim:\]\) .* but got 18 != 6"):
        LA.tensorsolve(flambeau.ones(2, 3, 6), flambeau.ones(6))
    with pytest.raises(TypeError, match="argument 'dims' must be tuple of ints, not int"):
        LA.tensorsolve(flambeau.ones(2, 3, 6), flambeau.ones(2, 3), dims=0)
    with pytest.raises(LA.LinAlgError, match="The solver failed because the input matrix is"):
        LA.tensorsolve(flambeau.zeros(2, 3, 6), flambeau.ones(2, 3))
    with pytest.raises(IndexError):
        LA.tensorsolve(flambeau.ones(6, 6), flambeau.ones(6), dims=(5,))
