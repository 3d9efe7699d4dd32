"""A sparse tensor never computes on its dense placeholder: every Tensor method it does
not implement raises (NotImplementedError in PyTorch's words, or RuntimeError/TypeError),
never returns a value."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau as F

SAMPLE = [
    "numpy", "tolist", "item", "data_ptr", "stride", "storage_offset", "untyped_storage",
    "exp", "cos", "log", "view", "reshape", "flatten", "contiguous", "expand", "repeat",
    "__getitem__", "__setitem__", "__iter__", "__bool__", "__float__", "__int__", "__index__",
    "__array__", "__eq__", "__lt__", "__and__", "__invert__", "__rtruediv__", "__mod__",
    "mean", "max", "argmax", "norm", "cumsum", "sort", "topk", "copy_", "fill_", "uniform_",
    "normal_", "masked_fill", "where", "gather", "scatter", "unsqueeze", "squeeze", "permute",
    "backward", "register_hook", "retain_grad", "storage", "share_memory_", "pin_memory",
    "new_zeros", "new_tensor", "resize_", "set_", "bmm", "outer", "dot", "mv",
]  # fmt: skip


def _sparse_tensors():
    coo = F.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2))
    csr = coo.to_sparse_csr()
    return [pytest.param(coo, id="coo"), pytest.param(csr, id="csr")]


def _arguments(name):
    if name in ("__getitem__",):
        return ((0, 0),)
    if name in ("__setitem__",):
        return (0, 1.0)
    if name in ("view", "reshape"):
        return (4,)
    if name in ("expand", "repeat"):
        return (2, 2)
    if name in ("__eq__", "__lt__", "__and__", "__rtruediv__", "__mod__", "copy_", "dot", "outer"):
        return (F.ones(2, 2),)
    if name in ("fill_",):
        return (1.0,)
    if name in ("masked_fill",):
        return (F.ones(2, 2, dtype=F.bool), 0.0)
    if name in ("gather", "scatter"):
        return (0, F.zeros(2, 2, dtype=F.int64)) + ((F.ones(2, 2),) if name == "scatter" else ())
    if name in ("unsqueeze", "cumsum"):
        return (0,)
    if name == "permute":
        return (1, 0)
    if name in ("register_hook",):
        return (lambda g: g,)
    if name in ("resize_",):
        return (4,)
    if name in ("bmm", "mv"):
        return (F.ones(2),)
    return ()


@pytest.mark.parametrize("s", _sparse_tensors())
@pytest.mark.parametrize("name", SAMPLE)
def test_unsupported_methods_raise(s, name):
    method = getattr(s, name, None)
    if method is None:
        pytest.skip(f"flambeau.Tensor has no {name}")
    if name == "permute" and s.layout is F.sparse_coo:
        pytest.skip("COO tensors permute (test_sparse_coo.py)")
    with pytest.raises((NotImplementedError, RuntimeError, TypeError)):
        method(*_arguments(name))


@pytest.mark.parametrize("s", _sparse_tensors())
def test_functions_raise_pytorchs_error(s):
    backend = "SparseCPU" if s.layout is F.sparse_coo else "SparseCsrCPU"
    with pytest.raises(NotImplementedError, match=f"Could not run 'aten::exp' .*'{backend}'"):
        F.exp(s)
    with pytest.raises(NotImplementedError, match="aten::cumsum"):
        F.cumsum(s, 0)
    with pytest.raises(NotImplementedError, match="aten::clamp"):
        F.clamp(s, 0)


@pytest.mark.parametrize("s", _sparse_tensors())
def test_properties_that_read_memory_raise(s):
    # (A COO tensor's H and mH are its transposes' conj: test_sparse_coo.py.)
    for name in ("real", "imag") if s.layout is F.sparse_coo else ("real", "imag", "H", "mH"):
        with pytest.raises((NotImplementedError, RuntimeError)):
            getattr(s, name)


def test_tensor_methods_added_later_are_blocked():
    """Blocking comes from dir(Tensor): the list of safe attributes is short and known."""
    import inspect

    from flambeau.sparse._base import SAFE

    coo = F.sparse_coo_tensor([[0]], [1.0], (2,))
    sparse_classes = type(coo).__mro__[: type(coo).__mro__.index(F.Tensor)]
    for name in dir(F.Tensor):
        attr = inspect.getattr_static(F.Tensor, name)
        if (
            name in SAFE
            or name.startswith("is_")
            or not (callable(attr) or isinstance(attr, property))
        ):
            continue
        assert any(name in k.__dict__ for k in sparse_classes), name


@pytest.mark.parametrize("s", _sparse_tensors())
def test_functions_over_lists_of_sparse_tensors_raise_pytorchs_error(s):
    # The sparse tensor is inside a list: the error names the operator and the layout.
    backend = "SparseCPU" if s.layout is F.sparse_coo else "SparseCsrCPU"
    with pytest.raises(NotImplementedError, match=f"Could not run 'aten::stack' .*'{backend}'"):
        F.stack([s, s])


def test_foreach_over_sparse_tensors_runs_one_tensor_at_a_time():
    """PyTorch's slow path of the _foreach_* operators: the per-tensor operator at each
    position (what SGD with momentum does with the sparse gradients of an embedding)."""
    idx = [[0, 2, 2]]
    rows = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    expected = np.zeros((4, 2))
    np.add.at(expected, idx[0], rows)  # the repeated row 2 sums

    grads = [F.sparse_coo_tensor(idx, F.tensor(rows.tolist()), (4, 2)) for _ in range(2)]
    params = [F.zeros(4, 2), F.ones(4, 2)]
    assert F._foreach_add_(params, grads, alpha=-0.5) is params
    np.testing.assert_allclose(params[0].numpy(), -0.5 * expected)
    np.testing.assert_allclose(params[1].numpy(), 1 - 0.5 * expected)

    bufs = [g.clone() for g in grads]
    F._foreach_mul_(bufs, 0.9)
    F._foreach_add_(bufs, grads, alpha=0.5)
    for b in bufs:
        assert b.is_sparse
        np.testing.assert_allclose(b.to_dense().numpy(), 1.4 * expected, rtol=1e-6)

    summed = F._foreach_add(grads, bufs, alpha=2.0)
    assert isinstance(summed, tuple) and len(summed) == 2 and all(t.is_sparse for t in summed)
    np.testing.assert_allclose(summed[1].to_dense().numpy(), 3.8 * expected, rtol=1e-6)
    negated = F._foreach_neg(grads)
    np.testing.assert_allclose(negated[0].to_dense().numpy(), -expected)

    # A scalar per position, and addcmul's value taken from the positional scalar.
    dense = [F.zeros(4, 2), F.zeros(4, 2)]
    F._foreach_add_(dense, grads, alpha=1.0)
    F._foreach_addcmul_(dense, [F.ones(4, 2)] * 2, [F.ones(4, 2)] * 2, [2.0, 3.0])
    np.testing.assert_allclose(dense[0].numpy(), expected + 2)
    np.testing.assert_allclose(dense[1].numpy(), expected + 3)

    # What a sparse tensor cannot do still raises PyTorch's error, per tensor.
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        F._foreach_add(grads, 1.0)
