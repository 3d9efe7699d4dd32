// Hand-written Tensor methods of the pointwise family that the operator table
// cannot express: hashing by identity (pybind11 drops __hash__ once __eq__ is
// defined, but tensors are dict keys in PyTorch) and Tensor.where(condition,
// other), whose self is the `input` argument rather than the first one.
#include "dispatch/dispatcher.h"
#include "python/registry.h"

namespace flambeau::python {

namespace {

void bind_pointwise(py::module_& m, py::object cls_obj) {
  auto cls = py::reinterpret_borrow<py::class_<TensorImpl, Tensor>>(cls_obj);
  cls.def("__hash__", [](py::handle self) {
    return static_cast<Py_hash_t>(reinterpret_cast<uintptr_t>(self.ptr()) >> 4);
  });
  py::object where = m.attr("where");
  cls.def(
      "where",
      [where](py::handle self, py::handle condition, py::handle other) {
        return where(condition, self, other);
      },
      py::arg("condition"), py::arg("other"),
      "input where condition holds, other elsewhere (self is input).");
}

}  // namespace

FLB_BINDINGS(20, bind_pointwise);

}  // namespace flambeau::python
