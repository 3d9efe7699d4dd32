"""Sparse COO tensors against SciPy/NumPy: construction, conversions, arithmetic,
reductions, products, gradients, printing and pickling."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import flambeau as F

sp = pytest.importorskip("scipy.sparse")

IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]  # (0, 2) twice: uncoalesced
VAL = [3.0, 4.0, 5.0, 1.0]
DENSE = np.array([[0.0, 0.0, 4.0], [4.0, 0.0, 5.0]])


def coo():
    return F.sparse_coo_tensor(IDX, VAL, (2, 3))


def scipy_coo():
    return sp.coo_matrix((VAL, IDX), shape=(2, 3))


def test_metadata_and_to_dense():
    s = coo()
    assert isinstance(s, F.Tensor)
    assert s.shape == (2, 3) and s.dtype == F.float32 and s.device == F.device("cpu")
    assert s.layout is F.sparse_coo and s.is_sparse and s.ndim == 2 and s.numel() == 6
    assert s.sparse_dim() == 2 and s.dense_dim() == 0 and s._nnz() == 4
    assert not s.is_coalesced()
    np.testing.assert_allclose(s.to_dense().numpy(), scipy_coo().toarray())


def test_coalesce_sums_duplicates_and_sorts():
    c = coo().coalesce()
    ref = scipy_coo().tocsr().tocoo()  # duplicates summed, sorted row-major
    assert c.is_coalesced() and c._nnz() == 3
    np.testing.assert_array_equal(c.indices().numpy(), np.stack([ref.row, ref.col]))
    np.testing.assert_allclose(c.values().numpy(), ref.data)


def test_uncoalesced_indices_values_raise():
    with pytest.raises(RuntimeError, match="uncoalesced"):
        coo().indices()
    with pytest.raises(RuntimeError, match="uncoalesced"):
        coo().values()


def test_size_inference_and_hybrid():
    s = F.sparse_coo_tensor([[0, 2]], F.ones(2, 3))
    assert s.shape == (3, 3) and s.sparse_dim() == 1 and s.dense_dim() == 1
    expect = np.zeros((3, 3))
    expect[[0, 2]] = 1
    np.testing.assert_array_equal(s.to_dense().numpy(), expect)


@pytest.mark.parametrize(
    "indices, values, size, message",
    [
        ([[0, 1, 1]], [1.0, 2.0], None, "same nnz"),
        ([0, 1], [1.0, 2.0], None, "sparse_dim x nnz"),
        ([[0, 1], [0, 1]], [1.0, 2.0], (2, 2, 2), "len\\(size\\)"),
        ([[0, 2]], [1.0, 2.0], (2,), "size is inconsistent with indices"),
        ([[-1, 0]], [1.0, 2.0], (2,), "negative index"),
    ],
)
def test_constructor_errors(indices, values, size, message):
    with pytest.raises(RuntimeError, match=message):
        F.sparse_coo_tensor(indices, values, size)


def test_dense_to_sparse_round_trip():
    d = F.tensor(DENSE)
    s = d.to_sparse()
    assert s.is_coalesced() and s._nnz() == 3
    np.testing.assert_array_equal(s.to_dense().numpy(), DENSE)
    h = F.tensor(DENSE).to_sparse(1)
    assert h.sparse_dim() == 1 and h._nnz() == 2
    np.testing.assert_array_equal(h.to_dense().numpy(), DENSE)
    with pytest.raises(RuntimeError, match="sparse_dim argument must be in"):
        d.to_sparse(3)


# Element-wise ops that keep zeros: the sparse result against NumPy on the dense form.
UNARY = [
    ("neg", np.negative),
    ("abs", np.abs),
    ("sqrt", np.sqrt),
    ("sin", np.sin),
    ("tanh", np.tanh),
    ("expm1", np.expm1),
    ("log1p", np.log1p),
    ("square", np.square),
    ("floor", np.floor),
]


@pytest.mark.parametrize("name, ref", UNARY)
def test_unary_zero_preserving(name, ref):
    out = getattr(coo(), name)()
    assert out.layout is F.sparse_coo
    np.testing.assert_allclose(out.to_dense().numpy(), ref(DENSE), rtol=1e-6)


@pytest.mark.parametrize(
    "op, ref",
    [
        (lambda s: s * 2, DENSE * 2),
        (lambda s: 2 * s, DENSE * 2),
        (lambda s: s / 4, DENSE / 4),
        (lambda s: s**2, DENSE**2),
        (lambda s: s + s, DENSE * 2),
        (lambda s: s - 3 * s, -2 * DENSE),
        (lambda s: s * s, DENSE * DENSE),
        (lambda s: s * F.tensor(DENSE + 1), DENSE * (DENSE + 1)),
        (lambda s: F.tensor(DENSE + 1) * s, DENSE * (DENSE + 1)),
        (lambda s: F.add(s, s, alpha=2), DENSE * 3),
    ],
)
def test_arithmetic_sparse_results(op, ref):
    out = op(coo())
    assert out.layout is F.sparse_coo
    np.testing.assert_allclose(out.to_dense().numpy(), ref, rtol=1e-6)


def test_dense_plus_sparse_is_dense_and_sparse_plus_dense_raises():
    ones = F.ones(2, 3)
    out = ones + coo()
    assert type(out) is F.Tensor
    np.testing.assert_allclose(out.numpy(), 1 + DENSE)
    np.testing.assert_allclose((ones - coo()).numpy(), 1 - DENSE)
    np.testing.assert_allclose(F.add(ones, coo(), alpha=3).numpy(), 1 + 3 * DENSE)
    with pytest.raises(RuntimeError, match="add\\(sparse, dense\\) is not supported"):
        coo() + ones
    with pytest.raises(RuntimeError, match="add\\(sparse, dense\\) is not supported"):
        coo() + 1
    with pytest.raises(RuntimeError, match="zeroth power"):
        coo() ** 0


def test_in_place_ops():
    s = coo()
    s.mul_(2)
    np.testing.assert_allclose(s.to_dense().numpy(), 2 * DENSE)
    s.zero_()
    assert s._nnz() == 0 and s.shape == (2, 3)
    d = F.zeros(2, 3)
    d += coo()
    np.testing.assert_allclose(d.numpy(), DENSE)


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), -1])
def test_sum_against_numpy(dim):
    out = F.sparse.sum(coo(), dim) if dim is not None else F.sparse.sum(coo())
    ref = DENSE.sum() if dim is None else DENSE.sum(axis=dim)
    dense = out.to_dense() if out.layout is F.sparse_coo else out
    np.testing.assert_allclose(dense.numpy(), ref)
    # Every sparse dim summed gives a dense tensor, as in PyTorch.
    assert (out.layout is F.strided) == (dim in (None, (0, 1)))


def test_sum_of_hybrid_over_dense_dim_stays_sparse():
    s = F.sparse_coo_tensor([[0, 2], [1, 1]], F.ones(2, 2), (3, 2, 2))
    out = s.sum(2)
    assert out.layout is F.sparse_coo and out.shape == (3, 2)
    np.testing.assert_allclose(out.to_dense().numpy(), s.to_dense().numpy().sum(2))


def test_transpose_index_select_narrow_select():
    s = coo()
    np.testing.assert_allclose(s.t().to_dense().numpy(), DENSE.T)
    np.testing.assert_allclose(s.transpose(0, 1).to_dense().numpy(), DENSE.T)
    index = F.tensor([2, 0, 2])
    np.testing.assert_allclose(s.index_select(1, index).to_dense().numpy(), DENSE[:, [2, 0, 2]])
    np.testing.assert_allclose(s.narrow_copy(1, 1, 2).to_dense().numpy(), DENSE[:, 1:3])
    np.testing.assert_allclose(s[1].to_dense().numpy(), DENSE[1])
    np.testing.assert_allclose(s.select(1, 2).to_dense().numpy(), DENSE[:, 2])


def test_sparse_mask():
    d = F.arange(6.0).reshape(2, 3)
    out = d.sparse_mask(coo())
    np.testing.assert_allclose(out.to_dense().numpy(), np.where(DENSE != 0, d.numpy(), 0))


# Products: scipy.sparse computes the references.
B = np.arange(6.0).reshape(3, 2)


@pytest.mark.parametrize(
    "op",
    [
        lambda s, b: F.mm(s, b),
        lambda s, b: s @ b,
        lambda s, b: F.matmul(s, b),
        lambda s, b: F.spmm(s, b),
        lambda s, b: F.sparse.mm(s, b),
    ],
)
def test_sparse_dense_products(op):
    out = op(coo(), F.tensor(B, dtype=F.float32))
    np.testing.assert_allclose(out.numpy(), scipy_coo() @ B)


def test_dense_sparse_and_sparse_sparse_products():
    a = F.tensor(B, dtype=F.float32)  # (3, 2) @ (3, 2)-shaped transpose of coo
    np.testing.assert_allclose((a.t() @ coo().t()).numpy(), B.T @ DENSE.T)
    ss = F.mm(coo(), coo().t())
    assert ss.layout is F.sparse_coo
    np.testing.assert_allclose(ss.to_dense().numpy(), (scipy_coo() @ scipy_coo().T).toarray())


def test_addmm_smm_hspmm_sspaddmm():
    b = F.tensor(B, dtype=F.float32)
    c = F.ones(2, 2)
    np.testing.assert_allclose(F.addmm(c, coo(), b, beta=2, alpha=3).numpy(), 2 + 3 * (DENSE @ B))
    np.testing.assert_allclose(F.sparse.addmm(c, coo(), b).numpy(), 1 + DENSE @ B)
    h = F.hspmm(coo(), b)
    assert h.sparse_dim() == 1 and h.dense_dim() == 1
    np.testing.assert_allclose(h.to_dense().numpy(), DENSE @ B)
    np.testing.assert_allclose(F.smm(coo(), b).to_dense().numpy(), DENSE @ B)
    base = F.sparse_coo_tensor([[0], [1]], [7.0], (2, 2))
    out = F.sspaddmm(base, coo(), b, beta=2, alpha=0.5)
    expect = 0.5 * (DENSE @ B)
    expect[0, 1] += 14
    np.testing.assert_allclose(out.to_dense().numpy(), expect)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        F.mm(coo(), F.ones(2, 2))


def test_softmax_over_stored_elements():
    s = coo().coalesce()
    out = F.sparse.softmax(s, 1).to_dense().numpy()
    for row in range(2):
        stored = DENSE[row] != 0
        e = np.exp(DENSE[row][stored] - DENSE[row][stored].max())
        np.testing.assert_allclose(out[row][stored], e / e.sum(), rtol=1e-6)
        assert (out[row][~stored] == 0).all()
    log = F.sparse.log_softmax(s, 1).to_dense().numpy()
    np.testing.assert_allclose(log[DENSE != 0], np.log(out[DENSE != 0]), rtol=1e-5)


def test_spdiags_against_scipy():
    diags = F.tensor([[1.0, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]])
    offsets = F.tensor([0, -1, 2])
    out = F.sparse.spdiags(diags, offsets, (4, 4))
    ref = sp.spdiags(diags.numpy(), offsets.numpy(), 4, 4).toarray()
    np.testing.assert_allclose(out.to_dense().numpy(), ref)


def test_sampled_addmm():
    a = F.tensor([[1.0, 2], [3, 4]])
    mask = F.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 1.0], (2, 2))
    got = F.sparse.sampled_addmm(mask, a, a, beta=0.5, alpha=2).to_dense().numpy()
    prod = a.numpy() @ a.numpy()
    np.testing.assert_allclose(
        got, np.array([[0, 0.5 + 2 * prod[0, 1]], [0.5 + 2 * prod[1, 0], 0]])
    )


def test_conversions_and_copies():
    s = coo()
    d = s.double()
    assert d.dtype == F.float64 and d.layout is F.sparse_coo
    assert s.to(F.int64).dtype == F.int64
    assert s.cpu().device.type == "cpu"
    assert s.type() == "torch.sparse.FloatTensor"
    c = s.clone()
    c.mul_(0)
    np.testing.assert_allclose(s.to_dense().numpy(), DENSE)  # the clone owns its data
    np.testing.assert_array_equal(
        F.indices_copy(s.coalesce()).numpy(), s.coalesce().indices().numpy()
    )
    np.testing.assert_array_equal(F.values_copy(s.coalesce()).numpy(), [4.0, 4.0, 5.0])


def test_repr_matches_pytorch_format():
    s = F.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
    assert repr(s) == (
        "tensor(indices=tensor([[0, 1, 1],\n"
        "                       [2, 0, 2]]),\n"
        "       values=tensor([3., 4., 5.]),\n"
        "       size=(2, 3), nnz=3, layout=flambeau.sparse_coo)"
    )
    assert "dtype=flambeau.float64" in repr(s.double())


def test_pickle_round_trip():
    s = coo()
    back = pickle.loads(pickle.dumps(s))
    assert back.layout is F.sparse_coo and back.shape == s.shape and not back.is_coalesced()
    np.testing.assert_allclose(back.to_dense().numpy(), DENSE)


# Autograd: gradients flow to dense operands and to the values of a sparse leaf.


def test_gradient_to_dense_operand_matches_finite_differences():
    from flambeau.autograd import gradcheck

    s = F.sparse_coo_tensor(IDX, F.tensor(VAL, dtype=F.float64), (2, 3))
    b = F.tensor(B, dtype=F.float64, requires_grad=True)
    assert gradcheck(lambda x: F.spmm(s, x), (b,))
    assert gradcheck(lambda x: x.t() @ s.t(), (b,))


def test_gradient_of_sparse_leaf_keeps_its_pattern():
    s = F.sparse_coo_tensor(IDX, VAL, (2, 3), requires_grad=True)
    assert s.requires_grad and s.is_leaf
    b = F.tensor(B, dtype=F.float32)
    F.sparse.mm(s, b).sum().backward()
    g = s.grad
    assert g.layout is F.sparse_coo
    # d(sum(S @ B)) / dS[i, k] = sum_j B[k, j], at each stored element.
    np.testing.assert_allclose(g._values().numpy(), B.sum(1)[np.array(IDX[1])])


def test_as_sparse_gradcheck():
    from flambeau.autograd import gradcheck

    s = F.sparse_coo_tensor(IDX, F.tensor(VAL, dtype=F.float64), (2, 3), requires_grad=True)
    check = F.sparse.as_sparse_gradcheck(gradcheck)
    assert check(lambda x: (x * x).to_dense(), (s,))
    assert check(lambda x: F.sparse.softmax(x.coalesce(), 1), (s,))


def test_check_sparse_tensor_invariants_switch():
    inv = F.sparse.check_sparse_tensor_invariants
    assert not inv.is_enabled()
    with inv():
        assert inv.is_enabled()
    assert not inv.is_enabled()


@pytest.mark.parametrize(
    "make",
    [
        lambda d: d.to_sparse(),
        lambda d: d.to_sparse_csr(),
        lambda d: d.to_sparse_csc(),
        lambda d: d.to_sparse_bsr((2, 2)),
        lambda d: d.to_sparse_bsc((2, 2)),
    ],
)
def test_save_and_load_round_trip(make, tmp_path):
    dense = F.tensor([[0.0, 1.0, 0.0, 2.0], [3.0, 0.0, 0.0, 0.0]])
    t = make(dense)
    F.save({"t": t, "again": [t]}, tmp_path / "s.pt")
    back = F.load(tmp_path / "s.pt")
    assert back["t"].layout is t.layout and back["t"].shape == t.shape
    np.testing.assert_array_equal(back["t"].to_dense().numpy(), dense.numpy())
    np.testing.assert_array_equal(back["again"][0].to_dense().numpy(), dense.numpy())


def test_load_checks_a_sparse_record_like_the_constructor(tmp_path):
    t = F.sparse_coo_tensor(F.tensor([[0, 1]]), F.tensor([1.0, 2.0]), (2,))
    t._indices()[0, 1] = 7  # corrupt after construction: index 7 of a size-2 dim
    F.save(t, tmp_path / "bad.pt")
    with pytest.raises(RuntimeError, match="index"):
        F.load(tmp_path / "bad.pt")


def test_a_sparse_parameter_keeps_its_layout():
    nn = pytest.importorskip("flambeau.nn")
    dense = F.tensor([[0.0, 2.0], [3.0, 0.0]])
    p = nn.Parameter(dense.to_sparse())
    assert isinstance(p, nn.Parameter) and p.layout is F.sparse_coo and p.requires_grad
    x = F.tensor([[1.0], [1.0]])
    np.testing.assert_array_equal(F.sparse.mm(p, x).detach().numpy(), [[2.0], [3.0]])
    module = nn.Module()
    module.w = p
    assert dict(module.named_parameters())["w"] is p
    import copy

    clone = copy.deepcopy(module)
    assert isinstance(clone.w, nn.Parameter) and clone.w.layout is F.sparse_coo


def test_legacy_sparse_types_construct_and_check():
    i, v = F.tensor([[0, 1], [1, 0]]), F.tensor([1.0, 2.0], dtype=F.float64)
    with pytest.warns(UserWarning, match="deprecated"):
        s = F.sparse.FloatTensor(i, v, F.Size([2, 3]))
    # As PyTorch's: the values keep their dtype, so this is a float64 tensor.
    assert s.layout is F.sparse_coo and s.dtype == F.float64 and s.shape == (2, 3)
    np.testing.assert_array_equal(s.to_dense().numpy(), [[0, 1, 0], [2, 0, 0]])
    e = F.sparse.FloatTensor(2, 3)
    assert e.shape == (2, 3) and e._nnz() == 0 and e.dtype == F.float32
    assert F.sparse.LongTensor().shape == (0,)
    assert F.sparse.DoubleTensor(F.Size([4])).shape == (4,)
    assert isinstance(e, F.sparse.FloatTensor) and not isinstance(e, F.sparse.DoubleTensor)
    assert not isinstance(F.zeros(2), F.sparse.FloatTensor)
    assert not isinstance(e, F.FloatTensor)  # the dense type is for strided tensors
    assert e.type() == "torch.sparse.FloatTensor"
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        F.sparse.FloatTensor(F.zeros(2))
    with pytest.raises(RuntimeError, match="expects device type: cpu"):
        F.sparse.FloatTensor(2, device="meta")


def test_dsmm_and_hsmm_are_the_older_names_of_spmm_and_hspmm():
    s = F.tensor([[0.0, 2.0], [1.0, 0.0]]).to_sparse()
    d = F.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_array_equal(F.dsmm(s, d).numpy(), F.spmm(s, d).numpy())
    h = F.hsmm(s, d)
    assert h.layout is F.sparse_coo
    np.testing.assert_array_equal(h.to_dense().numpy(), F.hspmm(s, d).to_dense().numpy())


def test_batched_sparse_transposes_and_permute_match_dense():
    rng = np.random.default_rng(0)
    d = F.tensor(rng.standard_normal((2, 3, 4)) * (rng.random((2, 3, 4)) > 0.5))
    s = d.to_sparse()
    np.testing.assert_array_equal(s.mT.to_dense().numpy(), d.mT.numpy())
    np.testing.assert_array_equal(s.mH.to_dense().numpy(), d.mH.numpy())
    with pytest.warns(UserWarning, match="x.T"):
        np.testing.assert_array_equal(s.T.to_dense().numpy(), d.permute(2, 1, 0).numpy())
    np.testing.assert_array_equal(s.permute(1, 2, 0).to_dense().numpy(), d.permute(1, 2, 0).numpy())
    with pytest.raises(RuntimeError, match="tensor.H is only supported on matrices"):
        _ = s.H
    c = F.tensor([[1 + 2j, 0], [0, 3 - 1j]]).to_sparse()
    np.testing.assert_array_equal(c.H.to_dense().numpy(), c.to_dense().H.numpy())
    np.testing.assert_array_equal(c.conj().to_dense().numpy(), np.conj(c.to_dense().numpy()))
    hybrid = d.to_sparse(sparse_dim=1)  # PyTorch's keyword for sparseDims
    assert hybrid.sparse_dim() == 1
    np.testing.assert_array_equal(
        hybrid.permute(0, 2, 1).to_dense().numpy(), d.permute(0, 2, 1).numpy()
    )
    with pytest.raises(RuntimeError, match="between sparse and dense dimensions"):
        hybrid.permute(1, 0, 2)


def test_sparse_coo_tensor_of_a_size_alone_is_empty():
    for s in (F.sparse_coo_tensor(size=(5, 3)), F.sparse_coo_tensor((5, 3))):
        assert s.shape == (5, 3) and s._nnz() == 0 and s.sparse_dim() == 2
        assert s.dtype == F.float32 and s.to_dense().abs().sum().item() == 0
    assert F.sparse_coo_tensor(size=(2,), dtype=F.float64).dtype == F.float64
    with pytest.raises(TypeError, match="indices and values, or size"):
        F.sparse_coo_tensor()
    with pytest.raises(TypeError, match="both indices and values"):
        F.sparse_coo_tensor([[0, 1]], size=(2,))
