"""Creation and conversion: dtype inference, options, and errors."""

import numpy as np
import pytest

import flambeau as torch


def test_empty_shape_and_dtype():
    t = torch.empty(2, 3)
    assert t.shape == (2, 3) and t.dtype == torch.float32 and t.is_contiguous()
    t = torch.empty((0, 4), dtype=torch.int16)
    assert t.shape == (0, 4) and t.dtype == torch.int16
    e = torch.empty_like(torch.zeros(3, 2, dtype=torch.int64).t())
    assert e.shape == (2, 3) and e.dtype == torch.int64
    assert torch.empty_like(torch.zeros(2), dtype=torch.bool).dtype == torch.bool
    s = torch.empty_strided((2, 3), (1, 2))
    assert s.shape == (2, 3) and s.stride() == (1, 2) and not s.is_contiguous()
    assert torch.empty_strided((2, 3), (1, 2), dtype=torch.float64).dtype == torch.float64
    with pytest.raises(RuntimeError, match="same length"):
        torch.empty_strided((2, 3), (1,))
    with pytest.raises(RuntimeError, match="negative dimension"):
        torch.empty(-1)


@pytest.mark.parametrize(
    "args,dtype",
    [
        ((5,), torch.int64),
        ((1, 5), torch.int64),
        ((0, 5, 2), torch.int64),
        ((5.0,), torch.float32),
        ((0, 5, 0.5), torch.float32),
        ((0.0, 5), torch.float32),
        ((True,), torch.int64),
    ],
)
def test_arange_dtype_inference(args, dtype):
    assert torch.arange(*args).dtype == dtype


def test_arange_follows_default_dtype():
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.arange(0, 1, 0.25).dtype == torch.float64
        assert torch.linspace(0, 1, 3).dtype == torch.float64
    finally:
        torch.set_default_dtype(torch.float32)


def test_arange_sizes_follow_pytorch_formula():
    # ceil((end - start) / step) in double for floating steps.
    assert torch.arange(0, 1, 0.1).shape == (10,)
    assert torch.arange(1, 2.2, 0.4).shape == (4,)  # (2.2 - 1) / 0.4 rounds above 3
    assert torch.arange(-1, 1, 0.3).shape == (7,)
    np.testing.assert_array_equal(torch.arange(10, 0, -3).numpy(), [10, 7, 4, 1])
    np.testing.assert_array_equal(torch.arange(start=2, end=6).numpy(), [2, 3, 4, 5])
    np.testing.assert_array_equal(torch.arange(end=3).numpy(), [0, 1, 2])
    np.testing.assert_array_equal(torch.arange(0, 5, 2, dtype=torch.float64).numpy(), [0, 2, 4])
    # Integer dtypes take start/end/step as integers, as PyTorch's accumulate type does.
    np.testing.assert_array_equal(torch.arange(0.5, 4, 1, dtype=torch.int64).numpy(), [0, 1, 2, 3])


@pytest.mark.parametrize(
    "args,match",
    [
        ((0, 5, 0), "step must be nonzero"),
        ((5, 0, 1), "upper bound and larger bound inconsistent with step sign"),
        ((0, 5, -1), "upper bound and larger bound inconsistent with step sign"),
        ((0, float("inf")), "unsupported range"),
        ((0, 1, 0.5, torch.int64), "step must be nonzero"),
    ],
)
def test_arange_errors(args, match):
    *args, dtype = args if len(args) == 4 else (*args, None)
    with pytest.raises(RuntimeError, match=match):
        torch.arange(*args, dtype=dtype)


def test_arange_bool_dtype_is_rejected():
    with pytest.raises(RuntimeError, match="arange"):
        torch.arange(3, dtype=torch.bool)


def test_linspace_logspace():
    assert torch.linspace(0, 10, 5).dtype == torch.float32
    assert torch.linspace(0, 10, 5, dtype=torch.int64).dtype == torch.int64
    np.testing.assert_allclose(torch.linspace(-1, 1, 1).numpy(), [-1])
    assert torch.linspace(0, 1, 0).shape == (0,)
    np.testing.assert_allclose(torch.logspace(0, 2, 3, 2).numpy(), [1, 2, 4])
    np.testing.assert_allclose(
        torch.logspace(0, 2, 3, base=3.0, dtype=torch.float64).numpy(), [1, 3, 9]
    )
    c = torch.linspace(0, 1 + 2j, 3)
    assert c.dtype == torch.complex64
    np.testing.assert_allclose(c.numpy(), np.linspace(0, 1 + 2j, 3), rtol=1e-6)
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.linspace(0, 1, -1)


def test_linspace_counts_from_both_ends_with_one_rounding_per_element():
    # PyTorch's rule: the first half is start + i * step, the second end - (n-1-i) * step,
    # each a fused multiply-add in the element type (step itself rounded once).
    start, end, n = np.float32(-3.3), np.float32(10.7), 11
    step = np.float32((end - start) / np.float32(n - 1))
    expected = [
        np.float32(float(start) + float(step) * i)
        if i < n // 2
        else np.float32(float(end) - float(step) * (n - 1 - i))
        for i in range(n)
    ]
    got = torch.linspace(-3.3, 10.7, n).numpy()
    np.testing.assert_array_equal(got, expected)
    assert got[3] == np.float32(0.9)  # two roundings gave 0.89999986
    assert got[-1] == end and got[0] == start


def test_logspace_steps_the_exponent_in_double_and_ints_in_float():
    start, end, n = np.float32(0.3), np.float32(1.7), 9
    step = float(np.float32(end - start)) / (n - 1)
    exps = [
        float(start) + step * i if i < n // 2 else float(end) - step * (n - 1 - i) for i in range(n)
    ]
    np.testing.assert_array_equal(
        torch.logspace(0.3, 1.7, n).numpy(), np.array([10.0**e for e in exps], np.float32)
    )
    # Integer outputs: exponents and base in float32, truncated toward zero.
    fstep = np.float32(np.float32(5 - 0) / np.float32(3))
    ints = [int(np.float32(1.5) ** (np.float32(0) + fstep * np.float32(i))) for i in range(2)]
    ints += [int(np.float32(1.5) ** (np.float32(5) - fstep * np.float32(3 - i))) for i in (2, 3)]
    assert torch.logspace(0, 5, 4, base=1.5, dtype=torch.int64).tolist() == ints
    assert torch.logspace(2, 9, 1, base=3).tolist() == [9.0]  # one step: base ** start


def test_eye():
    np.testing.assert_array_equal(torch.eye(3).numpy(), np.eye(3))
    np.testing.assert_array_equal(torch.eye(2, 3, dtype=torch.int32).numpy(), np.eye(2, 3))
    assert torch.eye(2, dtype=torch.bool).dtype == torch.bool
    assert torch.eye(n=2, m=1).shape == (2, 1)
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0"):
        torch.eye(-1)


def test_like_options():
    a = torch.zeros(2, 3, dtype=torch.int32)
    assert torch.zeros_like(a).dtype == torch.int32
    assert torch.ones_like(a, dtype=torch.float64).dtype == torch.float64
    f = torch.full_like(a, 2.7)  # keeps input's dtype: the value is truncated
    assert f.dtype == torch.int32 and f[0, 0].item() == 2
    assert torch.full_like(a, 2.5, dtype=torch.float32)[1, 2].item() == 2.5
    assert torch.zeros_like(a, device="cpu").device == torch.device("cpu")
    r = torch.ones_like(torch.zeros(2), requires_grad=True)
    assert r.requires_grad
    assert torch.arange(3.0, requires_grad=True).requires_grad
    assert torch.eye(2, requires_grad=True).requires_grad


def test_meshgrid():
    x, y = torch.arange(3), torch.arange(4)
    gx, gy = torch.meshgrid(x, y)
    assert gx.shape == (3, 4) and gx._is_view_of(x) and gy._is_view_of(y)
    gx, gy = torch.meshgrid(x, y, indexing="xy")
    assert gx.shape == (4, 3)
    np.testing.assert_array_equal(gx.numpy(), np.meshgrid(x.numpy(), y.numpy())[0])
    assert isinstance(torch.meshgrid([x, y]), tuple)
    with pytest.raises(RuntimeError, match="indexing must be one of"):
        torch.meshgrid(x, y, indexing="ji")
    with pytest.raises(RuntimeError, match="0D or 1D"):
        torch.meshgrid(torch.zeros(2, 2))
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.meshgrid(x, y.float())


def test_to_overloads_and_copy_semantics():
    a = torch.arange(6).reshape(2, 3)
    assert a.to(torch.int64) is a
    assert a.to("cpu") is a
    assert a.to(torch.device("cpu")) is a
    assert a.to(device="cpu", dtype=torch.int64) is a
    assert a.to() is a
    assert a.to(a) is a
    assert a.to(torch.int64, non_blocking=True) is a
    c = a.to(torch.int64, copy=True)
    assert c is not a and not c._is_view_of(a)
    assert a.to(torch.float16).dtype == torch.float16
    assert a.to("cpu", torch.float64).dtype == torch.float64
    assert a.to(dtype=torch.bool).dtype == torch.bool
    assert a.to(torch.zeros(1, dtype=torch.complex64)).dtype == torch.complex64
    assert a.to(float).dtype == torch.float64
    assert a.type_as(torch.zeros(1)).dtype == torch.float32
    assert a.type_as(a) is a
    assert a.cpu() is a
    with pytest.raises(TypeError):
        a.to(1.5)


@pytest.mark.parametrize(
    "meth,dtype",
    [
        ("float", torch.float32),
        ("double", torch.float64),
        ("half", torch.float16),
        ("bfloat16", torch.bfloat16),
        ("long", torch.int64),
        ("int", torch.int32),
        ("short", torch.int16),
        ("char", torch.int8),
        ("byte", torch.uint8),
        ("bool", torch.bool),
    ],
)
def test_dtype_methods(meth, dtype):
    a = torch.arange(4)
    r = getattr(a, meth)()
    assert r.dtype == dtype
    assert getattr(r, meth)() is r  # no change: self


@pytest.mark.parametrize(
    "write",
    [
        lambda x: x.copy_(x.t()),
        lambda x: x.view(-1)[1:].copy_(x.view(-1)[:-1]),
        lambda x: x.add_(x.t()),
        lambda x: torch.mul(x[:2], x[1:], out=x[1:]),
    ],
)
def test_writing_into_memory_an_input_partly_shares_raises(write):
    x = torch.arange(9.0).reshape(3, 3)
    before = x.clone()
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        write(x)
    assert torch.equal(x, before)


def test_writing_into_the_same_or_disjoint_memory_is_allowed():
    x = torch.arange(6.0)
    x.add_(x)
    assert x.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    x[:3].copy_(x[3:])
    assert x.tolist() == [6.0, 8.0, 10.0, 6.0, 8.0, 10.0]
    x[::2].copy_(x[1::2])  # interleaved, no element shared
    assert x.tolist() == [8.0, 8.0, 6.0, 6.0, 10.0, 10.0]
