"""flambeau.svd_lowrank and flambeau.pca_lowrank: randomized decompositions checked against
NumPy's SVD (exact for matrices of rank at most q), their shapes, and PyTorch's errors."""

import numpy as np
import pytest

import flambeau as torch

rng = np.random.default_rng(21)


def low_rank(m, n, rank, batch=()):
    return rng.standard_normal(batch + (m, rank)) @ rng.standard_normal(batch + (rank, n))


def reconstruct(U, S, V):
    return (U * S.unsqueeze(-2)) @ V.mH


def assert_orthonormal_columns(Q, atol=1e-10):
    Q = Q.numpy()
    eye = np.eye(Q.shape[-1])
    np.testing.assert_allclose(
        np.swapaxes(Q.conj(), -1, -2) @ Q, np.broadcast_to(eye, Q.shape[:-2] + eye.shape), atol=atol
    )


@pytest.mark.parametrize("shape", [(20, 9), (9, 20)])
def test_svd_lowrank_recovers_a_low_rank_matrix(shape):
    torch.manual_seed(0)
    a = low_rank(*shape, rank=4)
    U, S, V = torch.svd_lowrank(torch.tensor(a), q=6)
    assert (tuple(U.shape), tuple(S.shape), tuple(V.shape)) == (
        (shape[0], 6),
        (6,),
        (shape[1], 6),
    )
    np.testing.assert_allclose(S.numpy()[:4], np.linalg.svd(a)[1][:4], rtol=1e-10)
    np.testing.assert_allclose(S.numpy()[4:], 0, atol=1e-10)
    np.testing.assert_allclose(reconstruct(U, S, V).numpy(), a, atol=1e-10)
    assert_orthonormal_columns(U[:, :4])
    assert_orthonormal_columns(V[:, :4])


def test_svd_lowrank_full_rank_q_is_the_svd_and_q_is_capped():
    torch.manual_seed(1)
    a = rng.standard_normal((10, 7))
    U, S, V = torch.svd_lowrank(torch.tensor(a), q=20)
    assert tuple(S.shape) == (7,)
    np.testing.assert_allclose(S.numpy(), np.linalg.svd(a)[1], rtol=1e-10)
    np.testing.assert_allclose(reconstruct(U, S, V).numpy(), a, atol=1e-10)


def test_svd_lowrank_with_mean_batches_and_complex():
    torch.manual_seed(2)
    a = low_rank(12, 8, rank=3, batch=(2,))
    mean = rng.standard_normal((1, 8))
    U, S, V = torch.svd_lowrank(torch.tensor(a + mean), q=5, M=torch.tensor(mean))
    assert tuple(U.shape) == (2, 12, 5) and tuple(V.shape) == (2, 8, 5)
    np.testing.assert_allclose(reconstruct(U, S, V).numpy(), a, atol=1e-9)
    np.testing.assert_allclose(S.numpy()[:, :3], np.linalg.svd(a)[1][:, :3], rtol=1e-9)
    c = low_rank(9, 7, 2) + 1j * low_rank(9, 7, 2)
    U, S, V = torch.svd_lowrank(torch.tensor(c), q=5)
    assert U.dtype == torch.complex128 and S.dtype == torch.float64
    np.testing.assert_allclose(reconstruct(U, S, V).numpy(), c, atol=1e-9)


def test_svd_lowrank_defaults_and_float32():
    torch.manual_seed(3)
    a = low_rank(15, 11, rank=6).astype(np.float32)
    U, S, V = torch.svd_lowrank(torch.tensor(a), q=None, niter=None)  # q=6, niter=2
    assert S.dtype == torch.float32 and tuple(S.shape) == (6,)
    np.testing.assert_allclose(reconstruct(U, S, V).numpy(), a, atol=1e-3)
    U, S, V = torch.svd_lowrank(torch.tensor(a), q=0)
    assert (tuple(U.shape), tuple(S.shape), tuple(V.shape)) == ((15, 0), (0,), (11, 0))


def test_svd_lowrank_with_a_seed_is_repeatable():
    a = torch.tensor(rng.standard_normal((8, 6)))
    torch.manual_seed(5)
    first = torch.svd_lowrank(a, q=2, niter=0)
    torch.manual_seed(5)
    second = torch.svd_lowrank(a, q=2, niter=0)
    for x, y in zip(first, second):
        np.testing.assert_array_equal(x.numpy(), y.numpy())


def test_pca_lowrank_finds_the_principal_directions():
    torch.manual_seed(4)
    # 200 samples in 5 features, variance along 2 directions only, plus an offset.
    directions = np.linalg.qr(rng.standard_normal((5, 2)))[0]
    scores = rng.standard_normal((200, 2)) * np.array([3.0, 1.0])
    data = scores @ directions.T + np.array([1.0, -2.0, 0.5, 3.0, 0.0])
    U, S, V = torch.pca_lowrank(torch.tensor(data), q=2)
    centered = data - data.mean(0)
    _, s_ref, vt_ref = np.linalg.svd(centered, full_matrices=False)
    np.testing.assert_allclose(S.numpy(), s_ref[:2], rtol=1e-10)
    # Directions agree up to sign.
    np.testing.assert_allclose(np.abs(V.numpy().T @ vt_ref[:2].T), np.eye(2), atol=1e-10)
    np.testing.assert_allclose(reconstruct(U, S, V).numpy(), centered, atol=1e-9)
    # Variances along the principal directions are S**2 / (m - 1).
    cov_eigs = np.linalg.eigvalsh(np.cov(data.T))[::-1][:2]
    np.testing.assert_allclose(S.numpy() ** 2 / 199, cov_eigs, rtol=1e-10)


def test_pca_lowrank_defaults_uncentered_and_batches():
    torch.manual_seed(6)
    a = rng.standard_normal((3, 10, 4))
    U, S, V = torch.pca_lowrank(torch.tensor(a))
    assert (tuple(U.shape), tuple(S.shape), tuple(V.shape)) == ((3, 10, 4), (3, 4), (3, 4, 4))
    centered = a - a.mean(1, keepdims=True)
    np.testing.assert_allclose(S.numpy(), np.linalg.svd(centered)[1], rtol=1e-9)
    U, S, V = torch.pca_lowrank(torch.tensor(a[0]), q=4, center=False)
    np.testing.assert_allclose(S.numpy(), np.linalg.svd(a[0])[1], rtol=1e-9)


def test_errors():
    a = torch.randn(10, 7)
    with pytest.raises(ValueError, match="q\\(=8\\) must be non-negative integer and not greater"):
        torch.pca_lowrank(a, q=8)
    with pytest.raises(ValueError, match="q\\(=-1\\)"):
        torch.pca_lowrank(a, q=-1)
    with pytest.raises(ValueError, match="niter\\(=-1\\) must be non-negative"):
        torch.pca_lowrank(a, niter=-1)
    with pytest.raises(RuntimeError, match="q must be non-negative"):
        torch.svd_lowrank(a, q=-1)
    for fn in (torch.svd_lowrank, torch.pca_lowrank):
        with pytest.raises(ValueError, match="\\(\\*, m, n\\)"):
            fn(torch.ones(5))
        with pytest.raises(RuntimeError, match="floating-point or complex"):
            fn(torch.ones(5, 4, dtype=torch.int64))
        with pytest.raises(TypeError, match="must be Tensor"):
            fn([[1.0]])
    with pytest.raises(RuntimeError):
        torch.svd_lowrank(a, q=3, M=torch.ones(3))  # M does not broadcast to A


def test_gradients_flow_through_the_decomposition():
    autograd = pytest.importorskip("flambeau.autograd")
    a = rng.standard_normal((6, 4))

    def singular_values(x):
        torch.manual_seed(8)
        return torch.svd_lowrank(x, q=4)[1]

    x = torch.tensor(a, requires_grad=True)
    assert autograd.gradcheck(singular_values, (x,))
