"""PyTorch's top-level linear algebra (flambeau._legacy_linalg) against NumPy/SciPy/LAPACK,
and the assorted top-level functions of flambeau._misc_functions and _nn_ops."""

import warnings

import numpy as np
import pytest
import scipy.linalg as sl

import flambeau as torch

rng = np.random.default_rng(2)


def t(a):
    return torch.tensor(np.asarray(a))


def spd(n, batch=()):
    m = rng.standard_normal(batch + (n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def test_det_family():
    a = rng.standard_normal((2, 4, 4))
    np.testing.assert_allclose(torch.det(t(a)).numpy(), np.linalg.det(a))
    sign, logabs = torch.slogdet(t(a))
    nsign, nlog = np.linalg.slogdet(a)
    np.testing.assert_allclose(sign.numpy(), nsign)
    np.testing.assert_allclose(logabs.numpy(), nlog)
    assert torch.logdet(torch.tensor([[0.0, 1], [1, 0]])).isnan().item()
    assert torch.logdet(torch.zeros(2, 2)).item() == float("-inf")
    p = spd(3)
    np.testing.assert_allclose(t(p).logdet().item(), np.log(np.linalg.det(p)))
    np.testing.assert_allclose(torch.inverse(t(a)).numpy(), np.linalg.inv(a))
    r = rng.standard_normal((5, 3))
    np.testing.assert_allclose(torch.pinverse(t(r)).numpy(), np.linalg.pinv(r), atol=1e-12)


def test_matrix_exp_matches_scipy():
    for scale in (0.1, 1.0, 20.0):
        a = rng.standard_normal((3, 4, 4)) * scale
        want = np.stack([sl.expm(m) for m in a])
        got = torch.matrix_exp(t(a)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10 * np.abs(want).max())
    c = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    np.testing.assert_allclose(t(c).matrix_exp().numpy(), sl.expm(c), rtol=1e-10)
    assert torch.matrix_exp(torch.zeros(0, 0)).shape == (0, 0)
    with pytest.raises(RuntimeError, match="square"):
        torch.matrix_exp(torch.zeros(2, 3))


def test_cholesky_family():
    a = spd(4, (2,))
    b = rng.standard_normal((2, 4, 3))
    with pytest.warns(UserWarning, match="deprecated"):
        L = torch.cholesky(t(a))
    np.testing.assert_allclose(L.numpy(), np.linalg.cholesky(a))
    U = torch.linalg.cholesky(t(a), upper=True)
    np.testing.assert_allclose(torch.cholesky_solve(t(b), L).numpy(), np.linalg.solve(a, b))
    np.testing.assert_allclose(
        torch.cholesky_solve(t(b), U, upper=True).numpy(), np.linalg.solve(a, b)
    )
    np.testing.assert_allclose(torch.cholesky_inverse(L).numpy(), np.linalg.inv(a))
    np.testing.assert_allclose(U.cholesky_inverse(upper=True).numpy(), np.linalg.inv(a))


def test_lu_family():
    a = rng.standard_normal((2, 4, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        LU, piv = torch.lu(t(a))
        LU2, piv2, infos = torch.lu(t(a), get_infos=True)
    lu_ref, piv_ref = sl.lu_factor(a[0])
    np.testing.assert_allclose(LU[0].numpy(), lu_ref)
    np.testing.assert_array_equal(piv[0].numpy(), piv_ref + 1)
    assert infos.tolist() == [0, 0] and infos.dtype == torch.int32
    P, L, U = torch.lu_unpack(LU, piv)
    np.testing.assert_allclose((P @ L @ U).numpy(), a, atol=1e-12)
    b = rng.standard_normal((2, 4, 2))
    np.testing.assert_allclose(torch.lu_solve(t(b), LU, piv).numpy(), np.linalg.solve(a, b))
    tall = rng.standard_normal((5, 3))
    lu_t, piv_t = torch.linalg.lu_factor(t(tall))
    P, L, U = torch.lu_unpack(lu_t, piv_t)
    assert (P.shape, L.shape, U.shape) == ((5, 5), (5, 3), (3, 3))
    np.testing.assert_allclose((P @ L @ U).numpy(), tall, atol=1e-12)
    _, _, infos = torch.lu(torch.zeros(2, 2), get_infos=True)
    assert infos.item() == 1


def test_qr_svd_triangular_solve():
    a = rng.standard_normal((5, 3))
    with pytest.warns(UserWarning, match="deprecated"):
        Q, R = torch.qr(t(a))
    assert Q.shape == (5, 3) and R.shape == (3, 3)
    np.testing.assert_allclose((Q @ R).numpy(), a, atol=1e-12)
    with pytest.warns(UserWarning):
        assert torch.qr(t(a), some=False).Q.shape == (5, 5)
    U, S, V = torch.svd(t(a))
    assert U.shape == (5, 3) and V.shape == (3, 3)
    np.testing.assert_allclose((U * S @ V.mT).numpy(), a, atol=1e-12)
    np.testing.assert_allclose(S.numpy(), np.linalg.svd(a, compute_uv=False))
    U, S, V = t(a).svd(some=False)
    assert U.shape == (5, 5) and V.shape == (3, 3)
    U, S, V = torch.svd(t(a), compute_uv=False)
    assert U.shape == (5, 5) and V.shape == (3, 3) and U.abs().sum().item() == 0
    A = np.triu(rng.standard_normal((3, 3))) + 3 * np.eye(3)
    b = rng.standard_normal((3, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X, Acopy = torch.triangular_solve(t(b), t(A))
        XT, _ = torch.triangular_solve(t(b), t(A), transpose=True)
        XU, _ = torch.triangular_solve(t(b), t(A), unitriangular=True)
    np.testing.assert_allclose(X.numpy(), np.linalg.solve(A, b))
    np.testing.assert_allclose(XT.numpy(), np.linalg.solve(A.T, b))
    A1 = A.copy()
    np.fill_diagonal(A1, 1.0)
    np.testing.assert_allclose(XU.numpy(), np.linalg.solve(A1, b))
    np.testing.assert_array_equal(Acopy.numpy(), A)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_householder_family_matches_lapack(shape):
    a = rng.standard_normal(shape)
    ra, rtau = sl.lapack.dgeqrf(a)[:2]
    ga, gtau = torch.geqrf(t(a))
    np.testing.assert_allclose(ga.numpy(), ra, atol=1e-12)
    np.testing.assert_allclose(gtau.numpy(), rtau, atol=1e-12)
    m, n = shape
    if m >= n:
        q = sl.lapack.dorgqr(ra, rtau)[0]
        np.testing.assert_allclose(torch.orgqr(ga, gtau).numpy(), q, atol=1e-12)
    for left, trans in ((True, False), (True, True), (False, False), (False, True)):
        c = rng.standard_normal((m, 2) if left else (2, m))
        k = min(m, n)
        want = sl.lapack.dormqr(
            "L" if left else "R", "T" if trans else "N", ra[:, :k], rtau, c, lwork=1000
        )[0]
        got = torch.ormqr(ga, gtau, t(c), left=left, transpose=trans)
        np.testing.assert_allclose(got.numpy(), want, atol=1e-12)


def test_arithmetic_aliases():
    x, y = torch.tensor([5.0, -7.0]), torch.tensor([2.0, 2.0])
    assert torch.divide(x, y).tolist() == [2.5, -3.5]
    assert torch.divide(x, y, rounding_mode="floor").tolist() == [2.0, -4.0]
    assert torch.multiply(x, y).tolist() == [10.0, -14.0]
    assert torch.subtract(x, y, alpha=2).tolist() == [1.0, -11.0]
    z = x.clone()
    z.subtract_(y).multiply_(y).divide_(y, rounding_mode="trunc")
    assert z.tolist() == [3.0, -9.0]


def test_predicates():
    assert torch.is_nonzero(torch.tensor([1.5])) and not torch.is_nonzero(torch.tensor(0))
    with pytest.raises(RuntimeError, match="more than one value"):
        torch.is_nonzero(torch.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="no values"):
        torch.is_nonzero(torch.tensor([]))
    assert not torch.is_storage(torch.zeros(1)) and not torch.is_inference(torch.zeros(1))
    x = torch.zeros(2)
    assert torch.resolve_neg(x) is x


def test_buffers_files_and_asarray(tmp_path):
    buf = bytearray(np.array([1, 2, 3], dtype=np.int16).tobytes())
    x = torch.frombuffer(buf, dtype=torch.int16)
    assert x.tolist() == [1, 2, 3]
    x[0] = 9  # shares memory with the buffer
    assert np.frombuffer(buf, dtype=np.int16)[0] == 9
    assert torch.frombuffer(buf, dtype=torch.int16, count=1, offset=2).tolist() == [2]
    with pytest.raises(ValueError):
        torch.frombuffer(bytearray(3), dtype=torch.int16)
    path = tmp_path / "data.bin"
    np.arange(4, dtype=np.float32).tofile(path)
    assert torch.from_file(str(path), size=4).tolist() == [0.0, 1.0, 2.0, 3.0]
    shared = torch.from_file(str(path), shared=True, size=4, dtype=torch.float32)
    shared[1] = 7.0
    del shared
    assert np.fromfile(path, dtype=np.float32)[1] == 7.0
    a = np.arange(3.0)
    assert torch.asarray(a).data_ptr() == a.__array_interface__["data"][0]
    assert torch.asarray(a, copy=True).data_ptr() != a.__array_interface__["data"][0]
    src = torch.zeros(2)
    assert torch.asarray(src) is src or torch.asarray(src).data_ptr() == src.data_ptr()
    assert torch.asarray([1, 2]).dtype == torch.int64
    with pytest.raises(ValueError):
        torch.asarray(src, dtype=torch.float64, copy=False)


def test_empty_permuted_nonzero_static_unravel():
    assert torch.empty_permuted((2, 3, 4), (0, 2, 1)).stride() == (12, 1, 3)
    assert torch.nonzero_static(torch.tensor([0, 1, 1]), size=4).tolist() == [[1], [2], [-1], [-1]]
    assert torch.nonzero_static(torch.tensor([1, 1, 1]), size=2).tolist() == [[0], [1]]
    idx = np.array([4, 5, 0, 3])
    got = torch.unravel_index(t(idx), (2, 3))
    for g, w in zip(got, np.unravel_index(idx, (2, 3))):
        np.testing.assert_array_equal(g.numpy(), w)
    with pytest.raises(TypeError):
        torch.unravel_index(torch.tensor([1.0]), (2, 3))


def test_segment_reduce():
    d = torch.tensor([1.0, 2, 3, 4])
    lengths = torch.tensor([1, 0, 3])
    want = {
        "sum": [1, 0, 9],
        "max": [1, -np.inf, 4],
        "min": [1, np.inf, 2],
        "prod": [1, 1, 24],
        "mean": [1, np.nan, 3],
    }
    for reduce, w in want.items():
        np.testing.assert_array_equal(torch.segment_reduce(d, reduce, lengths=lengths).numpy(), w)
    got = torch.segment_reduce(d, "sum", offsets=torch.tensor([0, 1, 4]))
    assert got.tolist() == [1.0, 9.0]
    got = torch.segment_reduce(
        torch.ones(2, 4), "sum", lengths=torch.tensor([[1, 3], [2, 2]]), axis=1
    )
    assert got.tolist() == [[1.0, 3.0], [2.0, 2.0]]
    with pytest.raises(RuntimeError, match="sum to"):
        torch.segment_reduce(d, "sum", lengths=torch.tensor([1, 1]))


def test_set_default_tensor_type():
    old = torch.get_default_dtype()
    try:
        torch.set_default_tensor_type(torch.DoubleTensor)
        assert torch.get_default_dtype() == torch.float64
        torch.set_default_tensor_type("torch.FloatTensor")
        assert torch.get_default_dtype() == torch.float32
        with pytest.raises(TypeError):
            torch.set_default_tensor_type(torch.LongTensor)
    finally:
        torch.set_default_dtype(old)


def test_nn_functions_at_top_level():
    x = rng.standard_normal((2, 8, 3, 4))
    shuffled = torch.pixel_shuffle(t(x), 2)
    assert shuffled.shape == (2, 2, 6, 8)
    np.testing.assert_array_equal(torch.pixel_unshuffle(shuffled, 2).numpy(), x)
    # out[n, c, h*r + i, w*r + j] = in[n, c*r*r + i*r + j, h, w]
    assert shuffled[1, 1, 3, 5].item() == x[1, 1 * 4 + 1 * 2 + 1, 1, 2]
    cs = torch.channel_shuffle(torch.arange(8.0).reshape(1, 4, 2), 2)
    assert cs.tolist() == [[[0.0, 1.0], [4.0, 5.0], [2.0, 3.0], [6.0, 7.0]]]
    a, b = rng.standard_normal((3, 5)), rng.standard_normal((1, 5))
    want = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    np.testing.assert_allclose(torch.cosine_similarity(t(a), t(b)).numpy(), want)
    np.testing.assert_allclose(
        torch.pairwise_distance(t(a), t(b)).numpy(), np.linalg.norm(a - b + 1e-6, axis=1)
    )
    w = rng.standard_normal((4, 5, 3))
    y = rng.standard_normal((3, 3))
    np.testing.assert_allclose(
        torch.bilinear(t(a), t(y), t(w)).numpy(), np.einsum("bi,oij,bj->bo", a, w, y)
    )
    v = torch.tensor([[-1.0, 2.0], [-3.0, 4.0]])
    np.testing.assert_array_equal(
        torch.prelu(v, torch.tensor([0.5, 0.25])).numpy(), [[-0.5, 2.0], [-1.5, 4.0]]
    )


def test_inplace_activations():
    x = torch.tensor([-1.0, 2.0])
    assert torch.relu_(x) is x and x.tolist() == [0.0, 2.0]
    x = torch.tensor([-1.0, 2.0])
    torch.threshold_(x, 0.0, 5.0)
    assert x.tolist() == [5.0, 2.0]
    x = torch.tensor([-1.0, 2.0])
    torch.celu_(x, 2.0)
    np.testing.assert_allclose(x.numpy(), [2.0 * (np.exp(-0.5) - 1), 2.0])
    x = torch.tensor([-1.0, 2.0])
    torch.selu_(x)
    np.testing.assert_allclose(x[1].item(), 1.0507009873554805 * 2, rtol=1e-6)
    x = torch.tensor([-1.0, 2.0])
    torch.rrelu_(x)
    np.testing.assert_allclose(x.numpy(), [-(1 / 8 + 1 / 3) / 2, 2.0], rtol=1e-6)
    torch.manual_seed(0)
    x = torch.full((2000,), -1.0)
    torch.rrelu_(x, 0.1, 0.3, training=True)
    slopes = -x.numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.01  # U(0.1, 0.3): sd of the mean ~ 0.0013
