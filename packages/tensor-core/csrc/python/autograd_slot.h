// The autograd key of the dispatcher. It stays empty until the autograd
// package installs a handler; then, when grad mode is on and a tensor argument
// requires grad, a binding hands its call to that handler instead of running
// the kernel directly. With no handler the call falls through at the cost of
// one branch.
#pragma once
#include <pybind11/pybind11.h>

#include "dispatch/dispatcher.h"
#include "python/arg_parser.h"

namespace flambeau::python::autograd_slot {

namespace py = pybind11;

extern bool g_installed;
extern thread_local bool t_inside_handler;
bool wants_slow(const ParsedArgs& p);

inline bool wants(const ParsedArgs& p) { return g_installed && wants_slow(p); }

template <class... T>
inline bool wants_tensors(const T&... tensors) {
  return g_installed && !t_inside_handler && grad_enabled() &&
         ((tensors && tensors->requires_grad()) || ...);
}

// Calls handler(name, args, kwargs); `self` (when given) is prepended to args.
py::object call(const char* name, py::handle self, const py::tuple& args, const py::dict& kwargs);

void install(py::object handler);  // None uninstalls
void register_bindings(py::module_& m);

}  // namespace flambeau::python::autograd_slot
