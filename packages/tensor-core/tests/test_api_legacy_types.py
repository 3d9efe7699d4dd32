"""PyTorch's dtype aliases, legacy tensor types and constructors, type strings, runtime
settings and the small Tensor attributes (flambeau._dtype_aliases, _legacy_constructors,
_runtime_config, _tensor_methods)."""

import math
import warnings

import numpy as np
import pytest

import flambeau as torch


def test_dtype_aliases_are_the_canonical_dtypes():
    assert torch.float is torch.float32 and torch.double is torch.float64
    assert torch.half is torch.float16 and torch.long is torch.int64
    assert torch.int is torch.int32 and torch.short is torch.int16
    assert torch.cfloat is torch.complex64 and torch.cdouble is torch.complex128
    assert torch.zeros(2, dtype=torch.long).dtype == torch.int64


def test_constants():
    assert torch.pi == math.pi and torch.e == math.e
    assert torch.inf == math.inf and math.isnan(torch.nan)
    assert torch.newaxis is None
    assert torch.zeros(2, 3)[:, torch.newaxis].shape == (2, 1, 3)


def test_layout():
    assert torch.zeros(2).layout is torch.strided
    assert isinstance(torch.strided, torch.layout)
    assert repr(torch.strided) == "flambeau.strided"


def test_tensor_constructor_forms():
    assert torch.Tensor().shape == (0,) and torch.Tensor().dtype == torch.float32
    assert torch.Tensor(2, 3).shape == (2, 3)
    assert torch.Tensor(torch.Size([4])).shape == (4,)
    np.testing.assert_array_equal(torch.Tensor([1, 2]).numpy(), [1.0, 2.0])
    assert torch.Tensor([1, 2]).dtype == torch.float32
    # A tuple is data, a Size is a shape.
    np.testing.assert_array_equal(torch.Tensor((2, 3)).numpy(), [2.0, 3.0])
    src = torch.tensor([1, 2])
    alias = torch.Tensor(src)
    assert alias.dtype == torch.int64 and alias.data_ptr() == src.data_ptr()


def test_subclass_constructor_makes_a_subclass_instance():
    class Marked(torch.Tensor):
        __slots__ = ()

    x = torch.arange(3.0)
    from_tensor = Marked(x)  # an alias of x, as Tensor(x) is
    assert type(from_tensor) is Marked and from_tensor is not x and type(x) is torch.Tensor
    assert from_tensor.data_ptr() == x.data_ptr()
    from_data = Marked([1.0, 2.0])
    assert type(from_data) is Marked and from_data.tolist() == [1.0, 2.0]
    from_sizes = Marked(2, 3)
    assert type(from_sizes) is Marked and from_sizes.shape == (2, 3)
    assert type(torch.Tensor([1.0])) is torch.Tensor


def test_tensor_constructor_follows_default_dtype():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.Tensor(2).dtype == torch.float64
        assert torch.FloatTensor(2).dtype == torch.float32
    finally:
        torch.set_default_dtype(old)


@pytest.mark.parametrize(
    "name, dtype",
    [
        ("FloatTensor", "float32"),
        ("DoubleTensor", "float64"),
        ("HalfTensor", "float16"),
        ("BFloat16Tensor", "bfloat16"),
        ("LongTensor", "int64"),
        ("IntTensor", "int32"),
        ("ShortTensor", "int16"),
        ("CharTensor", "int8"),
        ("ByteTensor", "uint8"),
        ("BoolTensor", "bool"),
    ],
)
def test_legacy_types(name, dtype):
    cls = getattr(torch, name)
    dt = getattr(torch, dtype)
    assert cls.dtype is dt
    assert cls(2, 3).shape == (2, 3) and cls(2, 3).dtype == dt
    assert cls().shape == (0,)
    assert cls([1, 0]).dtype == dt
    assert isinstance(torch.zeros(2, dtype=dt), cls)
    other = torch.float64 if dt != torch.float64 else torch.float32
    assert not isinstance(torch.zeros(2, dtype=other), cls)
    assert torch.zeros(2, dtype=dt).type() == f"torch.{name}"
    assert torch.zeros(2).type(cls).dtype == dt


def test_legacy_constructor_converts_data_and_checks_tensors():
    np.testing.assert_array_equal(torch.LongTensor([1.7, 2]).numpy(), [1, 2])
    np.testing.assert_array_equal(torch.FloatTensor(np.array([1, 2])).numpy(), [1.0, 2.0])
    t = torch.tensor([1, 2])
    assert torch.LongTensor(t).data_ptr() == t.data_ptr()
    with pytest.raises(TypeError):
        torch.FloatTensor(t)  # int64 data is not a FloatTensor
    with pytest.raises(TypeError, match="must be a sequence"):
        torch.FloatTensor(2.5)
    with pytest.raises(TypeError, match="invalid data type"):
        torch.FloatTensor("ab")
    with pytest.raises(RuntimeError, match="negative dimension"):
        torch.FloatTensor(-1)
    with pytest.raises(TypeError):
        torch.FloatTensor([1], [2])
    with pytest.raises(RuntimeError, match="expects device type: cpu"):
        torch.FloatTensor(2, device="cuda")


def test_type_strings_and_conversion():
    x = torch.zeros(2)
    assert x.type() == "torch.FloatTensor"
    assert torch.zeros(2, dtype=torch.complex64).type() == "torch.ComplexFloatTensor"
    assert x.type(torch.float32) is x
    assert x.type("torch.DoubleTensor").dtype == torch.float64
    assert x.type("flambeau.IntTensor").dtype == torch.int32
    assert x.type(torch.int64).dtype == torch.int64
    with pytest.raises(ValueError, match="invalid type"):
        x.type("foo")
    with pytest.raises(TypeError):
        x.type(3)


def test_typename():
    assert torch.typename(torch.zeros(2, dtype=torch.int64)) == "torch.LongTensor"
    assert torch.typename(3) == "int"
    assert torch.typename(np.zeros(1)) == "numpy.ndarray"
    assert torch.typename(np.ndarray) == "numpy.ndarray"


def test_cuda_without_backend_raises():
    with pytest.raises(AssertionError, match="CUDA"):
        torch.zeros(2).cuda()
    with pytest.raises(RuntimeError, match="xpu"):
        torch.zeros(2).xpu()


def test_default_device():
    assert torch.get_default_device() == torch.device("cpu")
    torch.set_default_device("cpu")
    torch.set_default_device(None)
    # As in PyTorch, setting a device nothing provides succeeds; making a tensor fails.
    torch.set_default_device("cuda")
    try:
        assert torch.get_default_device() == torch.device("cuda")
        with pytest.raises(RuntimeError, match="no backend for device type 'cuda'"):
            torch.zeros(1)
    finally:
        torch.set_default_device(None)
    assert torch.zeros(1).device == torch.device("cpu")
    # A device is a context manager making itself the default in the block (PyTorch 2.x).
    with torch.device("cpu") as d:
        assert d == torch.device("cpu") and torch.zeros(1).device == torch.device("cpu")
    with torch.device("meta"):
        assert torch.zeros(1).device == torch.device("meta")
        with torch.device("cpu"):
            assert torch.tensor([1.0]).device == torch.device("cpu")
        assert torch.get_default_device() == torch.device("meta")
    assert torch.get_default_device() == torch.device("cpu")


def test_runtime_settings():
    assert torch.has_lapack and torch.has_openmp and not torch.has_mkl
    old = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high")
    assert torch.get_float32_matmul_precision() == "high"
    with pytest.warns(UserWarning, match="no effect"):
        torch.set_float32_matmul_precision("bogus")
    assert torch.get_float32_matmul_precision() == "high"
    torch.set_float32_matmul_precision(old)
    torch.set_warn_always(True)
    assert torch.is_warn_always_enabled()
    torch.set_warn_always(False)
    assert not torch.is_warn_always_enabled()
    with pytest.raises(RuntimeError, match="positive integer"):
        torch.set_num_interop_threads(0)
    torch.set_num_interop_threads(3)
    assert torch.get_num_interop_threads() == 3
    torch.init_num_threads()
    assert torch.set_flush_denormal(True) is False


def test_predicates_and_device_attributes():
    x = torch.zeros(2, 3)
    for name in (
        "is_sparse",
        "is_sparse_csr",
        "is_quantized",
        "is_mkldnn",
        "is_nested",
        "is_meta",
        "is_xpu",
        "is_mps",
        "is_ipu",
        "is_maia",
        "is_mtia",
        "is_xla",
        "is_vulkan",
    ):
        assert getattr(x, name) is False, name
    assert x.get_device() == -1
    assert x.is_signed() and not torch.zeros(1, dtype=torch.uint8).is_signed()
    assert not torch.zeros(1, dtype=torch.bool).is_signed()
    assert not x.is_inference() and not x.is_neg() and not x.is_pinned()
    assert x.const_data_ptr() == x.data_ptr()
    assert x.output_nr == 0 and x.name is None
    with pytest.warns(UserWarning, match="volatile"):
        assert x.volatile is False


def test_dim_order_and_is_set_to():
    x = torch.zeros(2, 3, 4)
    assert x.dim_order() == (0, 1, 2)
    assert x.permute(2, 0, 1).dim_order() == (1, 2, 0)
    assert x.is_set_to(x.view(2, 3, 4))
    assert not x.is_set_to(x.transpose(0, 1))
    assert not x.is_set_to(torch.zeros(2, 3, 4))


def test_new_factories():
    x = torch.zeros(2, dtype=torch.float64)
    assert x.new_zeros(2, 3).shape == (2, 3) and x.new_zeros((2, 3)).dtype == torch.float64
    np.testing.assert_array_equal(x.new_ones(3).numpy(), np.ones(3))
    assert x.new_empty(4).shape == (4,)
    np.testing.assert_array_equal(x.new_full((2,), 7).numpy(), [7.0, 7.0])
    assert x.new_full((1,), 2, dtype=torch.int64).dtype == torch.int64
    y = torch.zeros(1, dtype=torch.int32).new_tensor([1.5])
    assert y.dtype == torch.int32 and y.item() == 1
    with pytest.warns(UserWarning, match="detach"):
        copy = x.new_tensor(x)
    assert copy.data_ptr() != x.data_ptr()
    s = x.new_empty_strided((2, 3), (1, 2))
    assert s.stride() == (1, 2) and s.dtype == torch.float64
    assert x.new_zeros(2, requires_grad=True).requires_grad


def test_sum_to_size():
    a = np.arange(6.0).reshape(2, 3)
    x = torch.tensor(a)
    np.testing.assert_array_equal(x.sum_to_size(1, 3).numpy(), a.sum(0, keepdims=True))
    np.testing.assert_array_equal(x.sum_to_size((2, 1)).numpy(), a.sum(1, keepdims=True))
    np.testing.assert_array_equal(x.sum_to_size(3).numpy(), a.sum(0))
    with pytest.raises(RuntimeError, match="not expandable"):
        x.sum_to_size(4)


def test_apply_and_map():
    y = torch.zeros(3)
    y.map_(torch.ones(3), lambda a, b: a + b + 1)
    y.apply_(lambda a: a * 2)
    np.testing.assert_array_equal(y.numpy(), [4.0, 4.0, 4.0])
    z = torch.arange(4.0).reshape(2, 2)
    z.map_(torch.tensor([10.0, 20.0]), lambda a, b: a * b)
    np.testing.assert_array_equal(z.numpy(), [[0.0, 20.0], [20.0, 60.0]])


def test_put():
    z = torch.zeros(2, 3)
    z.put_(torch.tensor([0, -1]), torch.tensor([5.0, 6.0]))
    np.testing.assert_array_equal(z.numpy(), [[5, 0, 0], [0, 0, 6]])
    acc = z.put(torch.tensor([1, 1]), torch.tensor([1.0, 2.0]), accumulate=True)
    assert acc[0, 1].item() == 3.0 and z[0, 1].item() == 0.0
    t = torch.zeros(3, 2).t()  # non-contiguous: indices are row-major in t's shape
    t.put_(torch.tensor([1]), torch.tensor([9.0]))
    assert t[0, 1].item() == 9.0
    with pytest.raises(IndexError, match="out of range"):
        z.put_(torch.tensor([6]), torch.tensor([1.0]))


def test_index_reduce():
    src = np.array([[1.0, 2], [3, 4], [5, 6]])
    idx = [0, 0, 2]
    base = np.full((3, 2), 10.0)
    for reduce, fn in (("prod", np.prod), ("amax", np.max), ("amin", np.min), ("mean", np.mean)):
        for include_self in (True, False):
            expected = base.copy()
            for row in range(3):
                members = [src[i] for i in range(3) if idx[i] == row]
                if not members:
                    continue
                pool = members + ([base[row]] if include_self else [])
                expected[row] = fn(np.stack(pool), axis=0)
            got = torch.tensor(base).index_reduce(
                0, torch.tensor(idx), torch.tensor(src), reduce, include_self=include_self
            )
            np.testing.assert_allclose(got.numpy(), expected, err_msg=f"{reduce} {include_self}")
    with pytest.raises(RuntimeError, match="reduce"):
        torch.zeros(2).index_reduce_(0, torch.tensor([0]), torch.ones(1), "sum")


def test_fill_diagonal():
    for shape, wrap in (((5, 3), True), ((5, 3), False), ((3, 5), False), ((3, 3), False)):
        a = np.zeros(shape)
        np.fill_diagonal(a, 2.0, wrap=wrap)
        x = torch.zeros(shape)
        x.fill_diagonal_(2.0, wrap=wrap)
        np.testing.assert_array_equal(x.numpy(), a)
    cube = torch.zeros(3, 3, 3)
    cube.fill_diagonal_(1.0)
    assert cube.sum().item() == 3.0 and cube[2, 2, 2].item() == 1.0
    with pytest.raises(RuntimeError, match="equal length"):
        torch.zeros(2, 3, 2).fill_diagonal_(1)


def test_complex_conversions():
    assert torch.zeros(2).cfloat().dtype == torch.complex64
    h = torch.tensor([[1.5, -2.0], [0.25, 4.0]]).t().chalf()
    assert h.dtype == torch.complex32 and h.stride() == (1, 2)  # preserve_format
    assert h.to(torch.complex64).tolist() == [[1.5 + 0j, 0.25 + 0j], [-2 + 0j, 4 + 0j]]
    assert torch.zeros(2).cdouble().dtype == torch.complex128


def test_warnings_silent_for_plain_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.FloatTensor(2)
        torch.zeros(2).type()


def test_is_inference_mode_enabled():
    assert not torch.is_inference_mode_enabled()
    with torch.inference_mode():
        assert torch.is_inference_mode_enabled() and not torch.is_grad_enabled()
        with torch.inference_mode(False):
            assert not torch.is_inference_mode_enabled()
        assert torch.is_inference_mode_enabled()
    assert not torch.is_inference_mode_enabled()


def test_in_reversed_and_split_with_sizes():
    # As PyTorch's Tensor.__contains__: any entry equal to the element, for any shape
    # (iterating rows instead would ask for the truth of a multi-element row).
    a = np.array([[1, 2], [5, 6]])
    x = torch.tensor(a)
    assert 5 in x and 7 not in x and 2.0 in x
    assert torch.tensor([5, 6]) in x and torch.tensor([6, 5]) not in x
    assert True not in torch.tensor([False])
    with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
        "a" in x  # noqa: B015
    # reversed() flips the first dim, as Tensor.__reversed__ does; a 0-d tensor is kept.
    r = reversed(x)
    assert isinstance(r, torch.Tensor)
    np.testing.assert_array_equal(r.numpy(), a[::-1])
    s = torch.tensor(3.0)
    assert reversed(s) is s
    pieces = x.split_with_sizes([1, 1], dim=-1)
    assert [p.numpy().tolist() for p in pieces] == [[[1], [5]], [[2], [6]]]
    with pytest.raises(RuntimeError, match="to sum exactly to 2"):
        x.split_with_sizes([1])


def test_tensor_new_is_the_legacy_constructor_in_the_tensors_dtype():
    x = torch.zeros(2, dtype=torch.int32)
    assert x.new(2, 3).shape == (2, 3) and x.new(2, 3).dtype == torch.int32
    assert x.new(torch.Size([4])).shape == (4,) and x.new().shape == (0,)
    data = x.new([1.5, 2.5])  # data is cast to the tensor's dtype
    assert data.dtype == torch.int32 and data.tolist() == [1, 2]
    assert x.new((2, 3)).tolist() == [2, 3]  # a tuple is data, as in PyTorch
    assert x.new(np.array([7, 8])).tolist() == [7, 8]
    y = torch.arange(6.0)
    alias = y.new(y)
    assert alias.data_ptr() == y.data_ptr() and alias is not y
    viewed = y.new(y.untyped_storage())  # all of the storage, in y's dtype
    assert viewed.data_ptr() == y.data_ptr() and viewed.shape == (6,)
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        y.new(y, 3)
    with pytest.raises(TypeError, match="new\\(\\) got an unexpected keyword argument 'dtype'"):
        y.new(2, dtype=torch.int64)
    with pytest.raises(RuntimeError, match="negative dimension"):
        y.new(2, -1)
