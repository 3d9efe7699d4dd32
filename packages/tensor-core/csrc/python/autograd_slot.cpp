#include "python/autograd_slot.h"

#include "dispatch/dispatcher.h"

namespace flambeau::python::autograd_slot {

bool g_installed = false;
thread_local bool t_inside_handler = false;

namespace {
py::object& handler() {
  static py::object* h = new py::object();  // leaked: outlives interpreter teardown
  return *h;
}

bool requires_grad(PyObject* o) {
  return is_tensor(o) && py::handle(o).cast<Tensor>()->requires_grad();
}
}  // namespace

bool wants_slow(const ParsedArgs& p) {
  if (!grad_enabled() || t_inside_handler) return false;
  const auto& params = p.sig->params();
  for (size_t i = 0; i < params.size(); ++i) {
    PyObject* o = p.slots[i];
    if (params[i].type == ParamType::Tensor && requires_grad(o)) return true;
    if (params[i].type == ParamType::TensorList && o != Py_None &&
        static_cast<int>(i) != p.varargs_index) {
      for (py::handle h : py::reinterpret_borrow<py::sequence>(o))
        if (requires_grad(h.ptr())) return true;
    }
  }
  return false;
}

py::object call(const char* name, py::handle self, const py::tuple& args, const py::dict& kwargs) {
  py::tuple full = args;
  if (self) {
    full = py::tuple(args.size() + 1);
    full[0] = self;
    for (size_t i = 0; i < args.size(); ++i) full[i + 1] = args[i];
  }
  // The handler runs the operator itself; inside it, calls go straight to kernels.
  bool was = t_inside_handler;
  t_inside_handler = true;
  try {
    py::object r = handler()(name, full, kwargs);
    t_inside_handler = was;
    return r;
  } catch (...) {
    t_inside_handler = was;
    throw;
  }
}

void install(py::object h) {
  handler() = h;
  g_installed = !h.is_none();
}

// Importing flambeau.autograd installs its handler; without the package the
// import fails quietly here and asking for a gradient names the package.
void load_autograd_package() {
  py::gil_scoped_acquire gil;  // set_requires_grad may run where the lock is released
  try {
    py::module_::import("flambeau.autograd");
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_ImportError)) throw;
  }
}

void register_bindings(py::module_& m) {
  TensorImpl::first_requires_grad_hook = &load_autograd_package;
  m.def("_set_autograd_handler", &install, py::arg("handler").none(true),
        "Install the autograd key's handler: handler(op_name, args, kwargs) -> result. "
        "None removes it.");
  m.def("_autograd_handler_installed", [] { return g_installed; });
  m.def(
      "_autograd_record_call",
      [](py::handle fn, py::args args, py::kwargs kwargs) {
        // Inside the handler, calls run their kernels unrecorded; a composite's pieces
        // are calls that must be recorded: this one goes through the binding's slot
        // (recorded in C++ when its overload has a plan, else by the handler again).
        bool was = t_inside_handler;
        t_inside_handler = false;
        try {
          py::object r = fn(*args, **kwargs);
          t_inside_handler = was;
          return r;
        } catch (...) {
          t_inside_handler = was;
          throw;
        }
      },
      py::arg("fn"),
      "fn(*args, **kwargs) recorded as a call from outside the autograd handler would be.");
}

}  // namespace flambeau::python::autograd_slot
