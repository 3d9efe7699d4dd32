// The autograd key of the dispatcher. It stays empty until the autograd
// package installs a handler; then, when grad mode is on and a tensor argument
// requires grad, a binding hands its call to that handler instead of running
// the kernel directly. With no handler the call falls through at the cost of
// one branch.
#pragma once
#include <pybind11/pybind11.h>

#include <initializer_list>

#include "dispatch/dispatcher.h"
#include "python/arg_parser.h"
#include "python/autograd_record.h"

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

// A call that wants recording: recorded in C++ when its overload has a plan
// (autograd_record.h) and nothing asks for the Python recorder; run() calls the
// kernel and returns the Python result.
template <class Run>
py::object dispatch(const autograd_record::PlanSlot& slot, const ParsedArgs& p, const char* name,
                    py::handle self, const py::tuple& args, const py::dict& kwargs, Run&& run) {
  const autograd_record::Plan* plan = slot.get();
  if (plan && autograd_record::enabled() && p.varargs_index < 0 && !p.varargs_list) {
    const auto n = static_cast<int>(p.sig->params().size());
    bool plain = n >= plan->n_params;
    for (int i = plan->n_params; plain && i < n; ++i) plain = p.slots[i] == Py_None;  // out=
    if (plain && autograd_record::recordable(*plan, p.slots.data()))
      return autograd_record::record(*plan, p.slots.data(), run());
  }
  return call(name, self, args, kwargs);
}

// The same for an in-place call (`self` is its target), with the plan of its
// out-of-place operator; run() calls the kernel. Returns `self`.
template <class Run>
py::object dispatch_inplace(const autograd_record::PlanSlot& slot, const ParsedArgs& p,
                            const char* name, py::handle self, const py::tuple& args,
                            const py::dict& kwargs, Run&& run) {
  const autograd_record::Plan* plan = slot.get();
  if (plan && autograd_record::enabled() && p.varargs_index < 0 && !p.varargs_list &&
      static_cast<int>(p.sig->params().size()) == plan->n_params &&
      autograd_record::inplace_recordable(*plan, p.slots.data())) {
    autograd_record::record_inplace(*plan, p.slots.data(), run);
    return py::reinterpret_borrow<py::object>(self);
  }
  return call(name, self, args, kwargs);
}

// The same for Python operators (a + b): operands, then the table's defaults.
template <class Run>
py::object dispatch_operands(const autograd_record::PlanSlot& slot, const char* name,
                             std::initializer_list<py::handle> operands, Run&& run) {
  const autograd_record::Plan* plan = slot.get();
  if (plan && autograd_record::enabled() && static_cast<int>(operands.size()) <= plan->n_params) {
    PyObject* args[kMaxParams];
    int i = 0;
    for (py::handle h : operands) args[i++] = h.ptr();
    for (; i < plan->n_params; ++i) args[i] = PyTuple_GET_ITEM(plan->defaults.ptr(), i);
    return autograd_record::record(*plan, args, run());
  }
  py::tuple args(operands.size());
  size_t i = 0;
  for (py::handle h : operands) args[i++] = h;
  return call(name, py::handle(), args, py::dict());
}

void install(py::object handler);  // None uninstalls
void register_bindings(py::module_& m);

}  // namespace flambeau::python::autograd_slot
