// Binding files register themselves here (FLB_BINDINGS), so adding a binding
// file never means editing the module's init function.
#pragma once
#include <pybind11/pybind11.h>

#include "dispatch/dispatcher.h"  // FLB_CONCAT
#include "python/tensor_holder.h"

namespace flambeau::python {

namespace py = pybind11;
using BindFn = void (*)(py::module_& m, py::object tensor_class);

struct BindingsRegistrar {
  BindingsRegistrar(int order, BindFn fn);
};
void run_registered_bindings(py::module_& m, py::object tensor_class);

}  // namespace flambeau::python

// Runs fn(m, Tensor) at import, after the core types exist; lower order first.
#define FLB_BINDINGS(order, fn) \
  static ::flambeau::python::BindingsRegistrar FLB_CONCAT(flb_bindings_, __COUNTER__)(order, fn)
