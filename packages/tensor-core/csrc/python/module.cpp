// flambeau._C: the core types (dtype, device, Generator, Tensor), error
// translation, and the generated operator bindings.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "core/interpreter_lock.h"
#include "cpu/cpu_capability.h"
#include "cpu/parallel.h"
#include "dispatch/dispatcher.h"
#include "python/autograd_meta.h"
#include "python/binding_support.h"
#include "python/device_bindings.h"
#include "python/hashable_methods.h"
#include "python/registry.h"
#include "python/size_type.h"
#include "python/torch_function.h"

namespace flambeau::python {

namespace {

std::vector<std::pair<int, BindFn>>& registered() {
  static std::vector<std::pair<int, BindFn>> r;
  return r;
}

struct DType {
  ScalarType type;
};

// Kernels release Python's lock through these (see core/interpreter_lock.h).
void* release_interpreter() {
  return PyGILState_Check() ? static_cast<void*>(PyEval_SaveThread()) : nullptr;
}
void reacquire_interpreter(void* token) {
  PyEval_RestoreThread(static_cast<PyThreadState*>(token));
}

// flambeau._C._LinAlgError (flambeau.linalg.LinAlgError), as PyTorch's
// torch._C._LinAlgError: underscored so that `from flambeau._C import *` leaves it
// out of the top-level namespace, which PyTorch's lacks. Kept for the process.
PyObject* g_linalg_error = nullptr;

void translate_errors(py::module_& m) {
  g_linalg_error = PyErr_NewExceptionWithDoc(
      "flambeau._C._LinAlgError",
      "Raised by linalg functions when LAPACK reports a singular or not positive-definite "
      "input (torch.linalg.LinAlgError). A RuntimeError.\n\n"
      ">>> A = flambeau.tensor([[1.0, 2.0], [2.0, 4.0]])  # singular\n"
      ">>> try:\n"
      "...     flambeau.linalg.inv(A)\n"
      "... except flambeau.linalg.LinAlgError as e:\n"
      "...     print(isinstance(e, RuntimeError))\n"
      "True\n",
      PyExc_RuntimeError, nullptr);
  if (!g_linalg_error) throw py::error_already_set();
  m.add_object("_LinAlgError", py::handle(g_linalg_error));
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const LinAlgError& e) {
      PyErr_SetString(g_linalg_error, e.what());
    } catch (const OutOfMemoryError& e) {
      // Defined in Python (flambeau._errors), imported when first raised.
      static PyObject* oom =
          py::object(py::module_::import("flambeau._errors").attr("OutOfMemoryError"))
              .release()
              .ptr();  // kept for the process
      PyErr_SetString(oom, e.what());
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const std::bad_alloc&) {
      PyErr_SetString(PyExc_MemoryError, "out of memory");
    }
  });
}

void bind_dtypes(py::module_& m) {
  py::class_<DType> cls(m, "dtype");
  cls.def_property_readonly("_scalar_type", [](const DType& d) { return d.type; })
      .def_property_readonly("is_floating_point",
                             [](const DType& d) { return is_floating_point_dtype(d.type); })
      .def_property_readonly("is_complex", [](const DType& d) { return is_complex_dtype(d.type); })
      .def_property_readonly("is_signed", [](const DType& d) { return is_signed_dtype(d.type); })
      .def_property_readonly("itemsize", [](const DType& d) { return itemsize(d.type); })
      .def("__repr__", [](const DType& d) { return std::string("flambeau.") + dtype_name(d.type); })
      .def("__reduce__", [](const DType& d) { return std::string(dtype_name(d.type)); });
  py::enum_<ScalarType>(m, "_ScalarType");
  for (int i = 0; i < kNumScalarTypes; ++i) {
    auto t = static_cast<ScalarType>(i);
    py::object o = py::cast(DType{t}, py::return_value_policy::move);
    m.attr(dtype_name(t)) = o;
    set_dtype_object(t, o.release().ptr());  // kept alive for the process
  }
}

// A device index given as a Python int: non-negative and within int16, as
// Device stores it (never silently truncated).
int16_t checked_device_index(const py::object& o) {
  FLB_CHECK_T(TypeError, py::isinstance<py::int_>(o) && !py::isinstance<py::bool_>(o),
              "device(): argument 'index' must be int, not ",
              py::str(py::type::handle_of(o).attr("__name__")).cast<std::string>());
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o.ptr(), &overflow);
  FLB_CHECK(overflow >= 0 && (overflow > 0 || v >= 0), "Device index must not be negative, got ",
            py::str(o).cast<std::string>());
  FLB_CHECK(overflow == 0 && v <= kMaxDeviceIndex, "Device index ", py::str(o).cast<std::string>(),
            " is out of range (at most ", kMaxDeviceIndex, ")");
  return static_cast<int16_t>(v);
}

void bind_device(py::module_& m) {
  py::class_<Device>(m, "device")
      .def(py::init([](const py::object& spec, const py::object& index) {
             if (is_device(spec.ptr())) return spec.cast<Device>();
             if (py::isinstance<py::int_>(spec) && !py::isinstance<py::bool_>(spec))
               return Device{kCUDA, checked_device_index(spec)};
             FLB_CHECK_T(TypeError, py::isinstance<py::str>(spec),
                         "device(): argument 'type' must be str, int or device, not ",
                         py::str(py::type::handle_of(spec).attr("__name__")).cast<std::string>());
             std::string s = spec.cast<std::string>();
             Device d;
             auto colon = s.find(':');
             std::string type = s.substr(0, colon);
             d.type = resolve_device_type(type);
             FLB_CHECK(d.type >= 0,
                       "Expected one of cpu, cuda, or a registered backend device "
                       "type at start of device string: ",
                       s);
             if (colon != std::string::npos) {
               FLB_CHECK(index.is_none(),
                         "device(): type (string) must not include an index "
                         "because index was passed explicitly: ",
                         s);
               std::string idx = s.substr(colon + 1);
               FLB_CHECK(!idx.empty() && std::all_of(idx.begin(), idx.end(), ::isdigit),
                         "Invalid device string: '", s, "'");
               // At most 5 digits fit an int16 index; longer strings cannot parse.
               FLB_CHECK(idx.size() <= 5 && std::stol(idx) <= kMaxDeviceIndex,
                         "Could not parse device index '", idx, "' in device string '", s,
                         "' (device indices are at most ", kMaxDeviceIndex, ")");
               d.index = static_cast<int16_t>(std::stol(idx));
             } else if (!index.is_none()) {
               d.index = checked_device_index(index);
             }
             return d;
           }),
           py::arg("type"), py::arg("index") = py::none())
      .def_property_readonly("type", [](const Device& d) { return device_type_name(d.type); })
      .def_property_readonly("index",
                             [](const Device& d) -> py::object {
                               return d.index < 0 ? py::none()
                                                  : py::cast(static_cast<int>(d.index));
                             })
      // Devices equal devices only: device("cpu") == "cpu" is False, as in PyTorch.
      .def("__eq__",
           [](const Device& a, const py::object& b) -> py::object {
             if (!is_device(b.ptr())) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
             return py::bool_(a == py::cast<Device>(b));
           })
      .def("__hash__", [](const Device& d) { return std::hash<int>()(d.type * 1000 + d.index); })
      .def("__str__", &Device::str)
      .def("__repr__", [](const Device& d) {
        std::string r = "device(type='" + device_type_name(d.type) + "'";
        if (d.index >= 0) r += ", index=" + std::to_string(d.index);
        return r + ")";
      });
}

void bind_generator(py::module_& m) {
  py::class_<Generator, Ref<Generator>>(m, "Generator")
      .def(py::init([](const py::object& device) {
             (void)device;
             return make_ref<Generator>();
           }),
           py::arg("device") = "cpu")
      .def_static(
          "_default_for",
          [](const Device& device) { return Ref<Generator>(&default_generator(device)); },
          "The default generator of a device (the CPU's is flambeau.default_generator).")
      .def_static("_seed_devices", &seed_device_generators,
                  "Seeds every device's default generator (flambeau.manual_seed).")
      .def("manual_seed",
           [](Ref<Generator> g, int64_t seed) {
             g->manual_seed(static_cast<uint64_t>(seed));
             return g;
           })
      .def("initial_seed", [](const Generator& g) { return g.seed(); })
      .def("seed",
           [](Generator& g) {
             uint64_t s =
                 std::random_device{}() | (static_cast<uint64_t>(std::random_device{}()) << 32);
             s &= 0x7FFFFFFFFFFFFFFFULL;
             g.manual_seed(s);
             return s;
           })
      .def("get_state", [](const Generator& g) { return py::make_tuple(g.seed(), g.offset()); })
      .def("set_state",
           [](Generator& g, const py::tuple& st) {
             g.set_state(st[0].cast<uint64_t>(), st[1].cast<uint64_t>());
           })
      .def_property_readonly("device", [](const Generator& g) { return g.device(); });
  m.attr("default_generator") = py::cast(Ref<Generator>(&default_generator()));
}

}  // namespace

BindingsRegistrar::BindingsRegistrar(int order, BindFn fn) { registered().emplace_back(order, fn); }

void run_registered_bindings(py::module_& m, py::object tensor_class) {
  auto r = registered();
  std::stable_sort(r.begin(), r.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [order, fn] : r) fn(m, tensor_class);
}

py::object make_return_type(const char* op, std::initializer_list<const char*> fields) {
  py::list names;
  for (const char* f : fields) names.append(f);
  py::object nt = py::module_::import("collections").attr("namedtuple")(op, names);
  nt.attr("__module__") = "flambeau.return_types";
  // Published there too, so the type is importable and its instances pickle.
  py::module_::import("flambeau.return_types").attr(op) = nt;
  return nt;
}

py::object scalar_to_py(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool:
      return py::bool_(s.to<bool>());
    case Scalar::Kind::Int:
      return py::int_(s.to<int64_t>());
    case Scalar::Kind::Float:
      return py::float_(s.to<double>());
    default: {
      auto c = s.to<c128>();
      return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(c.real(), c.imag()));
    }
  }
}

py::object tensors_to_tuple(const std::vector<Tensor>& ts) {
  py::tuple t(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) t[i] = py::cast(ts[i]);
  return t;
}

}  // namespace flambeau::python

PYBIND11_MODULE(_C, m) {
  using namespace flambeau;
  using namespace flambeau::python;
  m.doc() = "flambeau's C++ core";
  translate_errors(m);
  g_interpreter_lock = {&release_interpreter, &reacquire_interpreter};
  bind_dtypes(m);
  bind_device(m);
  size_type::register_bindings(m);
  bind_generator(m);

  // Instances keep user attributes in a __dict__ and autograd's state in a typed
  // slot on the TensorImpl, tied to the Python object's life (autograd_meta.h).
  py::class_<TensorImpl, Tensor> tensor(m, "Tensor", py::dynamic_attr(),
                                        py::custom_type_setup(autograd_meta::setup_tensor_type));
  set_python_types(tensor.ptr(), m.attr("dtype").ptr(), m.attr("device").ptr(),
                   m.attr("Generator").ptr());
  autograd_slot::register_bindings(m);
  torch_function::register_bindings(m);

  m.def(
      "get_default_dtype",
      [] { return py::reinterpret_borrow<py::object>(dtype_object(default_dtype())); },
      "The dtype factory functions give floating-point tensors when given none.\n\n"
      ">>> flambeau.get_default_dtype()\n"
      "flambeau.float32\n"
      ">>> flambeau.tensor([1.0]).dtype\n"
      "flambeau.float32\n");
  m.def(
      "set_default_dtype",
      [](const py::object& d) {
        set_default_dtype(dtype_from_py(d.ptr(), "set_default_dtype", "d"));
      },
      "Sets the default floating-point dtype of new tensors (float32 at start).\n\n"
      ">>> flambeau.set_default_dtype(flambeau.float64)\n"
      ">>> flambeau.tensor([1.5]).dtype\n"
      "flambeau.float64\n"
      ">>> flambeau.set_default_dtype(flambeau.float32)\n");
  m.def(
      "promote_types",
      [](const py::object& a, const py::object& b) {
        ScalarType r = promote_types(dtype_from_py(a.ptr(), "promote_types", "type1"),
                                     dtype_from_py(b.ptr(), "promote_types", "type2"));
        return py::reinterpret_borrow<py::object>(dtype_object(r));
      },
      "The smallest dtype that both type1 and type2 convert to without loss.\n\n"
      ">>> flambeau.promote_types(flambeau.int32, flambeau.float16)\n"
      "flambeau.float16\n"
      ">>> flambeau.promote_types(flambeau.uint8, flambeau.int8)\n"
      "flambeau.int16\n");
  m.def(
      "can_cast",
      [](const py::object& a, const py::object& b) {
        return can_cast(dtype_from_py(a.ptr(), "can_cast", "from_"),
                        dtype_from_py(b.ptr(), "can_cast", "to"));
      },
      "Whether dtype from_ may be cast to dtype to under PyTorch's casting rules.\n\n"
      ">>> flambeau.can_cast(flambeau.int32, flambeau.float64)\n"
      "True\n"
      ">>> flambeau.can_cast(flambeau.float64, flambeau.int32)\n"
      "False\n");
  m.def(
      "_cpu_capability", [] { return cpu::cpu_capability_name(cpu::cpu_capability()); },
      "The instruction set the core's vector loops run with (see backends.cpu).");
  m.def("get_num_threads", &get_num_threads,
        "The number of threads of the intra-op thread pool.\n\n"
        ">>> flambeau.get_num_threads() >= 1\n"
        "True\n");
  m.def("set_num_threads", &set_num_threads,
        "Sets the number of threads of the intra-op thread pool.\n\n"
        ">>> n = flambeau.get_num_threads()\n"
        ">>> flambeau.set_num_threads(1)\n"
        ">>> flambeau.get_num_threads()\n"
        "1\n"
        ">>> flambeau.set_num_threads(n)\n");
  m.def("is_grad_enabled", &grad_enabled,
        "Whether gradient recording is on in this thread (see no_grad).\n\n"
        ">>> flambeau.is_grad_enabled()\n"
        "True\n"
        ">>> with flambeau.no_grad():\n"
        "...     print(flambeau.is_grad_enabled())\n"
        "False\n");
  m.def("_set_grad_enabled", &set_grad_enabled);
  m.def("_set_inference_mode", &set_inference_mode);
  m.def("_is_inference_mode_enabled", &inference_mode_enabled);
  // autograd.graph.increment_version: an in-place write autograd did not see.
  m.def("_increment_version", [](const Tensor& t) {
    if (!t->is_inference()) t->storage()->bump_version();
  });
  m.def("ops_table", [] {
    py::list out;
    py::object loads = py::module_::import("json").attr("loads");
    for (const OpInfo& op : op_table()) {
      py::dict d;
      d["name"] = op.name;
      d["schema"] = op.schema;
      d["category"] = op.category;
      d["doc"] = op.doc;
      d["variants"] = py::str(op.variants).attr("split")(",");
      d["dunders"] = py::str(op.dunders).attr("split")();
      d["example"] = op.example;
      py::dict parsed = loads(op.parsed);
      d["overload"] = parsed["overload"];
      d["n_outputs"] = parsed["n_outputs"];
      d["params"] = parsed["params"];
      // The table's nondeterministic device types, plus those plugins declared.
      auto nondeterministic = parsed["nondeterministic"].cast<py::list>();
      if (const OperatorEntry* e = Dispatcher::find(op.name))
        for (DeviceType t = 0; t < kMaxDeviceTypes; ++t)
          if (((e->nondeterministic >> t) & 1u) && !nondeterministic.contains(device_type_name(t)))
            nondeterministic.append(device_type_name(t));
      d["nondeterministic"] = nondeterministic;
      d["nondeterministic_if"] = parsed["nondeterministic_if"];
      d["autocast"] = parsed["autocast"];
      d["view"] = parsed["view"];
      out.append(d);
    }
    return out;
  });
  m.def(
      "_allocator_stats",
      [](const std::string& device) {
        AllocatorStats s = allocator_for(device_type_from_name(device))->stats();
        py::dict d;
        d["allocated_bytes"] = s.allocated;
        d["peak_bytes"] = s.peak;
        d["allocations"] = s.allocations;
        return d;
      },
      py::arg("device") = "cpu",
      "Statistics of a device's allocator (bytes in use, peak, live blocks).");
  m.def("_operators_with_kernel", [](const std::string& device) {
    return Dispatcher::operators_with_kernel(device_type_from_name(device));
  });

  register_generated_ops(m, tensor);
  run_registered_bindings(m, tensor);
  make_methods_hashable(tensor);  // after every binding: pybind11 chains overloads by type
}
