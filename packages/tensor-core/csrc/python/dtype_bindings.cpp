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
      "float < complex).\n\n"
      ">>> flambeau.result_type(flambeau.tensor([1, 2]), 1.0)\n"
      "flambeau.float32\n"
      ">>> small = flambeau.tensor([1, 2], dtype=flambeau.int8)\n"
      ">>> flambeau.result_type(small, flambeau.tensor(300))  # 0-dim ranks lower\n"
      "flambeau.int8\n");
  m.def(
      "is_tensor", [](py::handle o) { return is_tensor(o.ptr()); }, py::arg("obj"),
      "True if obj is a flambeau Tensor.\n\n"
      ">>> flambeau.is_tensor(flambeau.zeros(2)), flambeau.is_tensor([0.0, 0.0])\n"
      "(True, False)\n");
  m.def(
      "is_floating_point",
      [](py::handle o) {
        return is_floating_point_dtype(tensor_arg(o, "is_floating_point")->dtype());
      },
      py::arg("input"),
      "True if input's dtype is a floating point type.\n\n"
      ">>> flambeau.is_floating_point(flambeau.tensor([1.0]))\n"
      "True\n"
      ">>> flambeau.is_floating_point(flambeau.tensor([1]))\n"
      "False\n");
  m.def(
      "is_complex",
      [](py::handle o) { return is_complex_dtype(tensor_arg(o, "is_complex")->dtype()); },
      py::arg("input"),
      "True if input's dtype is a complex type.\n\n"
      ">>> flambeau.is_complex(flambeau.tensor([1 + 2j]))\n"
      "True\n"
      ">>> flambeau.is_complex(flambeau.tensor([1.0]))\n"
      "False\n");
  m.def(
      "numel", [](py::handle o) { return tensor_arg(o, "numel")->numel(); }, py::arg("input"),
      "The number of elements of input.\n\n"
      ">>> flambeau.numel(flambeau.zeros(2, 3, 4))\n"
      "24\n");
}

}  // namespace

FLB_BINDINGS(40, bind_dtype_queries);

}  // namespace flambeau::python
