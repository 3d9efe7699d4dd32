// The __torch_function__ protocol: PyTorch's way for a Tensor subclass to take
// over the functions and methods called on its instances. Tensor.__init_subclass__
// (flambeau/_torch_function.py) registers each subclass whose __torch_function__
// is not the disabled one; a binding whose tensor arguments include an instance
// of such a class hands its call to the Python handler, which calls the
// classes' __torch_function__ in PyTorch's order. A TorchFunctionMode on this
// thread's mode stack (flambeau/overrides.py) takes every call, tensors or not.
// While no such class or mode exists, the check costs two loads and a branch.
#pragma once
#include <pybind11/pybind11.h>

#include "python/arg_parser.h"

namespace flambeau::python::torch_function {

namespace py = pybind11;

extern bool g_any_override;              // an overriding subclass has been defined
extern thread_local int t_disabled;      // DisableTorchFunctionSubclass nesting depth
extern thread_local int t_all_disabled;  // DisableTorchFunction (modes too) nesting depth
extern thread_local int t_modes;         // TorchFunctionMode stack depth on this thread

bool overrides(PyObject* o);  // o is an instance of a registered subclass
bool wants_slow(const ParsedArgs& p);

inline bool mode_active() { return t_modes > 0 && t_all_disabled == 0; }
// Neither DisableTorchFunction nor DisableTorchFunctionSubclass is in force.
inline bool enabled() { return t_disabled == 0 && t_all_disabled == 0; }

inline bool wants(const ParsedArgs& p) {
  if (__builtin_expect(!g_any_override && t_modes == 0, 1)) return false;
  return mode_active() || (t_disabled == 0 && t_all_disabled == 0 && wants_slow(p));
}
// For calls whose arguments are not parsed first (Python operators, the wrapped Tensor
// methods and properties): whether a mode or one of the n objects takes the call.
inline bool wants_any(PyObject* const* objects, Py_ssize_t n) {
  if (__builtin_expect(!g_any_override && t_modes == 0, 1)) return false;
  if (mode_active()) return true;
  if (!enabled()) return false;
  for (Py_ssize_t i = 0; i < n; ++i)
    if (overrides(objects[i])) return true;
  return false;
}
// For Python operators: the operands as given (other may be a number, or null).
inline bool wants_operands(PyObject* self, PyObject* other) {
  PyObject* const operands[] = {self, other};
  return wants_any(operands, other ? 2 : 1);
}

// Not a Tensor, and its type defines __torch_function__ (PyTorch's tensor-likes: fx's
// Proxy). Looked for only where a call could not bind its arguments.
bool is_tensor_like(PyObject* o);

// Calls handler(name, is_method, args, kwargs), `self` prepended to args when given.
py::object call(const char* name, bool is_method, py::handle self, const py::tuple& args,
                const py::dict& kwargs);

void register_bindings(py::module_& m);

}  // namespace flambeau::python::torch_function
