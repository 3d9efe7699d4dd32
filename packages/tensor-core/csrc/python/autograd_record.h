// The autograd slot's fast path: recording a graph node without running Python.
//
// The autograd package owns the graph's semantics; it registers, once, a
// recording plan for each operator overload whose derivative formula is plain
// (not a composite, not a multi-tensor foreach operator); in-place calls use the plan
// of their out-of-place overload. A call that must be
// recorded and has a plan runs its kernel here, then this file builds the node
// the package's Python recorder would have built: an instance of the package's
// node class holding its edges, its formula and a SavedCall (the call's
// arguments, their versions and the outputs), and attaches it to the outputs.
// Everything else goes to the package's Python handler. See
// docs/design/autograd-package.rst.
#pragma once
#include <pybind11/pybind11.h>

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "python/arg_parser.h"

namespace flambeau::python::autograd_record {

namespace py = pybind11;

struct Plan {
  py::object node_name;   // "AddBackward0"
  py::tuple param_names;  // the table's parameters, in order (no out=)
  py::tuple defaults;     // their defaults (None where there is none)
  int n_params = 0;
  bool check_inputs = true;    // the formula reads input values: check their versions
  uint64_t check_outputs = 0;  // bit j: the formula reads output j: check its version
  bool view = false;           // the output is a view of the first input
  // Bit i: parameter i is a tensor list (Tensor[]): each element gets an edge, and the
  // list is kept whole, as a tuple, with no version checks (as the Python recorder does).
  uint32_t lists = 0;
  // Bit i: tensor parameter i lends only its shape, dtype or device (view_as's other):
  // no edge, and its requiring grad alone records nothing, as PyTorch.
  uint32_t nondiff = 0;
  // formula_for(tensor_mask, tuple_output, list_lengths) -> backward(grads, args); None:
  // the operator is not differentiable and nothing is recorded. list_lengths: the
  // lengths of the call's tensor lists, in parameter order (() without lists).
  py::object formula_for;
  // Cached by {tensor mask | tuple bit, list lengths...}.
  mutable std::vector<std::pair<std::vector<int64_t>, py::object>> formulas;
  // keep_for(tensor_mask, grad_mask) -> bit i: keep argument i for the formula; None:
  // keep every argument. A tensor argument not kept reaches the formula as the package's
  // tensor_meta(shape, dtype, device): x * 3.0 then keeps nothing of x alive.
  py::object keep_for;
  mutable std::vector<std::pair<uint64_t, uint32_t>> keeps;  // cached by (tensor, grad) masks
  // The operator's formula when it is compiled in C++ (autograd_native.h), else null;
  // the engine then runs it on the recorded call directly. native_params[k]: the
  // position in this plan of the formula's parameter k.
  py::object native;
  std::vector<int> native_params;
};

// An operator overload's plan, looked up by its table key ("add", "add.Scalar")
// the first time a call site needs it (and again after new registrations).
class PlanSlot {
 public:
  explicit PlanSlot(const char* key) : key_(key) {}
  const Plan* get() const;

 private:
  const char* key_;
  mutable const Plan* plan_ = nullptr;
  mutable uint64_t generation_ = ~uint64_t{0};
};

// Whether a call's arguments suit the plan: its tensor lists hold tensors only (or are
// None). Checked before the kernel runs; otherwise the Python recorder takes the call.
bool recordable(const Plan& plan, PyObject* const* args);

// Off while anomaly detection is on in this thread (nodes then record their
// creation traceback, which only the Python recorder does) or when switched off.
bool enabled();

// Whether an in-place call (its target is args[0]) can be recorded here with the plan of
// its out-of-place operator: the plan is not a view's and has no tensor list, and the
// target has no view record (the Python recorder rebases a view's root through
// CopySlices) and is not a leaf that requires grad (the Python recorder raises).
bool inplace_recordable(const Plan& plan, PyObject* const* args);

// Records an in-place call: edges and versions from before run() (which calls the
// kernel), a copy of the target's old value when the formula reads it, then the node,
// onto which the target is re-rooted.
void record_inplace(const Plan& plan, PyObject* const* args, const std::function<void()>& run);

// Records the node of a call whose kernel returned `result`. `args` are the
// call's arguments in table order (plan.n_params of them, defaults filled in).
py::object record(const Plan& plan, PyObject* const* args, py::object result);

}  // namespace flambeau::python::autograd_record
