// The base type of every autograd graph node (flambeau._C._Node). The autograd
// package's node classes (Node, FormulaNode, AccumulateGrad, ...) derive from it
// in Python; the fields that the C++ recorder writes and the backward engine reads
// are typed members here, so neither touches a node's __dict__. Python sees them
// as the attributes the package has always used: _name, next_functions,
// n_outputs, _formula, _saved, _released, and the hook tables _hooks, _prehooks,
// _tensor_hooks and _retained (an empty read-only mapping until the first
// registration makes a dict).
#pragma once
#include <pybind11/pybind11.h>

namespace flambeau::python::autograd_node {

struct NodeObject {
  PyObject_HEAD PyObject* name;  // "MulBackward0"
  PyObject* next_functions;      // a tuple of (node or None, output_nr) edges
  PyObject* formula;             // FormulaNode: formula(grads, args, next_functions)
  PyObject* saved;               // FormulaNode: what the formula reads (None once released)
  PyObject* hooks;               // {handle id: fn(grad_inputs, grad_outputs)}, or null
  PyObject* prehooks;            // {handle id: fn(grad_outputs)}, or null
  PyObject* tensor_hooks;        // {output_nr: {handle id: fn(grad)}}, or null
  PyObject* retained;            // {output_nr: weakref to the tensor}, or null
  Py_ssize_t n_outputs;
  // The order of creation on its thread (PyTorch's sequence_nr): the engine runs the
  // ready node created last first, as PyTorch's ready queue does.
  uint64_t sequence_nr;
  char released;  // the saved values were freed by a backward without retain_graph
};

extern PyTypeObject* g_node_type;

// The next sequence number of this thread, for a node being made.
uint64_t next_sequence_nr();

// o as a node, or null when it is not one.
inline NodeObject* as_node(PyObject* o) {
  return g_node_type && PyObject_TypeCheck(o, g_node_type) ? reinterpret_cast<NodeObject*>(o)
                                                           : nullptr;
}

// Sets a field to a new reference to value (null: none), dropping the old one.
inline void set_field(PyObject*& field, PyObject* value) {
  Py_XINCREF(value);
  Py_XSETREF(field, value);
}

}  // namespace flambeau::python::autograd_node
