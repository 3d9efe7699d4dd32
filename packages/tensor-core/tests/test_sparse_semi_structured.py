"""Semi-structured (2:4) sparse matrices on the CPU against dense NumPy references."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import flambeau as F

nn = pytest.importorskip("flambeau.nn")
Fn = pytest.importorskip("flambeau.nn.functional")
from flambeau.autograd import gradcheck  # noqa: E402
from flambeau.sparse import (  # noqa: E402
    SparseSemiStructuredTensor,
    SparseSemiStructuredTensorCUSPARSELT,
    SparseSemiStructuredTensorCUTLASS,
    to_sparse_semi_structured,
)

pytestmark = pytest.mark.filterwarnings("ignore:The flambeau API of SparseSemiStructuredTensor")

CUSPARSELT, CUTLASS = SparseSemiStructuredTensorCUSPARSELT, SparseSemiStructuredTensorCUTLASS
CASES = [  # backend, dtype, shape, group (float32 under CUTLASS keeps one of two)
    (CUSPARSELT, F.float16, (16, 32), 4),
    (CUSPARSELT, F.bfloat16, (32, 16), 4),
    (CUSPARSELT, F.int8, (32, 64), 4),
    (CUTLASS, F.float16, (64, 64), 4),
    (CUTLASS, F.bfloat16, (32, 128), 4),
    (CUTLASS, F.int8, (16, 128), 4),
    (CUTLASS, F.float32, (32, 32), 2),
]
IDS = [f"{b.BACKEND}-{str(d).split('.')[-1]}" for b, d, _, _ in CASES]


def pattern(shape, group=4, seed=0, exact=True):
    """Small nonzero integers (exact in every dtype) with half of each row's groups of
    `group` consecutive elements zero (exact: exactly half nonzero, else at most)."""
    rng = np.random.default_rng(seed)
    rows, cols = shape
    a = rng.integers(1, 6, size=shape).astype(np.float32) * rng.choice([-1, 1], size=shape)
    for r in range(rows):
        for g in range(cols // group):
            n = group // 2 if exact else rng.integers(0, group // 2 + 1)
            zero = np.ones(group, bool)
            zero[rng.choice(group, size=n, replace=False)] = False
            a[r, g * group : (g + 1) * group][zero] = 0
    return a.astype(np.float32)


def compress(backend, a, dtype):
    return backend.from_dense(F.tensor(a).to(dtype))


def dense(t):
    return t.detach().to(F.float32).numpy()


@pytest.mark.parametrize("backend,dtype,shape,group", CASES, ids=IDS)
def test_round_trip_and_values(backend, dtype, shape, group):
    a = pattern(shape, group)
    s = compress(backend, a, dtype)
    assert type(s) is backend and isinstance(s, (SparseSemiStructuredTensor, F.Tensor))
    assert tuple(s.shape) == shape and s.dtype is dtype and s.layout is F.strided
    np.testing.assert_array_equal(dense(s.to_dense()), a)
    # the kept values, row by row, in column order
    np.testing.assert_array_equal(dense(s.values()), a[a != 0].reshape(shape[0], -1))
    # the backend's own layout rebuilds the same matrix
    rebuilt = backend(s.shape, s.packed, s.meta, None, None, None)
    np.testing.assert_array_equal(dense(rebuilt.to_dense()), a)
    rebuilt_t = backend(s.t().shape, None, None, s.packed, s.meta, None)
    np.testing.assert_array_equal(dense(rebuilt_t.to_dense()), a.T)


@pytest.mark.parametrize("backend,dtype,shape,group", CASES, ids=IDS)
def test_groups_with_fewer_nonzeros(backend, dtype, shape, group):
    a = pattern(shape, group, seed=3, exact=False)
    np.testing.assert_array_equal(dense(compress(backend, a, dtype).to_dense()), a)


@pytest.mark.parametrize(
    "backend,dtype,words",
    [
        (CUTLASS, F.float16, (128, 8)),
        (CUTLASS, F.int8, (128, 4)),
        (CUSPARSELT, F.float16, (128, 8)),
    ],
)
@pytest.mark.parametrize("group,code", [((0, 0, 1, 1), 0b1110), ((1, 1, 0, 0), 0b0100)])
def test_metadata_codes(backend, dtype, words, group, code):
    """Each group's code is first | second << 2 (the kept positions), four (eight for
    int8's 32-bit words) to a word, low bits first."""
    a = np.tile(np.array(group, dtype=np.float32), (128, 32))
    meta = compress(backend, a, dtype).indices()
    per_word = 8 if meta.dtype is F.int32 else 4
    word = sum(code << (4 * i) for i in range(per_word))
    word -= (word >= 2 ** (4 * per_word - 1)) * 2 ** (4 * per_word)
    assert meta.dtype is (F.int32 if per_word == 8 else F.int16)
    assert tuple(meta.shape) == words
    assert (meta.to(F.int64).numpy() == word).all()


def test_cusparselt_packed_buffer():
    a = pattern((16, 32))
    s = compress(CUSPARSELT, a, F.float16)
    assert s.meta is None and s.packed.dim() == 1
    assert s.packed.numel() == 16 * 32 // 2 + 16 * 32 // 16
    np.testing.assert_array_equal(dense(s.packed[: 16 * 16]), a[a != 0])


@pytest.mark.parametrize("backend,dtype,shape,group", CASES, ids=IDS)
def test_products_match_dense(backend, dtype, shape, group):
    a = pattern(shape, group)
    s = compress(backend, a, dtype)
    rng = np.random.default_rng(1)
    b = rng.integers(-2, 3, size=(shape[1], 5)).astype(np.float32)
    x = rng.integers(-2, 3, size=(3, shape[1])).astype(np.float32)
    bias = rng.integers(-2, 3, size=shape[0]).astype(np.float32)
    B, X, Bias = (F.tensor(v).to(dtype) for v in (b, x, bias))
    np.testing.assert_array_equal(dense(F.mm(s, B)), a @ b)
    np.testing.assert_array_equal(dense(s @ B), a @ b)
    np.testing.assert_array_equal(dense(F.mm(X, s.t())), x @ a.T)
    np.testing.assert_array_equal(dense(F.matmul(X, s.t())), x @ a.T)
    np.testing.assert_array_equal(dense(F.addmm(Bias, X, s.t())), x @ a.T + bias)
    np.testing.assert_array_equal(dense(F.sparse.mm(s, B)), a @ b)
    assert F.mm(s, B).dtype is dtype


def test_addmm_beta_alpha_and_linear():
    a = pattern((16, 32))
    s = compress(CUSPARSELT, a, F.float16)
    x = np.arange(4 * 2 * 32, dtype=np.float32).reshape(4, 2, 32) % 5 - 2
    bias = np.arange(16, dtype=np.float32) % 3
    X, Bias = F.tensor(x).half(), F.tensor(bias).half()
    out = F.addmm(Bias, X[0], s.t(), beta=2, alpha=0.5)
    np.testing.assert_array_equal(dense(out), 2 * bias + 0.5 * (x[0] @ a.T))
    lin = Fn.linear(X, s, Bias)
    assert tuple(lin.shape) == (4, 2, 16)
    np.testing.assert_array_equal(dense(lin), x @ a.T + bias)
    np.testing.assert_array_equal(dense(Fn.linear(X[0], s)), x[0] @ a.T)


def test_nn_linear_with_semi_structured_weight():
    """PyTorch's recipe: prune a Linear's weight to 2:4, swap in the compressed form."""
    F.manual_seed(0)
    layer = nn.Linear(64, 32).half()
    mask = F.tensor([0, 1, 1, 0]).tile((32, 16)).bool()
    layer.weight = nn.Parameter(layer.weight.detach().masked_fill(~mask, 0))
    x = F.randn(8, 64).half()
    expected = (x.float() @ layer.weight.detach().float().t() + layer.bias.detach().float()).numpy()
    layer.weight = nn.Parameter(to_sparse_semi_structured(layer.weight), requires_grad=False)
    assert isinstance(layer.weight, nn.Parameter)
    assert isinstance(layer.weight, SparseSemiStructuredTensorCUSPARSELT)
    assert dict(layer.named_parameters())["weight"] is layer.weight
    np.testing.assert_allclose(dense(layer(x)), expected, rtol=1e-2, atol=1e-2)
    clone = copy.deepcopy(layer)
    assert isinstance(clone.weight, nn.Parameter)
    assert isinstance(clone.weight, SparseSemiStructuredTensor)
    np.testing.assert_array_equal(dense(clone(x)), dense(layer(x)))


@pytest.mark.filterwarnings("ignore:gradcheck. input 0 is flambeau.float32")
def test_gradients_through_linear():
    a = pattern((32, 32), group=2)
    s = compress(CUTLASS, a, F.float32)
    x = F.tensor(np.random.default_rng(2).standard_normal((3, 32)).astype(np.float32))
    x.requires_grad_(True)
    Fn.linear(x, s).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.ones((3, 32)) @ a, rtol=1e-6)
    assert gradcheck(lambda v: Fn.linear(v, s), (x.detach().requires_grad_(),), eps=1e-2,
                     atol=1e-2, rtol=1e-2)  # fmt: skip


def test_weight_gradient_is_masked_to_the_pattern():
    a = pattern((32, 32), group=2)
    s = CUTLASS.from_dense(F.tensor(a).requires_grad_())
    assert s.requires_grad and s.is_leaf
    x = F.ones(4, 32)
    Fn.linear(x, s).sum().backward()
    assert isinstance(s.grad, CUTLASS)
    np.testing.assert_array_equal(s.grad.to_dense().numpy(), 4.0 * (a != 0))


def test_transpose_orientations():
    a = pattern((16, 16))
    s = compress(CUSPARSELT, a, F.float16)
    st = s.t()
    assert tuple(st.shape) == (16, 16) and st.packed is None and st.packed_t is not None
    assert s.packed_t is None
    np.testing.assert_array_equal(dense(st.to_dense()), a.T)
    np.testing.assert_array_equal(dense(st.t().to_dense()), a)
    b = F.eye(16).half()
    with pytest.raises(NotImplementedError, match="operation is not supported"):
        F.mm(st, b)
    with pytest.raises(NotImplementedError, match="operation is not supported"):
        F.mm(b, s)
    with pytest.raises(AssertionError, match="packed is None"):
        st.values()


def test_not_two_four_is_rejected():
    a = pattern((16, 16))
    a[3, 4:8] = [1, 2, 3, 0]
    with pytest.raises(RuntimeError, match=r"not 2:4 .* Row 3, columns 4\.\.7 hold 3"):
        to_sparse_semi_structured(F.tensor(a).half())
    b = pattern((32, 32))  # 2:4, but float32 under CUTLASS must be 1:2
    b[0, 0:4] = [1, 1, 0, 0]
    with pytest.raises(RuntimeError, match="not 1:2"):
        CUTLASS.from_dense(F.tensor(b))


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: F.zeros(16, 16), "not a supported dtype"),  # float32: not cuSPARSELt's
        (lambda: F.zeros(16, 16, dtype=F.float64), "not a supported dtype"),
        (lambda: F.zeros(16, 24).half(), r"multiple of \(16, 16\)"),
        (lambda: F.zeros(8, 16).half(), r"multiple of \(16, 16\)"),
        (lambda: F.zeros(16, 16, 16).half(), "dim = 3 is not supported"),
        (lambda: F.zeros(32, 32).half().t()[:16], "not contiguous"),
    ],
)
def test_dtype_shape_constraints(make, message):
    with pytest.raises(RuntimeError, match=message):
        to_sparse_semi_structured(make())


def test_cutlass_constraints():
    with pytest.raises(RuntimeError, match=r"multiple of \(32, 64\)"):
        CUTLASS.from_dense(F.zeros(32, 32).half())
    CUTLASS.from_dense(F.zeros(32, 32))  # float32: (32, 32)


def test_force_cutlass_and_deprecated_transposed(monkeypatch):
    a = F.tensor(pattern((32, 64))).half()
    monkeypatch.setattr(SparseSemiStructuredTensor, "_FORCE_CUTLASS", True)
    assert type(to_sparse_semi_structured(a)) is CUTLASS
    monkeypatch.setattr(SparseSemiStructuredTensor, "_FORCE_CUTLASS", False)
    with pytest.warns(FutureWarning, match="deprecated"):
        s = to_sparse_semi_structured(a, transposed=True)
    assert type(s) is CUSPARSELT and s.alg_id_cusparselt == 0


def test_unsupported_operations_raise():
    s = compress(CUSPARSELT, pattern((16, 16)), F.float16)
    for call in (lambda: s.exp(), lambda: F.exp(s), lambda: s + 1, lambda: s.sum(),
                 lambda: s.numpy(), lambda: s[0], lambda: s.reshape(256)):  # fmt: skip
        with pytest.raises(NotImplementedError):
            call()
    with pytest.raises(ValueError, match="not supported by the hardware"):
        F.mm(s, s.t())
    with pytest.raises(NotImplementedError, match="same data type"):
        F.mm(s, F.ones(16, 2))
    with pytest.raises(NotImplementedError, match="Broadcasting"):
        F.mm(s, F.ones(16).half())
    with pytest.raises(NotImplementedError, match="only operand B"):
        F.addmm(F.ones(16).half(), s, F.ones(16, 16).half())
    with pytest.raises(NotImplementedError, match="only bias dim=1"):
        F.addmm(F.ones(2, 16).half(), F.ones(2, 16).half(), s.t())
    with pytest.raises(NotImplementedError, match="view"):
        s.view(8, 32)
    assert s.view(16, 16) is s


def test_to_clone_detach_pickle():
    a = pattern((16, 16))
    s = compress(CUSPARSELT, a, F.float16)
    assert s.to("cpu") is s and s.cpu() is s and s.half() is s
    with pytest.raises(NotImplementedError):
        s.to(F.float32)
    with pytest.raises(NotImplementedError):
        s.float()
    for other in (s.clone(), s.detach(), pickle.loads(pickle.dumps(s))):
        assert type(other) is CUSPARSELT
        np.testing.assert_array_equal(dense(other.to_dense()), a)
    assert repr(s) == "SparseSemiStructuredTensorCUSPARSELT(shape=flambeau.Size([16, 16]))"


def test_base_class_cannot_be_built():
    with pytest.raises(NotImplementedError):
        SparseSemiStructuredTensor.from_dense(F.zeros(16, 16).half())
    with pytest.raises(ValueError, match="At least one of packed or packed_t"):
        CUSPARSELT((16, 16), None, None, None, None, None)


def test_namespace():
    import flambeau.sparse.semi_structured as ss

    assert F.sparse.to_sparse_semi_structured is ss.to_sparse_semi_structured
    assert F.sparse.SparseSemiStructuredTensorCUTLASS is ss.SparseSemiStructuredTensorCUTLASS
