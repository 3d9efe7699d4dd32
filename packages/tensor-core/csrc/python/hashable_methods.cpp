// pybind11 binds a class's methods as CPython `instancemethod` objects, a type that
// defines equality but no hash: Tensor.add could not be a dict key or a set member, which
// PyTorch code does (__torch_function__ tables keyed on Tensor methods; torchvision keeps
// a set of them). Once every binding is defined, Tensor's methods are re-wrapped in a
// subtype that hashes as its function does and compares by identity. Lookup, binding and
// calls are the base type's.
#include "python/hashable_methods.h"

namespace flambeau::python {

namespace {

Py_hash_t hash_method(PyObject* self) { return PyObject_Hash(PyInstanceMethod_GET_FUNCTION(self)); }

PyTypeObject* method_type() {
  static PyTypeObject* type = [] {
    static PyTypeObject t = {PyVarObject_HEAD_INIT(nullptr, 0)};
    t.tp_name = "flambeau._C.instancemethod";
    t.tp_basicsize = sizeof(PyInstanceMethodObject);
    t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC;
    t.tp_base = &PyInstanceMethod_Type;
    t.tp_traverse = PyInstanceMethod_Type.tp_traverse;  // GC types must name theirs
    t.tp_dealloc = PyInstanceMethod_Type.tp_dealloc;
    t.tp_hash = hash_method;  // with tp_richcompare left null, equality is identity
    if (PyType_Ready(&t) < 0) throw py::error_already_set();
    // PyType_Ready put a __doc__ of None in the type's dict, which would hide the base's
    // __doc__ (the function's docstring).
    if (PyDict_DelItemString(t.tp_dict, "__doc__") < 0) PyErr_Clear();
    PyType_Modified(&t);
    return &t;
  }();
  return type;
}

}  // namespace

void make_methods_hashable(py::handle cls) {
  PyTypeObject* type = method_type();
  py::dict members = py::reinterpret_borrow<py::dict>(
      py::handle(reinterpret_cast<PyTypeObject*>(cls.ptr())->tp_dict));
  std::vector<std::pair<py::object, py::object>> replaced;
  for (auto [name, value] : members) {
    if (Py_TYPE(value.ptr()) != &PyInstanceMethod_Type) continue;
    PyObject* m = type->tp_alloc(type, 0);
    if (!m) throw py::error_already_set();
    reinterpret_cast<PyInstanceMethodObject*>(m)->func =
        Py_NewRef(PyInstanceMethod_GET_FUNCTION(value.ptr()));
    replaced.emplace_back(py::reinterpret_borrow<py::object>(name),
                          py::reinterpret_steal<py::object>(m));
  }
  for (auto& [name, method] : replaced) py::setattr(cls, name, method);
}

}  // namespace flambeau::python
