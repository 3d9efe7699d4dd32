// What generated and hand-written bindings share: argument parsing, the
// autograd slot, and conversions of results back to Python.
#pragma once
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "python/arg_parser.h"
#include "python/autograd_slot.h"
#include "python/tensor_holder.h"

namespace flambeau::python {

py::object make_return_type(const char* op, std::initializer_list<const char*> fields);

template <class... Ts>
py::object make_return(const py::object& type, const std::tuple<Ts...>& values) {
  return std::apply([&](const auto&... v) { return type(py::cast(v)...); }, values);
}

py::object scalar_to_py(const Scalar& s);

// A DataPtr deleter for memory a Python object keeps alive (ctx is the object, one
// reference owned): drops the reference with the GIL held.
void release_py_owner(void* ctx, void* ptr);
py::object tensors_to_tuple(const std::vector<Tensor>& ts);

struct OpInfo {
  const char* name;
  const char* schema;
  const char* category;
  const char* doc;
  const char* variants;
  const char* dunders;
  const char* parsed;   // JSON: overload, n_outputs, params (name, type, default, kwonly)
  const char* example;  // doctest lines, the same for every overload of the name
};
std::vector<OpInfo> op_table();
void register_generated_ops(py::module_& m, py::object tensor_class);

}  // namespace flambeau::python
