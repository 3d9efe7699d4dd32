"""flambeau.testing: assert_close, make_tensor and assert_allclose against hand-derived cases."""

import math
import re

import numpy as np
import pytest

import flambeau as F
from flambeau.testing import assert_allclose, assert_close, make_tensor


def _message(actual, expected, **kw) -> str:
    with pytest.raises(AssertionError) as info:
        assert_close(actual, expected, **kw)
    return str(info.value)


# -- assert_close: tolerances -------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype, rtol, atol",
    [
        (F.float16, 1e-3, 1e-5),
        (F.bfloat16, 1.6e-2, 1e-5),
        (F.float32, 1.3e-6, 1e-5),
        (F.float64, 1e-7, 1e-7),
        (F.complex64, 1.3e-6, 1e-5),
        (F.complex128, 1e-7, 1e-7),
    ],
)
def test_default_tolerances_per_dtype(dtype, rtol, atol):
    # |a - e| <= atol + rtol * |e| at e = 1000: the bound is atol + 1000 rtol.
    bound = atol + 1000 * rtol
    expected = F.tensor([1000.0], dtype=F.float64)
    inside = (expected + 0.5 * bound).to(dtype)
    outside = (expected + 4 * bound).to(dtype)
    expected = expected.to(dtype)
    assert_close(inside, expected)
    with pytest.raises(AssertionError, match="are not close"):
        assert_close(outside, expected)


def test_integers_and_bools_compare_exactly():
    assert_close(F.tensor([1, 2, 3]), F.tensor([1, 2, 3]))
    msg = _message(F.tensor([1, 2, 3]), F.tensor([1, 2, 4]))
    assert msg == (
        "Tensor-likes are not equal!\n\n"
        "Mismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 1 at index (2,)\n"
        "Greatest relative difference: 0.25 at index (2,)"
    )
    assert "not equal" in _message(F.tensor([True, False]), F.tensor([True, True]))


def test_explicit_tolerances_both_or_neither():
    assert_close(F.tensor([1.0]), F.tensor([1.05]), rtol=0.0, atol=0.1)
    with pytest.raises(AssertionError):
        assert_close(F.tensor([1.0]), F.tensor([1.05]), rtol=0.0, atol=0.01)
    # rtol scales with |expected|, not |actual|: |10 - 11| = 1 <= 0.1 * 11 but > 0.1 * 10.
    assert_close(F.tensor([10.0]), F.tensor([11.0]), rtol=0.1, atol=0.0)
    with pytest.raises(AssertionError):
        assert_close(F.tensor([11.0]), F.tensor([10.0]), rtol=0.09, atol=0.0)
    with pytest.raises(ValueError, match="but got no atol"):
        assert_close(F.tensor([1.0]), F.tensor([1.0]), rtol=1e-3)
    with pytest.raises(ValueError, match="but got no rtol"):
        assert_close(1.0, 1.0, atol=1e-3)


# -- assert_close: messages -----------------------------------------------------------------


def test_tensor_mismatch_message():
    msg = _message(F.tensor([[1.0, 2.0], [3.0, 4.0]]), F.tensor([[1.0, 2.5], [3.1, 4.0]]))
    # |2 - 2.5| = 0.5 is the greatest absolute and 0.5 / 2.5 = 0.2 the greatest relative
    # difference (in float32: 0.20000000298...).
    assert msg == (
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 2 / 4 (50.0%)\n"
        "Greatest absolute difference: 0.5 at index (0, 1) (up to 1e-05 allowed)\n"
        f"Greatest relative difference: {float(np.float32(0.5) / np.float32(2.5))} "
        "at index (0, 1) (up to 1.3e-06 allowed)"
    )


def test_greatest_differences_count_only_mismatches():
    # Element 0 matches within atol=1 despite the larger relative difference there.
    actual = F.tensor([0.5, 10.0, 103.0], dtype=F.float64)
    expected = F.tensor([0.0, 12.0, 100.0], dtype=F.float64)
    msg = _message(actual, expected, rtol=0.0, atol=1.0)
    assert "Mismatched elements: 2 / 3 (66.7%)" in msg
    assert "Greatest absolute difference: 3.0 at index (2,) (up to 1.0 allowed)" in msg
    assert f"Greatest relative difference: {2 / 12} at index (1,)" in msg


def test_zero_dim_tensors_use_the_scalar_message():
    msg = _message(F.tensor(1.0), F.tensor(2.0))
    assert msg == (
        "Scalars are not close!\n\n"
        "Expected 2.0 but got 1.0.\n"
        "Absolute difference: 1.0 (up to 1e-05 allowed)\n"
        "Relative difference: 0.5 (up to 1.3e-06 allowed)"
    )


def test_msg_replaces_or_transforms_the_message():
    assert _message(F.tensor([1.0]), F.tensor([2.0]), msg="custom") == "custom"
    msg = _message(F.tensor([1.0]), F.tensor([2.0]), msg=lambda m: "Header\n" + m)
    assert msg.startswith("Header\nTensor-likes are not close!")


# -- assert_close: attributes ---------------------------------------------------------------


def test_shape_dtype_and_stride_checks():
    assert "attribute 'shape'" in _message(F.ones(3), F.ones(4))
    msg = _message(F.tensor([1, 2, 3]), F.tensor([1.0, 2.0, 3.0]))
    assert msg == (
        "The values for attribute 'dtype' do not match: flambeau.int64 != flambeau.float32."
    )
    assert_close(F.tensor([1, 2, 3]), F.tensor([1.0, 2.0, 3.0]), check_dtype=False)
    # Mixed dtypes compare in the promoted dtype with the looser tolerances of the two.
    assert_close(F.tensor([1.0], dtype=F.float64), F.tensor([1.0 + 1e-6]), check_dtype=False)
    a = F.ones(2, 3)
    b = F.ones(3, 2).t()
    assert_close(a, b)  # strides are not checked by default
    assert _message(a, b, check_stride=True) == (
        "The values for attribute 'stride()' do not match: (3, 1) != (1, 2)."
    )


def test_nan_and_infinity():
    nan, inf = float("nan"), float("inf")
    with pytest.raises(AssertionError):
        assert_close(F.tensor([nan]), F.tensor([nan]))
    assert_close(F.tensor([nan, 1.0]), F.tensor([nan, 1.0]), equal_nan=True)
    assert_close(F.tensor([inf, -inf]), F.tensor([inf, -inf]))
    with pytest.raises(AssertionError):
        assert_close(F.tensor([inf]), F.tensor([-inf]))
    with pytest.raises(AssertionError):  # infinity is not within any tolerance of a number
        assert_close(F.tensor([inf]), F.tensor([1e30]), rtol=1.0, atol=1.0)


def test_complex_values():
    assert_close(F.tensor([1 + 2j]), F.tensor([1 + 2j]))
    msg = _message(F.tensor([1 + 2j, 0j]), F.tensor([1 + 2j, 3 + 4j]))
    assert "Greatest absolute difference: 5.0 at index (1,)" in msg  # |3 + 4j| = 5
    assert "Greatest relative difference: 1.0 at index (1,)" in msg


# -- assert_close: other inputs -------------------------------------------------------------


def test_python_scalars():
    assert_close(1, 1)
    assert_close(1.0, 1.0 + 1e-9)  # float64 tolerances: 1e-7 + 1e-7
    assert_close(1 + 1j, 1 + 1j)
    assert _message(1, 1.0) == "The (d)types do not match: <class 'int'> != <class 'float'>."
    assert_close(1, 1.0, check_dtype=False)
    assert _message(1, 2) == (
        "Scalars are not equal!\n\nExpected 2 but got 1.\nAbsolute difference: 1\n"
        "Relative difference: 0.5"
    )
    assert "Relative difference: inf" in _message(1.0, 0.0)
    assert_close(float("nan"), float("nan"), equal_nan=True)
    assert_close(np.float32(2.0), 2.0)
    assert _message(True, False) == "Booleans mismatch: True is not False"
    assert_close(np.bool_(True), True)
    assert_close(None, None)
    assert _message(None, 1) == "None mismatch: None is not 1"


def test_sequences_and_mappings_elementwise():
    assert_close([F.ones(2), (1.0, 2)], (F.ones(2), [1.0, 2]))
    msg = _message([F.tensor(1.0), F.tensor(2.0)], [F.tensor(1.0), F.tensor(2.5)])
    assert msg.endswith("\n\nThe failure occurred for item [1]")
    msg = _message({"a": {"b": [0, 1.0]}}, {"a": {"b": [0, 1.5]}})
    assert msg.endswith("The failure occurred for item ['a']['b'][1]")
    assert _message([1.0], [1.0, 2.0]) == "The length of the sequences mismatch: 1 != 2"
    assert _message({"a": 1}, {"b": 1}) == (
        "The keys of the mappings do not match:\n"
        "Missing keys in the actual mapping: ['b']\n"
        "Additional keys in the actual mapping: ['a']"
    )
    # Structural failures are reported even with a custom message and before values.
    with pytest.raises(AssertionError, match="length of the sequences"):
        assert_close([2.0, [1]], [1.0, [1, 2]], msg="ignored")


def test_numpy_arrays_compare_as_tensors():
    assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    msg = _message(np.array([1.0, 2.0]), np.array([1.0, 2.5]))
    assert "Greatest absolute difference: 0.5 at index (1,) (up to 1e-07 allowed)" in msg


def test_unrelated_types_raise_type_error():
    for actual, expected in [
        (F.tensor([1.0]), np.array([1.0])),
        (F.tensor([1.0]), [1.0]),
        (F.tensor(1.0), 1.0),
        ("a", "a"),
        (object(), object()),
    ]:
        with pytest.raises(TypeError, match="No comparison pair was able to handle inputs"):
            assert_close(actual, expected)


def test_allow_subclasses():
    class Sub(np.ndarray):
        pass

    sub = np.array([1.0, 2.0]).view(Sub)
    assert_close(sub, np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="No comparison pair"):
        assert_close(sub, np.array([1.0, 2.0]), allow_subclasses=False)


# -- assert_allclose ------------------------------------------------------------------------


def test_assert_allclose_is_deprecated_and_looser():
    with pytest.warns(FutureWarning, match="assert_close"):
        # float32 defaults (1e-4, 1e-5): 1e-5 + 1e-4 * 1 allows 1e-4.
        assert_allclose(F.tensor([1.0]), F.tensor([1.0001]))
    with pytest.warns(FutureWarning), pytest.raises(AssertionError):
        assert_allclose(F.tensor([1.0]), F.tensor([1.001]))
    with pytest.warns(FutureWarning):  # NaNs equal by default, lists become tensors
        assert_allclose(F.tensor([float("nan"), 2.0]), [float("nan"), 2.0])
    with pytest.warns(FutureWarning):  # dtypes may differ
        assert_allclose(F.tensor([1, 2]), F.tensor([1.0, 2.0]))
    with pytest.warns(FutureWarning), pytest.raises(AssertionError, match="^mine$"):
        assert_allclose(F.tensor([1.0]), F.tensor([2.0]), msg="mine")


# -- make_tensor ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype, low, high",
    [
        (F.bool, 0, 1),
        (F.uint8, 0, 9),
        (F.int8, -9, 9),
        (F.int64, -9, 9),
        (F.float32, -9, 9),
        (F.float64, -9, 9),
        (F.bfloat16, -9, 9),
    ],
)
def test_make_tensor_default_ranges(dtype, low, high):
    t = make_tensor(2000, dtype=dtype, device="cpu")
    assert t.dtype == dtype and tuple(t.shape) == (2000,) and t.device.type == "cpu"
    values = t.to(F.float64)
    assert float(values.min()) >= low and float(values.max()) <= high
    if dtype in (F.float32, F.float64):
        assert float(values.max()) < 9  # high is exclusive
    # 2000 draws reach both ends of the range (within one step or 10% of it).
    assert float(values.min()) <= low + max(1, 0.1 * (high - low))
    assert float(values.max()) >= high - max(1, 0.1 * (high - low))


def test_make_tensor_complex_parts_in_range():
    t = make_tensor(500, dtype=F.complex64, device="cpu", low=-1, high=2)
    parts = F.view_as_real(t)
    assert float(parts.min()) >= -1 and float(parts.max()) < 2


def test_make_tensor_shape_forms():
    for shape in [(2, 3), ((2, 3),), ([2, 3],), (F.Size([2, 3]),)]:
        assert tuple(make_tensor(*shape, dtype=F.float32, device="cpu").shape) == (2, 3)
    assert make_tensor((), dtype=F.float32, device="cpu").dim() == 0


def test_make_tensor_bounds_are_clamped_and_checked():
    t = make_tensor(100, dtype=F.uint8, device="cpu", low=-1000, high=1000)
    assert int(t.min()) >= 0  # clamped to uint8's [0, 256)
    t = make_tensor(100, dtype=F.int8, device="cpu", low=0.5, high=2.2)
    assert set(t.tolist()) <= {1, 2}  # integral bounds round up: [1, 3)
    t = make_tensor(100, dtype=F.float16, device="cpu", low=-math.inf, high=math.inf)
    assert bool(F.isfinite(t).all())  # the whole finite range, without overflow
    with pytest.raises(ValueError, match="cannot be NaN"):
        make_tensor(3, dtype=F.float32, device="cpu", low=math.nan)
    with pytest.raises(ValueError, match="`low` must be less than `high`"):
        make_tensor(3, dtype=F.int32, device="cpu", low=5, high=5)
    with pytest.raises(ValueError, match=re.escape("only supports [0, 256)")):
        make_tensor(3, dtype=F.uint8, device="cpu", low=300, high=400)
    with pytest.warns(FutureWarning, match="low==high"):
        t = make_tensor(3, dtype=F.float32, device="cpu", low=2.0, high=2.0)
    assert t.tolist() == [2.0, 2.0, 2.0]


def test_make_tensor_requires_grad():
    t = make_tensor(3, dtype=F.float64, device="cpu", requires_grad=True)
    assert t.requires_grad and t.is_leaf
    assert not make_tensor(3, dtype=F.float64, device="cpu").requires_grad
    with pytest.raises(ValueError, match="requires_grad=True"):
        make_tensor(3, dtype=F.int64, device="cpu", requires_grad=True)


def test_make_tensor_layouts():
    t = make_tensor(4, 5, dtype=F.float32, device="cpu", noncontiguous=True)
    assert tuple(t.shape) == (4, 5) and not t.is_contiguous()
    # One element cannot be non-contiguous: the flag is ignored.
    assert make_tensor(1, dtype=F.float32, device="cpu", noncontiguous=True).is_contiguous()
    t = make_tensor(2, 3, 4, 5, dtype=F.float32, device="cpu", memory_format=F.channels_last)
    assert t.is_contiguous(memory_format=F.channels_last) and not t.is_contiguous()
    with pytest.raises(ValueError, match="mutually exclusive"):
        make_tensor(
            2,
            3,
            4,
            5,
            dtype=F.float32,
            device="cpu",
            noncontiguous=True,
            memory_format=F.channels_last,
        )


def test_make_tensor_exclude_zero():
    t = make_tensor(5000, dtype=F.int8, device="cpu", low=-1, high=2, exclude_zero=True)
    assert set(t.tolist()) <= {-1, 1}
    t = make_tensor(500, dtype=F.bool, device="cpu", exclude_zero=True)
    assert bool(t.all())
    # A float range holding only zeros' neighbourhood: zeros (if any) become finfo.tiny.
    t = make_tensor(100, dtype=F.float32, device="cpu", low=0.0, high=1e-45, exclude_zero=True)
    assert bool((t != 0).all())


def test_make_tensor_unsupported_dtype():
    class NotADtype:
        pass

    with pytest.raises(TypeError, match="not supported"):
        make_tensor(3, dtype=NotADtype(), device="cpu")


def test_make_tensor_is_reproducible_under_a_seed():
    F.manual_seed(3)
    a = make_tensor(10, dtype=F.float32, device="cpu")
    F.manual_seed(3)
    assert_close(make_tensor(10, dtype=F.float32, device="cpu"), a, rtol=0, atol=0)
