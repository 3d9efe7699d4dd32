#include "python/autograd_native.h"

#include <string>

#include "dispatch/dispatcher.h"
#include "python/autograd_saved.h"
#include "python/registry.h"

namespace flambeau::python::autograd_native {

namespace {

using autograd_record::ArgMeta;
using autograd_record::Plan;
using autograd_record::SavedData;

std::vector<Formula>& formulas() {
  static auto* v = new std::vector<Formula>();  // leaked: outlives interpreter teardown
  return *v;
}

py::object& fit_gradient() {
  static auto* f = new py::object();
  return *f;
}

// The Python object that stands for a native formula: callable as fn(grad, args).
struct NativeFormula {
  PyObject_HEAD const Formula* formula;
};

PyTypeObject* native_type = nullptr;

bool requires_grad(PyObject* v) {  // a tensor, or the package's TensorMeta
  if (v == Py_None) return false;
  if (is_tensor(v)) return py::handle(v).cast<Tensor>()->requires_grad();
  if (PyNumber_Check(v) || PyUnicode_Check(v)) return false;
  py::object flag = py::reinterpret_steal<py::object>(PyObject_GetAttrString(v, "requires_grad"));
  if (!flag) {
    PyErr_Clear();
    return false;
  }
  return PyObject_IsTrue(flag.ptr()) == 1;
}

// fn(grad, args) -> {parameter: gradient}: the calling convention of the package's
// Python formulas (args maps parameter names to the call's values).
PyObject* native_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  PyObject *grad = nullptr, *bound = nullptr;
  static const char* kw[] = {"grad", "args", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!", const_cast<char**>(kw), &grad, &PyDict_Type,
                                   &bound))
    return nullptr;
  try {
    const Formula& f = *reinterpret_cast<NativeFormula*>(self)->formula;
    Call c;
    py::tuple grads = PyTuple_Check(grad) ? py::reinterpret_borrow<py::tuple>(grad)
                                          : py::make_tuple(py::handle(grad));
    c.grads = &PyTuple_GET_ITEM(grads.ptr(), 0);
    c.n_grads = PyTuple_GET_SIZE(grads.ptr());
    for (size_t k = 0; k < f.params.size(); ++k) {
      PyObject* v = PyDict_GetItemString(bound, f.params[k]);  // borrowed
      c.args[k] = v ? v : Py_None;
      if (requires_grad(c.args[k])) c.wanted |= 1u << k;
    }
    f.fn(c);
    py::dict out;
    for (size_t k = 0; k < f.params.size(); ++k)
      if (c.out[k]) out[f.params[k]] = c.out[k];
    return out.release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

PyObject* native_repr(PyObject* self) {
  return PyUnicode_FromFormat("<native formula of %s>",
                              reinterpret_cast<NativeFormula*>(self)->formula->name);
}

PyTypeObject* make_native_type() {
  static PyType_Slot slots[] = {
      {Py_tp_call, reinterpret_cast<void*>(native_call)},
      {Py_tp_repr, reinterpret_cast<void*>(native_repr)},
      {Py_tp_doc, const_cast<char*>("A derivative formula compiled in C++: fn(grad, args) -> "
                                    "{parameter: gradient}.")},
      {0, nullptr},
  };
  static PyType_Spec spec = {"flambeau._C._NativeFormula", sizeof(NativeFormula), 0,
                             Py_TPFLAGS_DEFAULT, slots};
  return reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&spec));
}

// g, or fit_gradient(g, input) when g's dtype or shape is not the input's.
py::object fit(py::object g, const SavedData& d, int i) {
  if (!is_tensor(g.ptr())) return py::none();
  Tensor t = g.cast<Tensor>();
  if (const ArgMeta* m = d.dropped_meta(i)) {
    if (t->dtype() == m->dtype && t->sizes() == IntList(m->sizes)) return g;
    return fit_gradient()(g, autograd_record::meta_object(*m));
  }
  Tensor x = py::handle(d.args[i]).cast<Tensor>();
  if (t->dtype() == x->dtype() && t->sizes() == x->sizes()) return g;
  return fit_gradient()(g, py::handle(d.args[i]));
}

void register_bindings(py::module_& m, py::object /*tensor_class*/) {
  native_type = make_native_type();
  if (!native_type) throw py::error_already_set();
  m.add_object("_NativeFormula",
               py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(native_type)));
  m.def(
      "_autograd_native_formula",
      [](const std::string& name) {
        for (const Formula& f : formulas()) {
          if (name != f.name) continue;
          auto* o = PyObject_New(NativeFormula, native_type);
          if (!o) throw py::error_already_set();
          o->formula = &f;
          return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(o));
        }
        throw py::key_error("no native derivative formula for " + name);
      },
      py::arg("name"), "The derivative formula of operator `name` compiled in the core.");
  m.def(
      "_autograd_native_formulas",
      [] {
        py::list names;
        for (const Formula& f : formulas()) names.append(f.name);
        return names;
      },
      "The operators whose derivative formula is compiled in the core.");
}

FLB_BINDINGS(61, register_bindings);

}  // namespace

FormulaRegistrar::FormulaRegistrar(Formula f) { formulas().push_back(std::move(f)); }

const Formula& formula_of(py::handle native) {
  if (!native_type || Py_TYPE(native.ptr()) != native_type)
    throw py::type_error("expected a native formula (flambeau._C._autograd_native_formula)");
  return *reinterpret_cast<NativeFormula*>(native.ptr())->formula;
}

void set_fit_gradient(py::object fn) { fit_gradient() = std::move(fn); }

py::object apply(const Plan& plan, const SavedData& d, PyObject* const* grads, Py_ssize_t n_grads,
                 PyObject* next_functions) {
  const Formula& f = formula_of(plan.native);
  int edge_of[kMaxParams];  // argument i -> its edge (tensor arguments have one each)
  int n_edges = 0;
  for (int i = 0; i < plan.n_params; ++i) edge_of[i] = d.tensors >> i & 1 ? n_edges++ : -1;
  Call c;
  c.grads = grads;
  c.n_grads = n_grads;
  for (size_t k = 0; k < f.params.size(); ++k) {
    const int i = plan.native_params[k];
    c.args[k] = d.args[i];
    const int e = edge_of[i];
    if (e >= 0 && e < PyTuple_GET_SIZE(next_functions) &&
        PyTuple_GET_ITEM(PyTuple_GET_ITEM(next_functions, e), 0) != Py_None)
      c.wanted |= 1u << k;
  }
  f.fn(c);
  py::tuple result(n_edges);
  for (int e = 0; e < n_edges; ++e) PyTuple_SET_ITEM(result.ptr(), e, py::none().release().ptr());
  for (size_t k = 0; k < f.params.size(); ++k) {
    const int i = plan.native_params[k];
    if (!c.out[k] || !c.wants(static_cast<int>(k))) continue;
    py::object g = fit(std::move(c.out[k]), d, i);
    PyObject* old = PyTuple_GET_ITEM(result.ptr(), edge_of[i]);
    PyTuple_SET_ITEM(result.ptr(), edge_of[i], g.release().ptr());
    Py_DECREF(old);
  }
  return std::move(result);
}

}  // namespace flambeau::python::autograd_native
