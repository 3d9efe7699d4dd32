"""Compressed sparse matrices (CSR, CSC, BSR, BSC) against scipy.sparse."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau as F

sp = pytest.importorskip("scipy.sparse")

DENSE = np.array(
    [[1.0, 0, 0, 2], [0, 0, 3, 0], [0, 0, 0, 0], [4, 5, 0, 6]], dtype=np.float32
)  # fmt: skip


def test_csr_from_dense_matches_scipy():
    s = F.tensor(DENSE).to_sparse_csr()
    ref = sp.csr_matrix(DENSE)
    assert s.layout is F.sparse_csr and s.is_sparse_csr and not s.is_sparse
    np.testing.assert_array_equal(s.crow_indices().numpy(), ref.indptr)
    np.testing.assert_array_equal(s.col_indices().numpy(), ref.indices)
    np.testing.assert_array_equal(s.values().numpy(), ref.data)
    np.testing.assert_array_equal(s.to_dense().numpy(), DENSE)


def test_csc_from_coo_matches_scipy():
    s = F.tensor(DENSE).to_sparse().to_sparse_csc()
    ref = sp.csc_matrix(DENSE)
    assert s.layout is F.sparse_csc
    np.testing.assert_array_equal(s.ccol_indices().numpy(), ref.indptr)
    np.testing.assert_array_equal(s.row_indices().numpy(), ref.indices)
    np.testing.assert_array_equal(s.values().numpy(), ref.data)
    np.testing.assert_array_equal(s.to_sparse_coo().to_dense().numpy(), DENSE)


@pytest.mark.parametrize("layout_name, ref", [("bsr", sp.bsr_matrix)])
def test_bsr_blocks_match_scipy(layout_name, ref):
    s = F.tensor(DENSE).to_sparse_bsr((2, 2))
    r = ref(DENSE, blocksize=(2, 2))
    np.testing.assert_array_equal(s.crow_indices().numpy(), r.indptr)
    np.testing.assert_array_equal(s.col_indices().numpy(), r.indices)
    np.testing.assert_array_equal(s.values().numpy(), r.data)
    np.testing.assert_array_equal(s.to_dense().numpy(), DENSE)


def test_bsc_round_trip():
    s = F.tensor(DENSE).to_sparse_bsc((2, 1))
    assert s.layout is F.sparse_bsc and s.values().shape[1:] == (2, 1)
    np.testing.assert_array_equal(s.to_dense().numpy(), DENSE)


def test_constructors_and_size_inference():
    ref = sp.csr_matrix(DENSE)
    s = F.sparse_csr_tensor(ref.indptr, ref.indices, ref.data)
    assert s.shape == (4, 4)
    np.testing.assert_array_equal(s.to_dense().numpy(), DENSE)
    c = sp.csc_matrix(DENSE)
    s = F.sparse_compressed_tensor(c.indptr, c.indices, c.data, (4, 4), layout=F.sparse_csc)
    np.testing.assert_array_equal(s.to_dense().numpy(), DENSE)
    b = sp.bsr_matrix(DENSE, blocksize=(2, 2))
    s = F.sparse_bsr_tensor(b.indptr, b.indices, b.data, (4, 4))
    np.testing.assert_array_equal(s.to_dense().numpy(), DENSE)
    np.testing.assert_array_equal(F.crow_indices_copy(s).numpy(), b.indptr)


@pytest.mark.parametrize(
    "crow, col, message",
    [
        ([1, 1, 2], [0, 1], "== 0"),
        ([0, 1, 3], [0, 1], "== nnz"),
        ([0, 2, 1], [0, 1], "is not satisfied"),
        ([0, 1, 2], [0, 5], "col_indices < 3"),
        ([0, 2, 2], [1, 0], "sorted and distinct"),
    ],
)
def test_compressed_invariants(crow, col, message):
    values = [1.0] * len(col)
    with pytest.raises(RuntimeError, match=message):
        F.sparse_csr_tensor(crow, col, values, (2, 3))


def test_products_and_transpose():
    s = F.tensor(DENSE).to_sparse_csr()
    b = F.arange(8.0).reshape(4, 2)
    np.testing.assert_allclose((s @ b).numpy(), DENSE @ b.numpy())
    np.testing.assert_allclose(F.mm(b.t(), s).numpy(), b.numpy().T @ DENSE)
    t = s.t()
    assert t.layout is F.sparse_csc
    np.testing.assert_array_equal(t.to_dense().numpy(), DENSE.T)
    np.testing.assert_allclose((s * 2).to_dense().numpy(), DENSE * 2)
    assert float(s.sum()) == DENSE.sum()


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin", "max", "min"])
def test_sparse_mm_reduce(reduce):
    s = F.tensor(DENSE).to_sparse_csr()
    b = F.arange(8.0).reshape(4, 2)
    out = F.sparse.mm(s, b, reduce).numpy()
    for i in range(4):
        (cols,) = np.nonzero(DENSE[i])
        products = DENSE[i, cols, None] * b.numpy()[cols]
        want = {"sum": np.sum, "mean": np.mean, "amax": np.max, "amin": np.min}
        want |= {"max": np.max, "min": np.min}
        np.testing.assert_allclose(out[i], want[reduce](products, 0) if len(cols) else 0)


@pytest.mark.parametrize("reduce, match", [("prod", "not been enabled"), ("foo", "got foo")])
def test_sparse_mm_reduce_refuses(reduce, match):
    with pytest.raises(RuntimeError, match=match):
        F.sparse.mm(F.tensor(DENSE).to_sparse_csr(), F.ones(4, 2), reduce)


def test_csr_gradient_reaches_values():
    s = F.tensor(DENSE).to_sparse_csr().requires_grad_()
    b = F.arange(8.0).reshape(4, 2)
    (s @ b).sum().backward()
    ref = sp.csr_matrix(DENSE)
    np.testing.assert_allclose(s.grad.values().numpy(), b.numpy().sum(1)[ref.indices])


def test_constructors_take_pytorchs_keyword_names():
    s = F.sparse_csr_tensor(
        crow_indices=F.tensor([0, 1, 2]),
        col_indices=F.tensor([1, 0]),
        values=F.ones(2),
        size=(2, 2),
    )
    np.testing.assert_array_equal(s.to_dense().numpy(), [[0, 1], [1, 0]])
    c = F.sparse_csc_tensor(
        ccol_indices=F.tensor([0, 1, 2]), row_indices=F.tensor([1, 0]), values=F.ones(2)
    )
    np.testing.assert_array_equal(c.to_dense().numpy(), [[0, 1], [1, 0]])
