// flambeau's deterministic-algorithms switches (the Python API is in
// flambeau/_deterministic.py) and the check generated bindings run while the
// mode is on.
#include <pybind11/pybind11.h>

#include "python/binding_support.h"
#include "python/deterministic.h"
#include "python/registry.h"

namespace flambeau::python {

namespace {

// The device of the first tensor in a parsed argument (a tensor, or a list or
// tuple of them); false when it holds none.
bool device_of(PyObject* o, Device* device) {
  if (o == nullptr || o == Py_None) return false;
  if (is_tensor(o)) {
    Tensor t = py::cast<Tensor>(py::handle(o));
    if (!t || t->is_wrapped_number()) return false;
    *device = t->device();
    return true;
  }
  if (PyList_Check(o) || PyTuple_Check(o)) {
    py::sequence seq = py::reinterpret_borrow<py::sequence>(o);
    for (py::handle item : seq)
      if (device_of(item.ptr(), device)) return true;
  }
  return false;
}

void alert_if_marked(const NondeterministicMarks& marks, Device device) {
  if (marks.on(device.type))
    alert_not_deterministic(marks.op.name + "_" + device_type_name(device.type));
}

// Warnings of the core become Python UserWarnings; a warnings filter that
// turns them into errors raises here.
void warn_in_python(const std::string& message) {
  py::gil_scoped_acquire gil;
  if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) != 0) throw py::error_already_set();
}

void bind_deterministic(py::module_& m, py::object) {
  set_warning_handler(&warn_in_python);
  m.def(
      "_set_deterministic_algorithms",
      [](bool mode, bool warn_only) { set_deterministic_algorithms(mode, warn_only); },
      py::arg("mode"), py::kw_only(), py::arg("warn_only") = false);
  m.def("_get_deterministic_algorithms", &deterministic_algorithms_enabled);
  m.def("_get_deterministic_algorithms_warn_only", &deterministic_algorithms_warn_only);
  m.def("_set_deterministic_fill_uninitialized_memory", &set_fill_uninitialized_memory);
  m.def("_get_deterministic_fill_uninitialized_memory", &fill_uninitialized_memory_enabled);
  // Tests mark operators on the CPU, whose kernels the table marks nowhere.
  m.def(
      "_set_nondeterministic",
      [](const std::string& op, const std::string& device, bool nondeterministic) {
        OperatorEntry* entry = Dispatcher::find(op);
        DeviceType type = device_type_from_name(device);
        FLB_CHECK_T(ValueError, entry && type >= 0, "_set_nondeterministic: no operator '", op,
                    "' or device type '", device, "'");
        uint32_t bit = 1u << type;
        entry->nondeterministic =
            nondeterministic ? entry->nondeterministic | bit : entry->nondeterministic & ~bit;
      },
      py::arg("op"), py::arg("device"), py::arg("nondeterministic") = true,
      "Marks (or unmarks) an operator's kernels on a device type as nondeterministic.");
  m.def(
      "_alert_not_deterministic",
      [](const std::string& caller) {
        if (deterministic_algorithms_enabled()) alert_not_deterministic(caller);
      },
      "Raises (or warns, with warn_only) that caller is not deterministic, while the "
      "deterministic mode is on.");
}

}  // namespace

NondeterministicMarks::NondeterministicMarks(const char* name,
                                             std::initializer_list<const char*> table_devices)
    : op(Dispatcher::op(name)) {
  for (const char* d : table_devices) {
    DeviceType type = device_type_from_name(d);
    if (type >= 0) table |= 1u << type;
  }
}

void check_deterministic(const NondeterministicMarks& marks, const ParsedArgs& p,
                         std::initializer_list<int> tensors) {
  if ((marks.table | marks.op.nondeterministic) == 0) return;
  Device device;
  for (int i : tensors)
    if (device_of(p.raw(i), &device)) return alert_if_marked(marks, device);
}

void check_deterministic(const NondeterministicMarks& marks,
                         std::initializer_list<const Tensor*> tensors) {
  if ((marks.table | marks.op.nondeterministic) == 0) return;
  for (const Tensor* t : tensors)
    if (t && *t && !(*t)->is_wrapped_number()) return alert_if_marked(marks, (*t)->device());
}

FLB_BINDINGS(60, bind_deterministic);

}  // namespace flambeau::python
