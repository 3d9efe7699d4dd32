"""The C++ API of flambeau/extension.h, exercised from one inline module."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau
from flambeau.utils.cpp_extension import load_inline

SOURCE = r"""
#include <tuple>

using Sizes = std::vector<int64_t>;
std::tuple<Sizes, Sizes, std::string, std::string, bool, int64_t, int64_t>
describe(const flambeau::Tensor& t) {
  return {t.sizes(), t.strides(), flambeau::dtype_name(t.dtype()), t.device().str(),
          t.is_contiguous(), t.numel(), t.dim()};
}

int64_t size_at(const flambeau::Tensor& t, int64_t d) { return t.size(d); }

uintptr_t address(const flambeau::Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); }

double sum_float(const flambeau::Tensor& t) {
  flambeau::Tensor c = t.contiguous();
  const float* p = c.data_ptr<float>();
  double s = 0;
  for (int64_t i = 0; i < c.numel(); ++i) s += p[i];
  return s;
}

flambeau::Tensor iota(int64_t rows, int64_t cols) {
  flambeau::Tensor out = flambeau::empty({rows, cols}, flambeau::kInt64);
  int64_t* p = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < rows * cols; ++i) p[i] = i;
  return out;
}

flambeau::Tensor zeros_f64(std::vector<int64_t> sizes) {
  return flambeau::zeros(sizes, flambeau::kFloat64);
}

flambeau::Tensor like(const flambeau::Tensor& t) { return flambeau::zeros_like(t); }

flambeau::Tensor axpy(const flambeau::Tensor& x, const flambeau::Tensor& y, double alpha) {
  return flambeau::ops::add(y, x, alpha);
}

flambeau::Tensor clamp_min(const flambeau::Tensor& x, double lo) {
  using namespace pybind11::literals;
  return flambeau::ops::call("clamp", x, "min"_a = lo);
}

flambeau::Tensor check_positive(const flambeau::Tensor& x) {
  FLAMBEAU_CHECK(x.numel() > 0, "check_positive: expected a non-empty tensor, got ", x.numel(),
                 " elements");
  FLAMBEAU_CHECK_VALUE(x.dim() == 1, "check_positive: expected a 1-D tensor");
  FLAMBEAU_CHECK(x.dim() == 1 && x.size(0) < 100);
  return x;
}

flambeau::Tensor maybe(bool defined) { return defined ? flambeau::ones({1}) : flambeau::Tensor(); }

flambeau::ScalarType dtype_of(const flambeau::Tensor& t) { return t.dtype(); }

flambeau::Tensor cast(const flambeau::Tensor& t, flambeau::ScalarType dtype) { return t.to(dtype); }

int version() { return FLAMBEAU_EXTENSION_VERSION_MAJOR * 100 + FLAMBEAU_EXTENSION_VERSION_MINOR; }
"""
FUNCTIONS = ["describe", "size_at", "address", "sum_float", "iota", "zeros_f64", "like", "axpy",
             "clamp_min", "check_positive", "maybe", "dtype_of", "cast", "version"]  # fmt: skip


@pytest.fixture(scope="module")
def api():
    return load_inline("extension_api_test", SOURCE, functions=FUNCTIONS)


def test_sizes_strides_dtype_device(api):
    t = flambeau.zeros(2, 3, 4).transpose(0, 2)
    assert api.describe(t) == ([4, 3, 2], [1, 4, 12], "float32", "cpu", False, 24, 3)
    assert api.describe(flambeau.tensor(5, dtype=flambeau.int16)) == (
        [],
        [],
        "int16",
        "cpu",
        True,
        1,
        0,
    )
    assert api.size_at(t, -1) == 2
    with pytest.raises(IndexError, match="Dimension out of range"):
        api.size_at(t, 3)


def test_data_ptr_is_the_tensors_address_and_checks_the_type(api):
    t = flambeau.arange(12, dtype=flambeau.float32).reshape(3, 4)
    assert api.address(t) == t.data_ptr()
    assert api.address(t[1]) == t.data_ptr() + 4 * 4  # the storage offset is included
    assert api.sum_float(t[:, 1]) == pytest.approx(np.arange(12).reshape(3, 4)[:, 1].sum())
    with pytest.raises(RuntimeError, match="expected scalar type float32 but found int64"):
        api.sum_float(flambeau.arange(3))


def test_creating_outputs(api):
    np.testing.assert_array_equal(api.iota(2, 3).numpy(), np.arange(6).reshape(2, 3))
    z = api.zeros_f64([2, 5])
    assert z.dtype == flambeau.float64 and z.shape == (2, 5) and z.abs().sum().item() == 0
    like = api.like(flambeau.ones(3, dtype=flambeau.int32))
    assert like.dtype == flambeau.int32 and like.tolist() == [0, 0, 0]


def test_calling_the_cores_operators(api):
    x, y = flambeau.tensor([1.0, 2.0]), flambeau.tensor([10.0, 20.0])
    assert api.axpy(x, y, 3.0).tolist() == [13.0, 26.0]
    assert api.clamp_min(flambeau.tensor([-1.0, 0.5]), 0.0).tolist() == [0.0, 0.5]


def test_checks_raise_python_exceptions_with_the_message(api):
    with pytest.raises(RuntimeError, match="expected a non-empty tensor, got 0 elements"):
        api.check_positive(flambeau.zeros(0))
    with pytest.raises(ValueError, match="expected a 1-D tensor"):
        api.check_positive(flambeau.zeros(2, 2))
    with pytest.raises(
        RuntimeError, match=r"Expected x.dim\(\) == 1 && x.size\(0\) < 100 to be true"
    ):
        api.check_positive(flambeau.zeros(200))
    t = flambeau.ones(3)
    assert api.check_positive(t) is t  # the same Python object comes back


def test_type_caster_accepts_only_flambeau_tensors(api):
    for bad in (np.zeros(3), [1.0, 2.0], 3.0, None):
        with pytest.raises(TypeError, match="incompatible function arguments"):
            api.describe(bad)
    assert api.maybe(True).tolist() == [1.0]
    assert api.maybe(False) is None


def test_dtype_conversions_and_version(api):
    assert api.dtype_of(flambeau.ones(1, dtype=flambeau.bfloat16)) is flambeau.bfloat16
    assert api.cast(flambeau.ones(2), flambeau.float64).dtype == flambeau.float64
    with pytest.raises(TypeError):
        api.cast(flambeau.ones(2), "float64")
    assert api.version() == 100
