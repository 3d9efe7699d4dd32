// flambeau._C._Node: the typed base of the autograd package's graph nodes
// (autograd_node.h).
#include "python/autograd_node.h"

#include <structmember.h>

#include <cstddef>

#include "python/registry.h"

namespace flambeau::python::autograd_node {

PyTypeObject* g_node_type = nullptr;

namespace {

PyObject* g_empty_table = nullptr;  // the read-only {} a hook table reads as until made

int node_traverse(PyObject* self, visitproc visit, void* arg) {
  auto* n = reinterpret_cast<NodeObject*>(self);
  Py_VISIT(n->name);
  Py_VISIT(n->next_functions);
  Py_VISIT(n->formula);
  Py_VISIT(n->saved);
  Py_VISIT(n->hooks);
  Py_VISIT(n->prehooks);
  Py_VISIT(n->tensor_hooks);
  Py_VISIT(n->retained);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

int node_clear(PyObject* self) {
  auto* n = reinterpret_cast<NodeObject*>(self);
  Py_CLEAR(n->name);
  Py_CLEAR(n->next_functions);
  Py_CLEAR(n->formula);
  Py_CLEAR(n->saved);
  Py_CLEAR(n->hooks);
  Py_CLEAR(n->prehooks);
  Py_CLEAR(n->tensor_hooks);
  Py_CLEAR(n->retained);
  return 0;
}

void node_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  // A long chain of nodes frees one node from inside another's dealloc: the
  // trashcan keeps that from overflowing the C stack.
  Py_TRASHCAN_BEGIN(self, node_dealloc) node_clear(self);
  type->tp_free(self);
  Py_DECREF(type);  // instances of a heap type hold a reference to it
  Py_TRASHCAN_END
}

template <PyObject* NodeObject::* Field>
PyObject* get_table(PyObject* self, void*) {
  PyObject* t = reinterpret_cast<NodeObject*>(self)->*Field;
  PyObject* out = t ? t : g_empty_table;
  Py_INCREF(out);
  return out;
}

template <PyObject* NodeObject::* Field>
int set_table(PyObject* self, PyObject* value, void*) {
  set_field(reinterpret_cast<NodeObject*>(self)->*Field, value == Py_None ? nullptr : value);
  return 0;
}

#define FLB_NODE_TABLE(name, field, doc)                                                       \
  {name, get_table<&NodeObject::field>, set_table<&NodeObject::field>, const_cast<char*>(doc), \
   nullptr}

PyGetSetDef node_getset[] = {
    FLB_NODE_TABLE("_hooks", hooks, "{handle id: fn(grad_inputs, grad_outputs)}"),
    FLB_NODE_TABLE("_prehooks", prehooks, "{handle id: fn(grad_outputs)}"),
    FLB_NODE_TABLE("_tensor_hooks", tensor_hooks, "{output_nr: {handle id: fn(grad)}}"),
    FLB_NODE_TABLE("_retained", retained, "{output_nr: weakref to the tensor (retain_grad)}"),
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

#undef FLB_NODE_TABLE

PyMemberDef node_members[] = {
    {"_name", T_OBJECT, offsetof(NodeObject, name), 0, nullptr},
    {"next_functions", T_OBJECT, offsetof(NodeObject, next_functions), 0, nullptr},
    {"_formula", T_OBJECT, offsetof(NodeObject, formula), 0, nullptr},
    {"_saved", T_OBJECT, offsetof(NodeObject, saved), 0, nullptr},
    {"n_outputs", T_PYSSIZET, offsetof(NodeObject, n_outputs), 0, nullptr},
    {"_released", T_BOOL, offsetof(NodeObject, released), 0, nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

PyObject* node_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* self = PyType_GenericNew(type, args, kwargs);
  if (self) reinterpret_cast<NodeObject*>(self)->sequence_nr = next_sequence_nr();
  return self;
}

PyTypeObject* make_node_type() {
  static PyType_Slot slots[] = {
      {Py_tp_dealloc, reinterpret_cast<void*>(node_dealloc)},
      {Py_tp_traverse, reinterpret_cast<void*>(node_traverse)},
      {Py_tp_clear, reinterpret_cast<void*>(node_clear)},
      {Py_tp_new, reinterpret_cast<void*>(node_new)},
      {Py_tp_members, node_members},
      {Py_tp_getset, node_getset},
      {Py_tp_doc, const_cast<char*>("The typed base of autograd's graph nodes.")},
      {0, nullptr},
  };
  static PyType_Spec spec = {"flambeau._C._Node", sizeof(NodeObject), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, slots};
  return reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&spec));
}

void register_bindings(py::module_& m, py::object /*tensor_class*/) {
  py::object empty = py::reinterpret_steal<py::object>(PyDictProxy_New(py::dict().ptr()));
  if (!empty) throw py::error_already_set();
  g_empty_table = empty.release().ptr();  // kept for the life of the process
  g_node_type = make_node_type();
  if (!g_node_type) throw py::error_already_set();
  m.add_object("_Node",
               py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(g_node_type)));
}

FLB_BINDINGS(59, register_bindings);

}  // namespace

uint64_t next_sequence_nr() {
  thread_local uint64_t next = 0;
  return next++;
}

}  // namespace flambeau::python::autograd_node
