"""dtype queries: finfo/iinfo, result_type, promote_types, can_cast, default dtype."""

import numpy as np
import pytest

import flambeau

F = flambeau


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_finfo_matches_numpy(name):
    fi, ref = F.finfo(getattr(F, name)), np.finfo(name)
    assert fi.bits == ref.bits
    assert fi.eps == float(ref.eps)
    assert fi.max == float(ref.max)
    assert fi.min == float(ref.min)
    assert fi.tiny == float(ref.tiny)
    assert fi.smallest_normal == float(ref.smallest_normal)
    # NumPy stores resolution in the type itself (float32(1e-06)); ours is a Python float.
    assert fi.resolution == pytest.approx(float(ref.resolution), rel=1e-3)
    assert fi.dtype == name


def test_finfo_bfloat16():
    fi = F.finfo(F.bfloat16)
    assert fi.bits == 16
    assert fi.eps == 0.0078125
    assert fi.max == 3.3895313892515355e38
    assert fi.min == -3.3895313892515355e38
    assert fi.tiny == fi.smallest_normal == 1.1754943508222875e-38
    assert fi.resolution == 0.01
    assert fi.dtype == "bfloat16"


def test_finfo_complex_default_and_errors():
    assert F.finfo(F.complex64).dtype == "float32"
    assert F.finfo(F.complex128).eps == np.finfo(np.float64).eps
    assert F.finfo().dtype == "float32"
    old = F.get_default_dtype()
    try:
        F.set_default_dtype(F.float64)
        assert F.finfo().bits == 64
    finally:
        F.set_default_dtype(old)
    with pytest.raises(TypeError):
        F.finfo(F.int32)
    with pytest.raises(TypeError):
        F.finfo("float32")
    assert repr(F.finfo(F.float32)) == (
        "finfo(resolution=1e-06, min=-3.40282e+38, max=3.40282e+38, eps=1.19209e-07, "
        "smallest_normal=1.17549e-38, tiny=1.17549e-38, dtype=float32)"
    )


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_matches_numpy(name):
    ii, ref = F.iinfo(getattr(F, name)), np.iinfo(name)
    assert (ii.bits, ii.min, ii.max, ii.dtype) == (ref.bits, ref.min, ref.max, name)


def test_iinfo_errors_and_repr():
    with pytest.raises(TypeError):
        F.iinfo(F.float32)
    with pytest.raises(TypeError):
        F.iinfo(F.bool)
    assert repr(F.iinfo(F.int32)) == "iinfo(min=-2.14748e+09, max=2.14748e+09, dtype=int32)"
    assert repr(F.iinfo(F.uint8)) == "iinfo(min=0, max=255, dtype=uint8)"


def t(dtype, shape=(2,)):
    return F.zeros(shape, dtype=dtype)


@pytest.mark.parametrize(
    "a,b,expected",
    [
        (lambda: t(F.int32), lambda: t(F.int64), F.int64),
        (lambda: t(F.int32), lambda: 1, F.int32),
        (lambda: t(F.int32), lambda: 1.5, F.float32),
        (lambda: t(F.uint8), lambda: True, F.uint8),
        (lambda: t(F.bool), lambda: 2, F.int64),
        (lambda: t(F.float16), lambda: 2.5, F.float16),
        (lambda: t(F.float16), lambda: t(F.float64, ()), F.float16),
        (lambda: t(F.int32), lambda: t(F.float64, ()), F.float64),
        (lambda: t(F.float32), lambda: 1j, F.complex64),
        (lambda: t(F.float64), lambda: 1j, F.complex128),
        (lambda: t(F.uint8), lambda: t(F.int8), F.int16),
        (lambda: t(F.float16), lambda: t(F.bfloat16), F.float32),
        (lambda: 1, lambda: 2, F.int64),
        (lambda: 1, lambda: 2.0, F.float32),
        (lambda: t(F.int64, ()), lambda: 1.0, F.float32),
    ],
)
def test_result_type(a, b, expected):
    assert F.result_type(a(), b()) is expected


def test_result_type_follows_default_dtype():
    old = F.get_default_dtype()
    try:
        F.set_default_dtype(F.float64)
        assert F.result_type(t(F.int32), 1.5) is F.float64
    finally:
        F.set_default_dtype(old)


def test_promote_types_and_can_cast():
    assert F.promote_types(F.int32, F.float32) is F.float32
    assert F.promote_types(F.uint8, F.int8) is F.int16
    assert F.promote_types(F.complex64, F.float64) is F.complex128
    assert F.can_cast(F.int32, F.float32)
    assert not F.can_cast(F.float32, F.int32)
    assert not F.can_cast(F.complex64, F.float64)


def test_default_dtype():
    assert F.get_default_dtype() is F.float32
    with pytest.raises(TypeError):
        F.set_default_dtype(F.int32)


def test_type_predicates():
    x = F.tensor([1.0])
    assert F.is_tensor(x) and not F.is_tensor([1.0]) and not F.is_tensor(np.zeros(1))
    assert F.is_floating_point(x) and not F.is_floating_point(F.tensor([1]))
    assert F.is_complex(F.tensor([1j])) and not F.is_complex(x)
    assert F.numel(F.zeros(2, 3)) == 6
    for fn in (F.is_floating_point, F.is_complex, F.numel):
        with pytest.raises(TypeError, match="must be Tensor"):
            fn([1.0])


def test_dtype_properties():
    assert F.bfloat16.is_floating_point and F.bfloat16.itemsize == 2
    assert F.complex64.is_complex and not F.float32.is_complex
    assert repr(F.float16) == "flambeau.float16"
