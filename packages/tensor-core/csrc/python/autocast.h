// Autocast in the generated bindings. An operator whose table entry says
// `autocast: <policy>` checks, after parsing, whether autocast is on in this
// thread (one branch while it is off); if it is on for the device type of the
// call's tensors, its floating-point tensor arguments (float16, bfloat16,
// float32 on that device type; float64 is left alone, as in PyTorch) are cast
// with Tensor.to, which autograd records, and the call is parsed again from
// the rewritten arguments. See docs/design/autocast.rst.
#pragma once
#include <pybind11/pybind11.h>

#include "core/autocast.h"
#include "python/arg_parser.h"

namespace flambeau::python {

namespace py = pybind11;

// Casts the parsed call's tensor arguments (Tensor, Tensor? and Tensor[]
// parameters) by `policy`, replacing them in `args`, `kwargs` and `*self` (a
// method's bound tensor; nullptr for functions; `keep` owns its cast). Returns
// false, changing nothing, when autocast is off for the call's device type, an
// out= tensor is given, or no argument needs a cast; the caller parses again
// when it returns true.
bool autocast_arguments(autocast::Policy policy, const ParsedArgs& p, py::handle* self,
                        py::object& keep, py::args& args, py::kwargs& kwargs);

// The same for a Python operator (a @ b): its result computed on the cast
// operands through the same dunder, or a null object when nothing is cast.
py::object autocast_operator(autocast::Policy policy, const char* dunder, py::handle self,
                             py::handle other);

}  // namespace flambeau::python
