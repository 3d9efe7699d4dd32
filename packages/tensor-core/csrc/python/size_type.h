// flambeau.Size, the type of t.shape and t.size(): a tuple of ints whose slices,
// concatenations and repetitions are Sizes again, as torch.Size's. Its slots are C
// (_C._SizeBase, size_type.cpp) so that s[0] costs what a tuple's does; the Python
// class (flambeau/_size.py) adds repr and numel.
#pragma once
#include <pybind11/pybind11.h>

#include "core/small_vector.h"

namespace flambeau::python::size_type {

namespace py = pybind11;

// A flambeau.Size of these sizes.
py::object size_object(IntList sizes);

void register_bindings(py::module_& m);

}  // namespace flambeau::python::size_type
