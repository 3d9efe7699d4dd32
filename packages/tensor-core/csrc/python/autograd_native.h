// Derivative formulas compiled in C++, for the operators whose backward runs most
// often. Each is written once, against Call, and runs two ways:
//  - from the engine (autograd_engine.cpp), on a call recorded in C++: no Python
//    frame and no argument dict (apply());
//  - from Python, as the formula the autograd package registers for the operator
//    (derivatives/*.py: ``formula("mul", reads=...)(native("mul"))``), called
//    fn(grad, args) like any Python formula, for calls the Python recorder made.
// Formulas compute with Python's operators (PyNumber_*), so that under
// create_graph their operations are recorded like any other call.
#pragma once
#include <pybind11/pybind11.h>

#include <cstdint>
#include <vector>

#include "python/arg_parser.h"

namespace flambeau::python::autograd_record {
struct Plan;
struct SavedData;
}  // namespace flambeau::python::autograd_record

namespace flambeau::python::autograd_native {

namespace py = pybind11;

// One run of a formula: the outputs' gradients and the call's arguments in, the
// arguments' gradients out.
struct Call {
  PyObject* const* grads = nullptr;  // the outputs' gradients (None where none arrived)
  Py_ssize_t n_grads = 0;
  PyObject* args[kMaxParams] = {};  // the formula's parameters, borrowed; a tensor whose
                                    // value was not kept is None (no wanted gradient reads it)
  uint32_t wanted = 0;              // bit k: the gradient of parameter k is wanted
  py::object out[kMaxParams];       // the gradients the formula computed

  py::handle grad(Py_ssize_t j = 0) const { return j < n_grads ? grads[j] : Py_None; }
  py::handle arg(int k) const { return args[k]; }
  bool wants(int k) const { return wanted >> k & 1; }
  void set(int k, py::object g) { out[k] = std::move(g); }
};

struct Formula {
  const char* name;                 // the operator's table name ("mul")
  std::vector<const char*> params;  // the parameters it reads or differentiates
  void (*fn)(Call&);
};

// Formula files register theirs at load time (FLB_NATIVE_FORMULA).
struct FormulaRegistrar {
  explicit FormulaRegistrar(Formula f);
};

// The formula a _NativeFormula object runs; TypeError for anything else.
const Formula& formula_of(py::handle native);

// The gradients of a recorded call's tensor arguments, in the order of its node's
// edges (next_functions), each cast and summed to its argument's dtype and shape;
// None where an edge is empty or the formula gives none.
py::object apply(const autograd_record::Plan& plan, const autograd_record::SavedData& d,
                 PyObject* const* grads, Py_ssize_t n_grads, PyObject* next_functions);

// Installed by the autograd package: fit_gradient(grad, input) -> grad with the
// input's dtype and shape (called only when they differ).
void set_fit_gradient(py::object fn);

}  // namespace flambeau::python::autograd_native

// FLB_NATIVE_FORMULA(fn, "mul", "input", "other"): fn differentiates the operator
// "mul", whose parameters input and other it reads or differentiates (Call's args,
// in this order).
#define FLB_NATIVE_FORMULA(fn, name, ...)                                  \
  static ::flambeau::python::autograd_native::FormulaRegistrar FLB_CONCAT( \
      flb_native_formula_,                                                 \
      __COUNTER__)(::flambeau::python::autograd_native::Formula{name, {__VA_ARGS__}, fn})
