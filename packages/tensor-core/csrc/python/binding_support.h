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

// PyTorch's factory keywords the operator frontends do not take (gen_ops.py's
// FACTORY_EXTRAS): a factory's binding hands a call that uses any of them to
// call_with_factory_extras, which calls the binding again without them and then
// applies them to the result (layout: strided only; pin_memory: Tensor.pin_memory;
// out: the result's dtype and device are out's, then out is resized and filled;
// memory_format: the result laid out so, for empty).
enum FactoryExtra : unsigned {
  kFactory_layout = 1u,
  kFactory_pin_memory = 2u,
  kFactory_out = 4u,
  kFactory_memory_format = 8u,
};
bool has_factory_extras(PyObject* kwargs, unsigned accepted);
py::object call_with_factory_extras(const char* name, py::args args, py::kwargs kwargs,
                                    unsigned accepted);

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
