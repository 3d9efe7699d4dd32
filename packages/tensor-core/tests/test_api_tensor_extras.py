"""Tensor methods about subclasses, memory and layout (flambeau._tensor_extras), grad_dtype
without flambeau.autograd, and flambeau.conv_tbc (the core's, which nn.functional shares)."""

import warnings

import numpy as np
import pytest

import flambeau as torch


class Marked(torch.Tensor):
    __slots__ = ()

    def mark(self):
        return "marked"


# ---- as_subclass ------------------------------------------------------------------------------


def test_as_subclass_views_the_same_memory_as_the_subclass():
    x = torch.arange(4.0)
    y = x.as_subclass(Marked)
    assert type(y) is Marked and y.mark() == "marked" and y is not x
    assert y.data_ptr() == x.data_ptr()
    y[0] = 7.0
    assert x[0].item() == 7.0
    assert type(y.as_subclass(torch.Tensor)) is torch.Tensor
    assert type(x.as_subclass(torch.Tensor)) is torch.Tensor


def test_as_subclass_stays_in_the_autograd_graph():
    pytest.importorskip("flambeau.autograd")
    x = torch.ones(3, requires_grad=True)
    y = x.as_subclass(Marked)
    assert y.requires_grad and y.grad_fn is not None
    (y * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_as_subclass_errors():
    x = torch.ones(2)
    with pytest.raises(TypeError, match="cls must be a type \\(got str\\)"):
        x.as_subclass("a")
    with pytest.raises(TypeError, match="does not inherit from Tensor"):
        x.as_subclass(int)

    class WithSlots(torch.Tensor):
        __slots__ = ("unit",)

    with pytest.raises(TypeError, match="no __slots__ of its own\\) to WithSlots"):
        x.as_subclass(WithSlots)


def test_a_subclass_needs_no_slots_declaration():
    # `class MyTensor(Tensor): pass`, the way PyTorch users write them: as_subclass, the
    # constructor and _make_subclass make its instances, which take attributes.
    class Plain(torch.Tensor):
        pass

    class Built(torch.Tensor):
        def __new__(cls, data, unit):
            t = torch.Tensor._make_subclass(cls, data)
            t.unit = unit
            return t

        def __init__(self, data, unit):
            pass

    x = torch.arange(3.0)
    y = x.as_subclass(Plain)
    y.note = "kept"
    assert type(y) is Plain and y.note == "kept" and y.data_ptr() == x.data_ptr()
    assert type(y + 1) is Plain and repr(y) == "Plain([0., 1., 2.])"
    assert type(Plain([1.0, 2.0])) is Plain
    b = Built(x, "m")
    assert type(b) is Built and b.unit == "m" and b.data_ptr() == x.data_ptr()
    assert repr(x) == "tensor([0., 1., 2.])"


def test_make_subclass_makes_a_detached_leaf_of_the_subclass():
    pytest.importorskip("flambeau.autograd")
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    z = torch.Tensor._make_subclass(Marked, y)
    assert type(z) is Marked and z.is_leaf and z.grad_fn is None and not z.requires_grad
    assert z.data_ptr() == y.data_ptr()
    w = torch.Tensor._make_subclass(Marked, y, True)
    assert w.requires_grad and w.is_leaf
    (w * 3).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 3.0, 3.0])
    assert x.grad is None  # outside y's graph
    seen = []

    class Logged(torch.Tensor):
        __slots__ = ()

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)

    torch.Tensor._make_subclass(Logged, y, True)
    assert seen == []  # building the instance is not an operation on it
    with pytest.raises(TypeError, match="does not inherit from Tensor"):
        torch.Tensor._make_subclass(int, y)
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        torch.Tensor._make_subclass(Marked, 3)


# ---- module_load ----------------------------------------------------------------------------


def test_module_load_copies_or_assigns():
    x = torch.ones(3)
    other = torch.tensor([1.0, 2.0, 3.0])
    out = x.module_load(other)
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0, 3.0])
    assert out.data_ptr() == x.data_ptr() and out is not x and not out.requires_grad
    assigned = x.module_load(torch.zeros(5), assign=True)
    assert tuple(assigned.shape) == (5,)
    with pytest.raises(RuntimeError):
        x.module_load(torch.zeros(4))


# ---- pinned memory and streams ------------------------------------------------------------------


def test_pin_memory_without_an_accelerator():
    x = torch.ones(2)
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none"):
        x.pin_memory()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="CPU device type not an accelerator"):
            x.pin_memory("cpu")
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    assert x.is_pinned() is False


def test_record_stream_of_a_cpu_tensor():
    x = torch.ones(2)
    with pytest.raises(NotImplementedError, match="CPU tensors are not allocated on streams"):
        x.record_stream(torch.Stream())
    with pytest.raises(RuntimeError, match="expected a Stream, got int"):
        x.record_stream(1)


# ---- the answers of a dense tensor to sparse-layout queries ---------------------------------


def test_dense_tensor_layout_queries():
    x = torch.ones(2, 3)
    assert (x.dense_dim(), x.sparse_dim()) == (2, 0)
    assert (torch.tensor(1.0).dense_dim(), torch.tensor(1.0).sparse_dim()) == (0, 0)
    assert x.to_dense() is x and x.to_dense(torch.float32) is x
    assert x.to_dense(masked_grad=True) is x
    converted = x.to_dense(torch.float64)
    assert converted.dtype == torch.float64 and (converted.numpy() == 1).all()
    with pytest.raises(RuntimeError, match="expected sparse coordinate tensor layout"):
        x.is_coalesced()


# ---- grad_dtype (the attribute; backward's casting is tested with flambeau.autograd) --------


def test_grad_dtype_defaults_to_dtype_and_is_settable_on_leaves():
    x = torch.ones(2, dtype=torch.float64)
    assert x.grad_dtype == torch.float64
    x.grad_dtype = torch.float16
    assert x.grad_dtype == torch.float16
    x.grad_dtype = None
    assert x.grad_dtype is None
    with pytest.raises(RuntimeError, match="grad_dtype must be a flambeau.dtype or None"):
        x.grad_dtype = "a"
    assert torch.ones(2, dtype=torch.int64).grad_dtype == torch.int64


# ---- conv_tbc ---------------------------------------------------------------------------------


def conv_tbc_reference(x, w, b, pad):
    x = np.pad(x, ((pad, pad), (0, 0), (0, 0))) if pad >= 0 else x[-pad : x.shape[0] + pad]
    steps = x.shape[0] - w.shape[0] + 1
    return np.stack([b + sum(x[t + k] @ w[k] for k in range(w.shape[0])) for t in range(steps)])


@pytest.mark.parametrize("pad", [0, 2, -1])
def test_conv_tbc_matches_numpy(pad):
    rng = np.random.default_rng(9)
    x, w, b = rng.standard_normal((7, 2, 3)), rng.standard_normal((3, 3, 5)), rng.standard_normal(5)
    out = torch.conv_tbc(torch.tensor(x), torch.tensor(w), torch.tensor(b), pad)
    np.testing.assert_allclose(out.numpy(), conv_tbc_reference(x, w, b, pad), atol=1e-12)


def test_conv_tbc_errors():
    x, w, b = torch.ones(5, 2, 3), torch.ones(2, 3, 4), torch.ones(4)
    with pytest.raises(RuntimeError, match="Input must have 3 dims"):
        torch.conv_tbc(torch.ones(5, 2), w, b)
    with pytest.raises(RuntimeError, match="kernel width"):
        torch.conv_tbc(torch.ones(3, 2, 3), w, b, -2)
    with pytest.raises(TypeError, match="'pad' \\(position 4\\) must be int"):
        torch.conv_tbc(x, w, b, 1.5)


def test_assigning_grad_checks_what_pytorch_checks():
    x = torch.ones(2)
    with pytest.raises(TypeError, match="Tensor or None but got grad of type list"):
        x.grad = [1.0, 2.0]
    with pytest.raises(RuntimeError, match=r"gradient of size '\[3\]' to a tensor of size '\[2\]'"):
        x.grad = torch.ones(3)
    with pytest.raises(RuntimeError, match="dtype 'float64' to a tensor with grad_dtype 'float32'"):
        x.grad = torch.ones(2, dtype=torch.float64)
    assert x.grad is None
    x.grad = torch.full((2,), 3.0)
    assert x.grad.tolist() == [3.0, 3.0]
    x.grad = None
    assert x.grad is None
    y = torch.ones(2, 3)
    y.grad = torch.ones(3, 2).t()  # any strides
    assert y.grad.stride() == (1, 2)
