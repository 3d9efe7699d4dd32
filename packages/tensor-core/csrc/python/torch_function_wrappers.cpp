// Wrappers that give __torch_function__ the Tensor methods and properties with no check
// of their own: those bound by hand (size, dim, shape, dtype, item, ...) and those
// written in Python (tolist, T, grad, ...). PyTorch hands every one of them to the
// protocol (a property as Tensor.<name>.__get__ / __set__); flambeau.overrides installs
// a wrapper over each name its table lists, once all of Tensor's attributes exist.
//
// _DispatchingMethod(name, impl) is a method descriptor: Tensor.<name> is the wrapper
// itself, t.<name>(...) calls impl(t, ...) unless an argument's class or a mode takes
// the call. _DispatchingProperty(name, impl) wraps a data descriptor (a property) alike.
// Unknown attributes (fget, __signature__, ...) are looked up on impl. While no
// overriding class or mode exists, a call costs one branch more than impl's.
#include "python/autograd_meta.h"
#include "python/registry.h"
#include "python/tensor_attributes.h"
#include "python/torch_function.h"
// After Python.h (which registry.h includes through pybind11).
#include <structmember.h>

namespace flambeau::python::torch_function {
namespace {

struct Wrapper {
  PyObject_HEAD PyObject* name;  // str
  PyObject* impl;
  vectorcallfunc vectorcall;       // methods only
  tensor_attributes::Getter fast;  // the most-read properties (tensor_attributes.h)
};

extern PyTypeObject method_type;
extern PyTypeObject property_type;
PyObject* wrapper_new(PyTypeObject* type, PyObject* args, PyObject* kwargs);
PyObject* method_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf,
                            PyObject* kwnames);

// Hands the call to the handler: name is "size", or "shape.__get__" for a property.
PyObject* hand_over(PyObject* name, PyObject* const* args, Py_ssize_t n, PyObject* kwnames) {
  try {
    py::tuple all(n);  // self first
    for (Py_ssize_t i = 0; i < n; ++i) all[i] = py::handle(args[i]);
    py::dict kwargs;
    if (kwnames)
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); ++i)
        kwargs[py::handle(PyTuple_GET_ITEM(kwnames, i))] = py::handle(args[n + i]);
    const std::string s = py::str(name);
    return call(s.c_str(), true, py::handle(), all, kwargs).release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

int wrapper_traverse(PyObject* self, visitproc visit, void* arg) {
  auto* w = reinterpret_cast<Wrapper*>(self);
  Py_VISIT(w->name);
  Py_VISIT(w->impl);
  return 0;
}

int wrapper_clear(PyObject* self) {
  auto* w = reinterpret_cast<Wrapper*>(self);
  Py_CLEAR(w->name);
  Py_CLEAR(w->impl);
  return 0;
}

void wrapper_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  wrapper_clear(self);
  Py_TYPE(self)->tp_free(self);
}

PyObject* wrapper_getattro(PyObject* self, PyObject* attr) {
  PyObject* found = PyObject_GenericGetAttr(self, attr);
  if (found || !PyErr_ExceptionMatches(PyExc_AttributeError)) return found;
  PyErr_Clear();
  return PyObject_GetAttr(reinterpret_cast<Wrapper*>(self)->impl, attr);
}

PyObject* wrapper_qualname(PyObject* self, void*) {
  return PyUnicode_FromFormat("Tensor.%U", reinterpret_cast<Wrapper*>(self)->name);
}

PyObject* wrapper_doc(PyObject* self, void*) {
  return PyObject_GetAttrString(reinterpret_cast<Wrapper*>(self)->impl, "__doc__");
}

PyMemberDef wrapper_members[] = {
    {"__name__", T_OBJECT, offsetof(Wrapper, name), READONLY, nullptr},
    {"__wrapped__", T_OBJECT, offsetof(Wrapper, impl), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

PyGetSetDef wrapper_getset[] = {
    {"__qualname__", wrapper_qualname, nullptr, nullptr, nullptr},
    {"__doc__", wrapper_doc, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

// The slots both wrapper types share.
PyTypeObject wrapper_type(const char* name, const char* doc) {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = name;
  t.tp_doc = doc;
  t.tp_basicsize = sizeof(Wrapper);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC;
  t.tp_getattro = wrapper_getattro;
  t.tp_members = wrapper_members;
  t.tp_getset = wrapper_getset;
  t.tp_traverse = wrapper_traverse;
  t.tp_clear = wrapper_clear;
  t.tp_dealloc = wrapper_dealloc;
  t.tp_free = PyObject_GC_Del;
  t.tp_new = wrapper_new;
  return t;
}

// Both fields are set here, at creation (there is no __init__ to leave them unset).
PyObject* wrapper_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* kw[] = {"name", "impl", nullptr};
  PyObject *name = nullptr, *impl = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "UO", const_cast<char**>(kw), &name, &impl))
    return nullptr;
  if (type == &property_type && !Py_TYPE(impl)->tp_descr_get) {
    PyErr_SetString(PyExc_TypeError, "_DispatchingProperty wraps a descriptor (a property)");
    return nullptr;
  }
  PyObject* self = type->tp_alloc(type, 0);
  if (!self) return nullptr;
  auto* w = reinterpret_cast<Wrapper*>(self);
  w->name = Py_NewRef(name);
  w->impl = Py_NewRef(impl);
  if (type == &method_type) w->vectorcall = method_vectorcall;
  if (type == &property_type) w->fast = tensor_attributes::find(name);
  return self;
}

// ---- methods ----

PyObject* method_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf,
                            PyObject* kwnames) {
  auto* w = reinterpret_cast<Wrapper*>(self);
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (__builtin_expect(n > 0 && wants_any(args, n), 0)) return hand_over(w->name, args, n, kwnames);
  return PyObject_Vectorcall(w->impl, args, nargsf, kwnames);
}

PyObject* method_get(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

PyObject* method_repr(PyObject* self) {
  return PyUnicode_FromFormat("<method '%U' of 'flambeau.Tensor' objects>",
                              reinterpret_cast<Wrapper*>(self)->name);
}

// Pickled as getattr(flambeau.Tensor, name).
PyObject* method_reduce(PyObject* self, PyObject*) {
  PyObject* flambeau = PyImport_ImportModule("flambeau");
  if (!flambeau) return nullptr;
  PyObject* tensor = PyObject_GetAttrString(flambeau, "Tensor");
  Py_DECREF(flambeau);
  if (!tensor) return nullptr;
  PyObject* builtins = PyEval_GetBuiltins();  // borrowed
  PyObject* result = Py_BuildValue("(O(NO))", PyDict_GetItemString(builtins, "getattr"), tensor,
                                   reinterpret_cast<Wrapper*>(self)->name);
  return result;
}

PyMethodDef method_methods[] = {
    {"__reduce__", method_reduce, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

PyTypeObject method_type = [] {
  PyTypeObject t = wrapper_type("flambeau._C._DispatchingMethod",
                                "_DispatchingMethod(name, impl): Tensor.<name> through "
                                "__torch_function__.");
  t.tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR;
  t.tp_vectorcall_offset = offsetof(Wrapper, vectorcall);
  t.tp_call = PyVectorcall_Call;
  t.tp_descr_get = method_get;
  t.tp_repr = method_repr;
  t.tp_methods = method_methods;
  return t;
}();

// ---- properties ----

PyObject* accessor_name(PyObject* name, const char* accessor) {
  return PyUnicode_FromFormat("%U.%s", name, accessor);
}

PyObject* property_get(PyObject* self, PyObject* obj, PyObject* type) {
  auto* w = reinterpret_cast<Wrapper*>(self);
  if (obj == nullptr || obj == Py_None) return Py_NewRef(self);  // Tensor.<name>
  if (__builtin_expect(wants_any(&obj, 1), 0)) {
    PyObject* name = accessor_name(w->name, "__get__");
    if (!name) return nullptr;
    PyObject* r = hand_over(name, &obj, 1, nullptr);
    Py_DECREF(name);
    return r;
  }
  if (w->fast && is_tensor(obj)) {
    if (const TensorImpl* t = autograd_meta::impl_of(obj)) {
      try {
        return w->fast(*t);
      } catch (py::error_already_set& e) {
        e.restore();
        return nullptr;
      }
    }
  }
  return Py_TYPE(w->impl)->tp_descr_get(w->impl, obj, type);
}

int property_set(PyObject* self, PyObject* obj, PyObject* value) {
  auto* w = reinterpret_cast<Wrapper*>(self);
  descrsetfunc set = Py_TYPE(w->impl)->tp_descr_set;
  if (value != nullptr && wants_any(&obj, 1)) {
    PyObject* name = accessor_name(w->name, "__set__");
    if (!name) return -1;
    PyObject* args[2] = {obj, value};
    PyObject* r = hand_over(name, args, 2, nullptr);
    Py_DECREF(name);
    if (!r) return -1;
    Py_DECREF(r);
    return 0;
  }
  if (!set) {
    PyErr_Format(PyExc_AttributeError,
                 "attribute '%U' of 'flambeau.Tensor' objects is not "
                 "writable",
                 w->name);
    return -1;
  }
  return set(w->impl, obj, value);
}

PyObject* property_repr(PyObject* self) {
  return PyUnicode_FromFormat("<attribute '%U' of 'flambeau.Tensor' objects>",
                              reinterpret_cast<Wrapper*>(self)->name);
}

PyTypeObject property_type = [] {
  PyTypeObject t = wrapper_type("flambeau._C._DispatchingProperty",
                                "_DispatchingProperty(name, impl): Tensor.<name> through "
                                "__torch_function__.");
  t.tp_descr_get = property_get;
  t.tp_descr_set = property_set;
  t.tp_repr = property_repr;
  return t;
}();

void bind_wrappers(py::module_& m, py::object) {
  for (auto [type, name] : {std::pair{&method_type, "_DispatchingMethod"},
                            std::pair{&property_type, "_DispatchingProperty"}}) {
    if (PyType_Ready(type) < 0) throw py::error_already_set();
    Py_INCREF(type);
    m.attr(name) = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(type));
  }
}

}  // namespace

FLB_BINDINGS(100, bind_wrappers);

}  // namespace flambeau::python::torch_function
