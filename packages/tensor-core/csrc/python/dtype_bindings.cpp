// Type queries: result_type (PyTorch's promotion with Python numbers as
// wrapped numbers), is_tensor, is_floating_point, is_complex, numel.
#include <pybind11/pybind11.h>

#include "python/binding_support.h"
#include "python/registry.h"

namespace flambeau::python {

namespace {

Tensor tensor_arg(py::handle o, const char* op) {
  FLB_CHECK_T(TypeError, is_tensor(o.ptr()), op, "(): argument 'input' must be Tensor, not ",
              Py_TYPE(o.ptr())->tp_name);
  return o.cast<Tensor>();
}

void bind_dtype_queries(py::module_& m, py::object) {
  m.def(
      "result_type",
      [](py::handle a, py::handle b) {
        Tensor ta = tensor_from_py(a.ptr(), "result_type", "tensor");
        Tensor tb = tensor_from_py(b.ptr(), "result_type", "other");
        return py::reinterpret_borrow<py::object>(dtype_object(result_type({&ta, &tb})));
      },
      py::arg("tensor"), py::arg("other"),
      "The dtype an arithmetic operation on the two operands (tensors or Python numbers) "
      "returns, by PyTorch's promotion rules: dimensioned tensors outrank 0-dim tensors, which "
      "outrank Python numbers, unless a lower tier has a higher category (bool < integer < "
      "float < complex).");
  m.def(
      "is_tensor", [](py::handle o) { return is_tensor(o.ptr()); }, py::arg("obj"),
      "True if obj is a flambeau Tensor.");
  m.def(
      "is_floating_point",
      [](py::handle o) {
        return is_floating_point_dtype(tensor_arg(o, "is_floating_point")->dtype());
      },
      py::arg("input"), "True if input's dtype is a floating point type.");
  m.def(
      "is_complex",
      [](py::handle o) { return is_complex_dtype(tensor_arg(o, "is_complex")->dtype()); },
      py::arg("input"), "True if input's dtype is a complex type.");
  m.def(
      "numel", [](py::handle o) { return tensor_arg(o, "numel")->numel(); }, py::arg("input"),
      "The number of elements of input.");
}

}  // namespace

FLB_BINDINGS(40, bind_dtype_queries);

}  // namespace flambeau::python
