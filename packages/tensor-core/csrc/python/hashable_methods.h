// Makes a pybind11 class's methods hashable (see hashable_methods.cpp).
#pragma once
#include <pybind11/pybind11.h>

namespace flambeau::python {

namespace py = pybind11;

void make_methods_hashable(py::handle cls);

}  // namespace flambeau::python
