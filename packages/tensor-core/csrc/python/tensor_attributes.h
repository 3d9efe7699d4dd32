// The Tensor properties read the most (shape, dtype, device, ndim), one function each:
// the pybind11 properties (tensor_bindings.cpp) and the __torch_function__ wrappers'
// fast path (torch_function_wrappers.cpp) return what the same function gives.
#pragma once
#include <pybind11/pybind11.h>

#include "core/tensor.h"

namespace flambeau::python::tensor_attributes {

// A new reference to the attribute's value; throws (py::error_already_set) on failure.
using Getter = PyObject* (*)(const TensorImpl&);

// The getter of the attribute called `name` (a str), or nullptr for other names.
Getter find(PyObject* name);

// A pybind11 property body over a getter.
inline pybind11::object get(Getter g, const Tensor& t) {
  return pybind11::reinterpret_steal<pybind11::object>(g(*t));
}

}  // namespace flambeau::python::tensor_attributes
