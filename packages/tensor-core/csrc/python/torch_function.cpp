#include "python/torch_function.h"

#include <vector>

namespace flambeau::python::torch_function {

bool g_any_override = false;
thread_local int t_disabled = 0;
thread_local int t_all_disabled = 0;
thread_local int t_modes = 0;

namespace {
// Registered subclasses; never freed (the types are kept alive here), so the
// pointers stay valid for the process.
std::vector<PyTypeObject*>& registered() {
  static auto* types = new std::vector<PyTypeObject*>();
  return *types;
}

py::object& handler() {
  static auto* h = new py::object();  // leaked: outlives interpreter teardown
  return *h;
}

bool any_in_list(PyObject* o) {
  if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (overrides(items[i])) return true;
  return false;
}
}  // namespace

bool overrides(PyObject* o) {
  PyTypeObject* t = Py_TYPE(o);
  for (PyTypeObject* r : registered())
    if (t == r) return true;
  return false;
}

bool wants_slow(const ParsedArgs& p) {
  const auto& params = p.sig->params();
  for (size_t i = 0; i < params.size(); ++i) {
    PyObject* o = p.slots[i];
    if (o == nullptr || o == Py_None) continue;
    if (params[i].type == ParamType::Tensor && overrides(o)) return true;
    if (params[i].type == ParamType::TensorList && any_in_list(o)) return true;
  }
  return false;
}

bool is_tensor_like(PyObject* o) {
  if (o == Py_None || PyLong_CheckExact(o) || PyFloat_CheckExact(o) || PyBool_Check(o) ||
      PyUnicode_CheckExact(o) || is_tensor(o))
    return false;
  const int has =
      PyObject_HasAttrString(reinterpret_cast<PyObject*>(Py_TYPE(o)), "__torch_function__");
  return has == 1;
}

py::object call(const char* name, bool is_method, py::handle self, const py::tuple& args,
                const py::dict& kwargs) {
  py::tuple full = args;
  if (self) {
    full = py::tuple(args.size() + 1);
    full[0] = self;
    for (size_t i = 0; i < args.size(); ++i) full[i + 1] = args[i];
  }
  if (!handler()) throw py::type_error("flambeau: no __torch_function__ handler is installed");
  return handler()(name, is_method, full, kwargs);
}

void register_bindings(py::module_& m) {
  m.def(
      "_torch_function_register",
      [](py::type cls) {
        auto* t = reinterpret_cast<PyTypeObject*>(cls.ptr());
        for (PyTypeObject* r : registered())
          if (r == t) return;
        Py_INCREF(cls.ptr());
        registered().push_back(t);
        g_any_override = true;
      },
      py::arg("cls"),
      "Register a Tensor subclass whose __torch_function__ overrides functions called on it.");
  m.def(
      "_set_torch_function_handler", [](py::object h) { handler() = std::move(h); },
      py::arg("handler"),
      "Install handler(name, is_method, args, kwargs), called for overriding subclasses.");
  m.def(
      "_torch_function_disable", [](int delta) { return t_disabled += delta; }, py::arg("delta"),
      "Add delta to this thread's DisableTorchFunctionSubclass depth; returns the new depth.");
  m.def("_torch_function_enabled", [] { return t_disabled == 0 && t_all_disabled == 0; });
  m.def(
      "_torch_function_all_disable", [](int delta) { return t_all_disabled += delta; },
      py::arg("delta"),
      "Add delta to this thread's DisableTorchFunction depth (modes and subclasses); returns "
      "the new depth.");
  m.def(
      "_torch_function_mode_depth", [](int delta) { return t_modes += delta; }, py::arg("delta"),
      "Add delta to this thread's TorchFunctionMode stack depth; returns the new depth.");
  m.def("_is_torch_function_mode_enabled", [] { return mode_active(); });
}

}  // namespace flambeau::python::torch_function
