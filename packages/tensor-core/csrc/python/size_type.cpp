// _C._SizeBase, the C part of flambeau.Size (see size_type.h): a tuple subtype whose
// constructor takes an iterable of ints (anything with __index__: bools and integer
// 0-dim tensors become ints) and whose slice, + and * keep the operand's Size class.
#include "python/size_type.h"

namespace flambeau::python::size_type {

namespace {

PyTypeObject* g_base = nullptr;  // _C._SizeBase

// A new instance of `type` (a Size class) holding the items of the tuple t.
PyObject* size_like(PyTypeObject* type, PyObject* t) {
  const Py_ssize_t n = PyTuple_GET_SIZE(t);
  PyObject* out = type->tp_alloc(type, n);
  if (!out) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* v = PyTuple_GET_ITEM(t, i);
    Py_INCREF(v);
    PyTuple_SET_ITEM(out, i, v);
  }
  return out;
}

// size_like for a result the tuple slot made (stolen), or its error.
PyObject* as_size(PyTypeObject* type, PyObject* result) {
  if (!result || result == Py_NotImplemented) return result;
  PyObject* out = size_like(type, result);
  Py_DECREF(result);
  return out;
}

bool is_size(PyObject* o) { return PyObject_TypeCheck(o, g_base); }

PyObject* size_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"sizes", nullptr};
  PyObject* sizes = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Size", const_cast<char**>(keywords), &sizes))
    return nullptr;
  PyObject* items = sizes ? PySequence_Tuple(sizes) : PyTuple_New(0);
  if (!items) return nullptr;
  const Py_ssize_t n = PyTuple_GET_SIZE(items);
  PyObject* out = type->tp_alloc(type, n);
  for (Py_ssize_t i = 0; out && i < n; ++i) {
    PyObject* item = PyTuple_GET_ITEM(items, i);
    PyObject* v = PyNumber_Index(item);
    if (!v) {
      if (PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "flambeau.Size() takes an iterable of 'int' (item %zd is '%s')", i,
                     Py_TYPE(item)->tp_name);
      }
      Py_CLEAR(out);
      break;
    }
    PyTuple_SET_ITEM(out, i, v);
  }
  Py_DECREF(items);
  return out;
}

PyObject* size_subscript(PyObject* self, PyObject* key) {
  PyObject* r = PyTuple_Type.tp_as_mapping->mp_subscript(self, key);
  return PySlice_Check(key) ? as_size(Py_TYPE(self), r) : r;
}

// a + b where a or b is a Size and the other a tuple: a Size of the first's class.
PyObject* size_add(PyObject* a, PyObject* b) {
  if (is_size(a) && !PyTuple_Check(b)) {  // tuple's own message, which this slot hides
    PyErr_Format(PyExc_TypeError, "can only concatenate tuple (not %s) to flambeau.Size",
                 Py_TYPE(b)->tp_name);
    return nullptr;
  }
  if (!PyTuple_Check(a) || !PyTuple_Check(b)) Py_RETURN_NOTIMPLEMENTED;
  PyTypeObject* type = is_size(a) ? Py_TYPE(a) : Py_TYPE(b);
  return as_size(type, PyTuple_Type.tp_as_sequence->sq_concat(a, b));
}

// size * n or n * size, n an int.
PyObject* size_multiply(PyObject* a, PyObject* b) {
  PyObject* size = is_size(a) ? a : b;
  PyObject* count = size == a ? b : a;
  if (!PyIndex_Check(count)) Py_RETURN_NOTIMPLEMENTED;
  const Py_ssize_t n = PyNumber_AsSsize_t(count, PyExc_OverflowError);
  if (n == -1 && PyErr_Occurred()) return nullptr;
  return as_size(Py_TYPE(size), PyTuple_Type.tp_as_sequence->sq_repeat(size, n));
}

PyType_Slot g_slots[] = {
    {Py_tp_doc, const_cast<char*>("The C part of flambeau.Size: a tuple of ints.")},
    {Py_tp_new, reinterpret_cast<void*>(size_new)},
    {Py_mp_subscript, reinterpret_cast<void*>(size_subscript)},
    {Py_nb_add, reinterpret_cast<void*>(size_add)},
    {Py_nb_multiply, reinterpret_cast<void*>(size_multiply)},
    {0, nullptr},
};

PyType_Spec g_spec = {"flambeau._C._SizeBase", 0, 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
                      g_slots};

}  // namespace

py::object size_object(IntList sizes) {
  // (once, without holding a static's guard while the import runs Python)
  PYBIND11_CONSTINIT static py::gil_safe_call_once_and_store<py::object> size_class;
  const py::object& cls = size_class
                              .call_once_and_store_result(
                                  [] { return py::module_::import("flambeau._size").attr("Size"); })
                              .get_stored();
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  py::object out = py::reinterpret_steal<py::object>(
      type->tp_alloc(type, static_cast<Py_ssize_t>(sizes.size())));
  if (!out) throw py::error_already_set();
  for (size_t i = 0; i < sizes.size(); ++i) {
    PyObject* v = PyLong_FromLongLong(sizes[i]);
    if (!v) throw py::error_already_set();
    PyTuple_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i), v);
  }
  return out;
}

void register_bindings(py::module_& m) {
  py::object bases = py::make_tuple(py::handle(reinterpret_cast<PyObject*>(&PyTuple_Type)));
  PyObject* type = PyType_FromSpecWithBases(&g_spec, bases.ptr());
  if (!type) throw py::error_already_set();
  g_base = reinterpret_cast<PyTypeObject*>(type);  // the module's reference keeps it alive
  m.add_object("_SizeBase", py::reinterpret_steal<py::object>(type));
}

}  // namespace flambeau::python::size_type
