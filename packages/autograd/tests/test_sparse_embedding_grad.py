"""Sparse gradients of embedding and embedding_bag (sparse=True), as PyTorch's: a sparse
COO weight gradient with one uncoalesced entry per non-padding index, against NumPy's
scatter-add of the same rows; and their accumulation into .grad (sparse + sparse stays
sparse, a dense gradient makes .grad dense)."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau as F

W = np.arange(12.0).reshape(6, 2) / 5 - 1


def weight():
    return F.tensor(W.tolist(), requires_grad=True)


def emb(w, idx, padding_idx=-1, scale_grad_by_freq=False, sparse=True):
    return F.embedding(w, idx, padding_idx, scale_grad_by_freq, sparse)


def bag(w, idx, offsets, mode, per_sample_weights=None, padding_idx=None):
    modes = {"sum": 0, "mean": 1}
    out = F.embedding_bag(
        w, idx, offsets, False, modes[mode], True, per_sample_weights, False, padding_idx
    )
    return out[0]


def scatter(indices, rows, n=6):
    out = np.zeros((n, rows.shape[-1]))
    np.add.at(out, np.asarray(indices), rows)
    return out


def test_embedding_gradient_is_sparse_with_an_entry_per_index():
    w = weight()
    idx = F.tensor([[0, 2, 2], [5, 2, 1]])
    g = F.tensor(np.arange(12.0).reshape(2, 3, 2).tolist())
    emb(w, idx).backward(g)
    grad = w.grad
    assert grad.is_sparse and grad.layout is F.sparse_coo and grad.shape == (6, 2)
    assert not grad.is_coalesced()
    assert grad._indices().dtype == F.int64
    assert grad._indices().tolist() == [[0, 2, 2, 5, 2, 1]]
    np.testing.assert_allclose(grad._values().numpy(), np.arange(12.0).reshape(6, 2))
    expected = scatter([0, 2, 2, 5, 2, 1], np.arange(12.0).reshape(6, 2))
    np.testing.assert_allclose(grad.to_dense().numpy(), expected)


def test_embedding_sparse_gradient_leaves_out_padding():
    w = weight()
    emb(w, F.tensor([[0, 2, 2], [2, 4, 1]]), padding_idx=2).sum().backward()
    assert w.grad._indices().tolist() == [[0, 4, 1]]
    np.testing.assert_allclose(w.grad.to_dense().numpy(), scatter([0, 4, 1], np.ones((3, 2))))
    w.grad = None
    emb(w, F.tensor([2, 2]), padding_idx=2).sum().backward()  # nothing but padding
    assert w.grad.is_sparse and w.grad._nnz() == 0 and tuple(w.grad._values().shape) == (0, 2)


def test_sparse_embedding_refuses_scale_grad_by_freq():
    w = weight()
    out = emb(w, F.tensor([0, 0, 1]), scale_grad_by_freq=True).sum()
    with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse"):
        out.backward()


def test_embedding_bag_sum_with_per_sample_weights():
    w = weight()
    idx, offsets = F.tensor([0, 2, 2, 5, 1, 3]), F.tensor([0, 2, 2, 5])
    psw = F.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
    g = np.array([[1.0, -1.0], [2.0, 0.5], [0.0, 3.0], [-2.0, 1.0]])
    bag(w, idx, offsets, "sum", per_sample_weights=psw).backward(F.tensor(g.tolist()))
    assert w.grad.is_sparse and w.grad._indices().tolist() == [[0, 2, 2, 5, 1, 3]]
    bag_of = np.array([0, 0, 2, 2, 2, 3])  # bag 1 is empty
    rows = g[bag_of] * np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])[:, None]
    np.testing.assert_allclose(w.grad._values().numpy(), rows)
    np.testing.assert_allclose(w.grad.to_dense().numpy(), scatter([0, 2, 2, 5, 1, 3], rows))
    # The per-sample weights' gradient is unchanged by sparse=True: <row of W, bag grad>.
    expected_psw = (W[[0, 2, 2, 5, 1, 3]] * g[bag_of]).sum(1)
    np.testing.assert_allclose(psw.grad.numpy(), expected_psw, rtol=1e-6)


def test_embedding_bag_mean_divides_by_the_bag_size_without_padding():
    w = weight()
    idx, offsets = F.tensor([0, 2, 2, 5, 1, 3]), F.tensor([0, 2, 2, 5])
    bag(w, idx, offsets, "mean", padding_idx=2).sum().backward()
    # Bags: [0, pad] (size 1), [], [pad, 5, 1] (size 2), [3] (size 1).
    assert w.grad._indices().tolist() == [[0, 5, 1, 3]]
    np.testing.assert_allclose(
        w.grad._values().numpy(), np.array([[1.0, 1.0], [0.5, 0.5], [0.5, 0.5], [1.0, 1.0]])
    )
    dense_w = weight()
    F.embedding_bag(dense_w, idx, offsets, False, 1, False, None, False, 2)[0].sum().backward()
    np.testing.assert_allclose(w.grad.to_dense().numpy(), dense_w.grad.numpy())


def test_sparse_gradients_accumulate_as_in_pytorch():
    w = weight()
    idx = F.tensor([0, 2, 2])
    emb(w, idx).sum().backward()
    emb(w, F.tensor([4])).sum().backward()
    assert w.grad.is_sparse  # sparse + sparse stays sparse
    np.testing.assert_allclose(w.grad.to_dense().numpy(), scatter([0, 2, 2, 4], np.ones((4, 2))))
    (w * 3).sum().backward()  # a dense gradient onto a sparse one: .grad becomes dense
    assert not w.grad.is_sparse and w.grad.layout is F.strided
    np.testing.assert_allclose(w.grad.numpy(), scatter([0, 2, 2, 4], np.ones((4, 2))) + 3)
    emb(w, idx).sum().backward()  # a sparse gradient onto a dense one: added in place
    assert not w.grad.is_sparse
    np.testing.assert_allclose(w.grad.numpy(), scatter([0, 2, 2, 4, 0, 2, 2], np.ones((7, 2))) + 3)


def test_a_first_sparse_gradient_the_engine_does_not_own_is_copied():
    held = F.sparse_coo_tensor([[1]], [[2.0, 3.0]], (6, 2))

    class Hand(F.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return held  # the function keeps a reference: .grad must not alias it

    w = weight()
    Hand.apply(w).backward()
    assert w.grad.is_sparse and w.grad is not held
    w.grad.mul_(10)
    np.testing.assert_allclose(held.to_dense().numpy()[1], [2.0, 3.0])
    np.testing.assert_allclose(w.grad.to_dense().numpy()[1], [20.0, 30.0])


def test_sparse_and_dense_uses_of_one_weight_sum_to_a_dense_gradient():
    # A tied embedding: looked up (sparse gradient) and used as a dense matrix in the
    # same graph. PyTorch's engine sums the two into a dense gradient, whichever comes
    # first.
    idx = F.tensor([1, 2, 1])
    for dense_first in (False, True):
        w = weight()
        looked_up = emb(w, idx).sum()
        dense = (w * 2).sum()
        (dense + looked_up if dense_first else looked_up + dense).backward()
        assert not w.grad.is_sparse and w.grad.layout is F.strided
        np.testing.assert_allclose(w.grad.numpy(), scatter([1, 2, 1], np.ones((3, 2))) + 2)
    w = weight()
    h = emb(w, idx)
    (h @ w.t()).sum().backward()  # the output projection of a tied language model
    # sum(h @ w.T) = (sum of h's rows) . (sum of w's rows): each looked-up row gets the
    # sum of w's rows, every row of w gets the sum of h's rows.
    wn = W.astype(np.float64)
    expected = scatter([1, 2, 1], np.tile(wn.sum(0), (3, 1))) + wn[[1, 2, 1]].sum(0)
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-6)
