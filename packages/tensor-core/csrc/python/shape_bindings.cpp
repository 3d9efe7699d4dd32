// Python-only spellings of shape operators: meshgrid(a, b, ...) as varargs and
// the T / mT properties. Each forwards to a table operator, so the autograd
// slot still sees the call.
#include <pybind11/pybind11.h>

#include "python/binding_support.h"
#include "python/registry.h"

namespace flambeau::python {

namespace {

void bind_shape(py::module_& m, py::object cls_obj) {
  // meshgrid(*tensors, indexing=None) or meshgrid([tensors], indexing=None).
  py::object impl = m.attr("_meshgrid");
  m.def(
      "meshgrid",
      [impl](py::args args, py::kwargs kwargs) -> py::object {
        if (args.size() == 1 &&
            (py::isinstance<py::list>(args[0]) || py::isinstance<py::tuple>(args[0])))
          return impl(args[0], **kwargs);
        return impl(py::list(args), **kwargs);
      },
      "meshgrid(*tensors, indexing=None) -> tuple of Tensors\n\nCoordinate grids (expanded "
      "views) from 1-d tensors; indexing 'ij' (default) or 'xy'.");
  cls_obj.attr("T") =
      py::module_::import("builtins").attr("property")(py::cpp_function([](py::handle self) {
        py::object t = py::reinterpret_borrow<py::object>(self);
        int64_t n = py::cast<Tensor>(self)->dim();
        py::tuple order(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) order[i] = py::int_(n - 1 - i);
        return t.attr("permute")(order);
      }));
  cls_obj.attr("mT") =
      py::module_::import("builtins").attr("property")(py::cpp_function([](py::handle self) {
        FLB_CHECK(py::cast<Tensor>(self)->dim() >= 2,
                  "tensor.mT is only supported on matrices or batches of matrices. Got ",
                  py::cast<Tensor>(self)->dim(), "-D tensor.");
        return py::reinterpret_borrow<py::object>(self).attr("transpose")(-2, -1);
      }));
}

}  // namespace

FLB_BINDINGS(20, bind_shape);

}  // namespace flambeau::python
