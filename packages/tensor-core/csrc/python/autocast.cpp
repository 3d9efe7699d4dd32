// Autocast: the argument casts of marked operators and Python composites, the
// weight cast cache, and the state functions of flambeau's top level
// (is_autocast_enabled, set_autocast_dtype, ...). The context manager is
// flambeau/amp/autocast_mode.py.
#include "python/autocast.h"

#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dispatch/dispatcher.h"
#include "python/binding_support.h"
#include "python/device_bindings.h"
#include "python/registry.h"

namespace flambeau::python {

namespace {

using autocast::Policy;

// ---- which tensors, which dtype -----------------------------------------------------------

// The tensor objects of one argument: a tensor, or the tensors of a list or tuple.
void collect_tensors(PyObject* o, std::vector<PyObject*>* out) {
  if (is_tensor(o)) {
    out->push_back(o);
  } else if (PyList_Check(o) || PyTuple_Check(o)) {
    py::sequence seq = py::reinterpret_borrow<py::sequence>(o);
    for (py::handle item : seq)
      if (is_tensor(item.ptr())) out->push_back(item.ptr());
  }
}

Tensor as_tensor(PyObject* o) { return py::cast<Tensor>(py::handle(o)); }

// The call's device type: that of its first tensor that is not a wrapped Python number.
bool call_device(const std::vector<PyObject*>& tensors, DeviceType* type) {
  for (PyObject* o : tensors) {
    Tensor t = as_tensor(o);
    if (t && !t->is_wrapped_number()) {
      *type = t->device().type;
      return true;
    }
  }
  return false;
}

// Autocast touches floating-point tensors of the device type below float64.
bool eligible(const Tensor& t, DeviceType device) {
  if (!t || t->is_wrapped_number() || t->device().type != device) return false;
  const ScalarType s = t->dtype();
  return s == ScalarType::Float16 || s == ScalarType::BFloat16 || s == ScalarType::Float32;
}

ScalarType target_dtype(Policy policy, DeviceType device, const std::vector<PyObject*>& tensors) {
  if (policy == Policy::Fp32) return ScalarType::Float32;
  ScalarType to = autocast::dtype(device);
  if (policy == Policy::Promote) {
    for (PyObject* o : tensors) {
      Tensor t = as_tensor(o);
      if (eligible(t, device)) to = promote_types(to, t->dtype());
    }
  }
  return to;
}

// ---- the weight cache ------------------------------------------------------------------------
// Lower-precision casts of float32 leaves that require grad (a model's weights)
// are kept until the outermost autocast region of the thread exits, so a weight
// used at every step of a loop is cast once. Unlike PyTorch's cache, an entry is
// keyed by the target dtype too, is not reused after the weight changed in place
// (its storage version moved), and is only made while grad mode is on (a cast
// made under no_grad has no graph and would cut later gradients off).

struct CachedCast {
  py::object source;  // keeps the TensorImpl, and so the key, alive
  py::object cast;
  uint64_t version;
};
struct CacheKey {
  const TensorImpl* impl;
  ScalarType dtype;
  bool operator==(const CacheKey& o) const { return impl == o.impl && dtype == o.dtype; }
};
struct CacheKeyHash {
  size_t operator()(const CacheKey& k) const {
    return std::hash<const void*>()(k.impl) ^ static_cast<size_t>(k.dtype);
  }
};
using Cache = std::unordered_map<CacheKey, CachedCast, CacheKeyHash>;

// Never destroyed: a thread's exit runs without the interpreter lock, when
// Python objects must not be released. clear_autocast_cache empties it.
thread_local Cache* t_cache = nullptr;

void clear_cache() {
  if (t_cache) t_cache->clear();
}

py::object cast_tensor(py::handle obj, const Tensor& t, ScalarType to, DeviceType device) {
  py::handle dtype(dtype_object(to));
  const bool cacheable = to == autocast::dtype(device) && t->dtype() == ScalarType::Float32 &&
                         t->requires_grad() && autocast::cache_enabled() && grad_enabled() &&
                         obj.attr("grad_fn").is_none();
  if (!cacheable) return obj.attr("to")(dtype);
  if (!t_cache) t_cache = new Cache();
  const CacheKey key{t.get(), to};
  const uint64_t version = t->storage()->version();
  auto it = t_cache->find(key);
  if (it != t_cache->end() && it->second.version == version) return it->second.cast;
  py::object cast = obj.attr("to")(dtype);
  (*t_cache)[key] = CachedCast{py::reinterpret_borrow<py::object>(obj), cast, version};
  return cast;
}

// ---- rewriting a call ------------------------------------------------------------------------

// Original tensor object -> its cast, for the arguments that need one.
using Casts = std::vector<std::pair<PyObject*, py::object>>;

Casts cast_all(Policy policy, DeviceType device, const std::vector<PyObject*>& tensors) {
  const ScalarType to = target_dtype(policy, device, tensors);
  Casts casts;
  for (PyObject* o : tensors) {
    bool seen = false;
    for (const auto& c : casts) seen = seen || c.first == o;
    Tensor t = as_tensor(o);
    if (!seen && eligible(t, device) && t->dtype() != to)
      casts.emplace_back(o, cast_tensor(py::handle(o), t, to, device));
  }
  return casts;
}

PyObject* lookup(const Casts& casts, PyObject* o) {
  for (const auto& c : casts)
    if (c.first == o) return c.second.ptr();
  return nullptr;
}

// `o` with its cast tensors substituted (one level into lists and tuples).
py::object substitute(const Casts& casts, py::handle o) {
  if (PyObject* cast = lookup(casts, o.ptr())) return py::reinterpret_borrow<py::object>(cast);
  const bool list = PyList_Check(o.ptr());
  if (!list && !PyTuple_Check(o.ptr())) return py::reinterpret_borrow<py::object>(o);
  py::sequence seq = py::reinterpret_borrow<py::sequence>(o);
  bool any = false;
  for (py::handle item : seq) any = any || lookup(casts, item.ptr()) != nullptr;
  if (!any) return py::reinterpret_borrow<py::object>(o);
  py::list items;
  for (py::handle item : seq) {
    PyObject* cast = lookup(casts, item.ptr());
    items.append(cast ? py::handle(cast) : item);
  }
  return list ? py::object(items) : py::object(py::tuple(items));
}

py::tuple substitute_tuple(const Casts& casts, const py::tuple& args) {
  py::tuple out(args.size());
  for (size_t i = 0; i < args.size(); ++i) out[i] = substitute(casts, args[i]);
  return out;
}

py::dict substitute_dict(const Casts& casts, const py::dict& kwargs) {
  py::dict out;
  for (auto item : kwargs) out[item.first] = substitute(casts, item.second);
  return out;
}

Policy policy_from_name(const std::string& name) {
  if (name == "lower_precision_fp") return Policy::LowerPrecisionFp;
  if (name == "fp32") return Policy::Fp32;
  if (name == "promote") return Policy::Promote;
  fail<ValueError>("autocast policy must be 'lower_precision_fp', 'fp32' or 'promote', not '", name,
                   "'");
}

// Autocast off for one device type while a composite runs, as PyTorch runs an
// autocast kernel's body below the autocast key.
struct DisabledFor {
  explicit DisabledFor(DeviceType d) : device(d) { autocast::set_enabled(d, false); }
  ~DisabledFor() { autocast::set_enabled(device, true); }
  DeviceType device;
};

// A Python composite's call under its policy: fn(*args, **kwargs) on the cast
// arguments, with autocast off for their device type inside.
py::object autocast_call(const std::string& policy_name, const py::function& fn,
                         const py::tuple& args, const py::dict& kwargs) {
  const Policy policy = policy_from_name(policy_name);
  // As for the table's operators, a call writing into out= is not cast.
  if (kwargs.contains("out") && !kwargs["out"].is_none()) return fn(*args, **kwargs);
  std::vector<PyObject*> tensors;
  for (py::handle a : args) collect_tensors(a.ptr(), &tensors);
  for (auto item : kwargs) collect_tensors(item.second.ptr(), &tensors);
  DeviceType device;
  if (!autocast::any_enabled() || !call_device(tensors, &device) || !autocast::enabled(device))
    return fn(*args, **kwargs);
  const Casts casts = cast_all(policy, device, tensors);
  py::tuple new_args = casts.empty() ? args : substitute_tuple(casts, args);
  py::dict new_kwargs = casts.empty() ? kwargs : substitute_dict(casts, kwargs);
  DisabledFor off(device);
  return fn(*new_args, **new_kwargs);
}

// ---- the state functions ---------------------------------------------------------------------

// A device type named by a string ("cpu", "cuda", "cuda:0", a plugin's type).
DeviceType device_type_arg(py::handle o, const char* fn) {
  FLB_CHECK_T(TypeError, py::isinstance<py::str>(o), fn,
              "(): argument 'device_type' (position 1) must be str, not ",
              Py_TYPE(o.ptr())->tp_name);
  const std::string s = o.cast<std::string>();
  const DeviceType d = resolve_device_type(s.substr(0, s.find(':')));
  FLB_CHECK(d >= 0,
            "Expected one of cpu, cuda, or a registered backend device type at start of "
            "device string: ",
            s);
  return d;
}

bool bool_arg(py::handle o, const char* fn, const char* name, int position) {
  FLB_CHECK_T(TypeError, PyBool_Check(o.ptr()), fn, "(): argument '", name, "' (position ",
              position, ") must be bool, not ", Py_TYPE(o.ptr())->tp_name);
  return o.ptr() == Py_True;
}

ScalarType dtype_arg(py::handle o, const char* fn, int position) {
  FLB_CHECK_T(TypeError, is_dtype(o.ptr()), fn, "(): argument 'dtype' (position ", position,
              ") must be flambeau.dtype, not ", Py_TYPE(o.ptr())->tp_name);
  return dtype_from_py(o.ptr(), fn, "dtype");
}

py::object dtype_result(ScalarType t) {
  return py::reinterpret_borrow<py::object>(dtype_object(t));
}

void deprecated(const std::string& old_call, const std::string& new_call) {
  const std::string message =
      "flambeau." + old_call + " is deprecated. Please use flambeau." + new_call + " instead.";
  if (PyErr_WarnEx(PyExc_DeprecationWarning, message.c_str(), 1) != 0)
    throw py::error_already_set();
}

void bind_autocast(py::module_& m, py::object) {
  m.def(
      "is_autocast_enabled",
      [](py::object device_type) {
        if (device_type.is_none()) return autocast::enabled(kCUDA);  // PyTorch's legacy form
        return autocast::enabled(device_type_arg(device_type, "is_autocast_enabled"));
      },
      py::arg("device_type") = py::none(),
      "is_autocast_enabled(device_type) -> bool\n\nWhether autocast is on for the device type "
      "in this thread (without an argument: for 'cuda').\n\n"
      ">>> flambeau.is_autocast_enabled(\"cpu\")\n"
      "False\n"
      ">>> with flambeau.autocast(\"cpu\"):\n"
      "...     print(flambeau.is_autocast_enabled(\"cpu\"))\n"
      "True\n");
  m.def(
      "set_autocast_enabled",
      [](py::args args) {
        FLB_CHECK_T(TypeError, args.size() == 1 || args.size() == 2,
                    "set_autocast_enabled() takes (device_type, enabled) or (enabled)");
        if (args.size() == 1)
          return autocast::set_enabled(kCUDA,
                                       bool_arg(args[0], "set_autocast_enabled", "enabled", 1));
        DeviceType d = device_type_arg(args[0], "set_autocast_enabled");
        autocast::set_enabled(d, bool_arg(args[1], "set_autocast_enabled", "enabled", 2));
      },
      "set_autocast_enabled(device_type, enabled)\n\nTurns autocast on or off for the device "
      "type in this thread (flambeau.autocast is the usual way).\n\n"
      ">>> flambeau.set_autocast_enabled(\"cpu\", True)\n"
      ">>> flambeau.is_autocast_enabled(\"cpu\")\n"
      "True\n"
      ">>> flambeau.set_autocast_enabled(\"cpu\", False)\n");
  m.def(
      "get_autocast_dtype",
      [](py::object device_type) {
        return dtype_result(autocast::dtype(device_type_arg(device_type, "get_autocast_dtype")));
      },
      py::arg("device_type"),
      "get_autocast_dtype(device_type) -> dtype\n\nThe dtype lower-precision operators run in "
      "under autocast on the device type (default bfloat16 on 'cpu', float16 elsewhere).\n\n"
      ">>> flambeau.get_autocast_dtype(\"cpu\")\n"
      "flambeau.bfloat16\n"
      ">>> with flambeau.autocast(\"cpu\", dtype=flambeau.float16):\n"
      "...     print(flambeau.get_autocast_dtype(\"cpu\"))\n"
      "flambeau.float16\n");
  m.def(
      "set_autocast_dtype",
      [](py::object device_type, py::object dtype) {
        DeviceType d = device_type_arg(device_type, "set_autocast_dtype");
        autocast::set_dtype(d, dtype_arg(dtype, "set_autocast_dtype", 2));
      },
      py::arg("device_type"), py::arg("dtype"),
      "set_autocast_dtype(device_type, dtype)\n\nSets the device type's autocast dtype in this "
      "thread.\n\n"
      ">>> flambeau.set_autocast_dtype(\"cpu\", flambeau.float16)\n"
      ">>> flambeau.get_autocast_dtype(\"cpu\")\n"
      "flambeau.float16\n"
      ">>> flambeau.set_autocast_dtype(\"cpu\", flambeau.bfloat16)\n");
  m.def(
      "is_autocast_cache_enabled", [] { return autocast::cache_enabled(); },
      "Whether autocast keeps the lower-precision casts of weights within a region.\n\n"
      ">>> flambeau.is_autocast_cache_enabled()\n"
      "True\n");
  m.def(
      "set_autocast_cache_enabled",
      [](py::object enabled) {
        autocast::set_cache_enabled(bool_arg(enabled, "set_autocast_cache_enabled", "enabled", 1));
      },
      py::arg("enabled"),
      "Turns autocast's weight cast cache on or off in this thread.\n\n"
      ">>> flambeau.set_autocast_cache_enabled(False)\n"
      ">>> flambeau.is_autocast_cache_enabled()\n"
      "False\n"
      ">>> flambeau.set_autocast_cache_enabled(True)\n");
  m.def("clear_autocast_cache", &clear_cache,
        "Drops the weight casts autocast keeps.\n\n"
        ">>> with flambeau.autocast(\"cpu\"):\n"
        "...     y = flambeau.mm(flambeau.ones(2, 2), flambeau.ones(2, 2))\n"
        ">>> y.dtype\n"
        "flambeau.bfloat16\n"
        ">>> flambeau.clear_autocast_cache()\n");
  m.def("autocast_increment_nesting", &autocast::increment_nesting,
        "Enters an autocast region: returns the new nesting depth of this thread.\n\n"
        ">>> flambeau.autocast_increment_nesting()\n"
        "1\n"
        ">>> flambeau.autocast_decrement_nesting()\n"
        "0\n");
  m.def("autocast_decrement_nesting", &autocast::decrement_nesting,
        "Leaves an autocast region: returns the new nesting depth of this thread.\n\n"
        ">>> flambeau.autocast_increment_nesting()\n"
        "1\n"
        ">>> flambeau.autocast_decrement_nesting()\n"
        "0\n");

  // The per-device spellings PyTorch keeps, deprecated there too.
  m.def(
      "is_autocast_cpu_enabled",
      [] {
        deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')");
        return autocast::enabled(kCPU);
      },
      "Deprecated: is_autocast_enabled('cpu').\n\n"
      ">>> flambeau.is_autocast_cpu_enabled()  # deprecated\n"
      "False\n");
  m.def(
      "set_autocast_cpu_enabled",
      [](py::object enabled) {
        deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)");
        autocast::set_enabled(kCPU, bool_arg(enabled, "set_autocast_cpu_enabled", "enabled", 1));
      },
      py::arg("enabled"),
      "Deprecated: set_autocast_enabled('cpu', enabled).\n\n"
      ">>> flambeau.set_autocast_cpu_enabled(True)  # deprecated\n"
      ">>> flambeau.is_autocast_enabled(\"cpu\")\n"
      "True\n"
      ">>> flambeau.set_autocast_cpu_enabled(False)\n");
  m.def(
      "get_autocast_cpu_dtype",
      [] {
        deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')");
        return dtype_result(autocast::dtype(kCPU));
      },
      "Deprecated: get_autocast_dtype('cpu').\n\n"
      ">>> flambeau.get_autocast_cpu_dtype()  # deprecated\n"
      "flambeau.bfloat16\n");
  m.def(
      "set_autocast_cpu_dtype",
      [](py::object dtype) {
        deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)");
        autocast::set_dtype(kCPU, dtype_arg(dtype, "set_autocast_cpu_dtype", 1));
      },
      py::arg("dtype"),
      "Deprecated: set_autocast_dtype('cpu', dtype).\n\n"
      ">>> flambeau.set_autocast_cpu_dtype(flambeau.float16)  # deprecated\n"
      ">>> flambeau.get_autocast_dtype(\"cpu\")\n"
      "flambeau.float16\n"
      ">>> flambeau.set_autocast_cpu_dtype(flambeau.bfloat16)\n");
  m.def(
      "get_autocast_gpu_dtype",
      [] {
        deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')");
        return dtype_result(autocast::dtype(kCUDA));
      },
      "Deprecated: get_autocast_dtype('cuda').\n\n"
      ">>> flambeau.get_autocast_gpu_dtype()  # deprecated\n"
      "flambeau.float16\n");
  m.def(
      "set_autocast_gpu_dtype",
      [](py::object dtype) {
        deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)");
        autocast::set_dtype(kCUDA, dtype_arg(dtype, "set_autocast_gpu_dtype", 1));
      },
      py::arg("dtype"),
      "Deprecated: set_autocast_dtype('cuda', dtype).\n\n"
      ">>> flambeau.set_autocast_gpu_dtype(flambeau.bfloat16)  # deprecated\n"
      ">>> flambeau.get_autocast_dtype(\"cuda\")\n"
      "flambeau.bfloat16\n"
      ">>> flambeau.set_autocast_gpu_dtype(flambeau.float16)\n");

  m.def(
      "_is_autocast_available",
      [](py::object device_type) {
        device_type_arg(device_type, "_is_autocast_available");
        return true;  // every device type flambeau knows casts through the same bindings
      },
      py::arg("device_type"));
  m.def("_autocast_any_enabled", &autocast::any_enabled,
        "Whether autocast is on for some device type in this thread (one load).");
  m.def("_autocast_call", &autocast_call, py::arg("policy"), py::arg("fn"), py::arg("args"),
        py::arg("kwargs"),
        "Calls a Python composite under an autocast policy: fn(*args, **kwargs) on the cast "
        "arguments, with autocast off for their device type inside.");
  m.def("_autocast_cached_casts", [] { return t_cache ? t_cache->size() : size_t{0}; });
}

}  // namespace

bool autocast_arguments(Policy policy, const ParsedArgs& p, py::handle* self, py::object& keep,
                        py::args& args, py::kwargs& kwargs) {
  if (policy == Policy::None) return false;
  const auto& params = p.sig->params();
  std::vector<PyObject*> tensors;
  for (size_t i = 0; i < params.size(); ++i) {
    PyObject* o = p.slots[i];
    if (o == nullptr || o == Py_None) continue;
    if (params[i].name == "out") return false;  // PyTorch's out= variants do not autocast
    if (params[i].type == ParamType::Tensor || params[i].type == ParamType::TensorList)
      collect_tensors(o, &tensors);
  }
  DeviceType device;
  if (!call_device(tensors, &device) || !autocast::enabled(device)) return false;
  const Casts casts = cast_all(policy, device, tensors);
  if (casts.empty()) return false;
  args = py::reinterpret_borrow<py::args>(substitute_tuple(casts, args));
  kwargs = py::reinterpret_borrow<py::kwargs>(substitute_dict(casts, kwargs));
  if (self != nullptr) {
    if (PyObject* cast = lookup(casts, self->ptr())) {
      keep = py::reinterpret_borrow<py::object>(cast);
      *self = keep;
    }
  }
  return true;
}

py::object autocast_operator(Policy policy, const char* dunder, py::handle self, py::handle other) {
  std::vector<PyObject*> tensors;
  collect_tensors(self.ptr(), &tensors);
  if (is_tensor(other.ptr())) tensors.push_back(other.ptr());
  DeviceType device;
  if (!call_device(tensors, &device) || !autocast::enabled(device)) return py::object();
  const Casts casts = cast_all(policy, device, tensors);
  if (casts.empty()) return py::object();
  py::object cast_self = substitute(casts, self);
  if (other.is_none()) return cast_self.attr(dunder)();  // a unary operator
  return cast_self.attr(dunder)(substitute(casts, other));
}

FLB_BINDINGS(60, bind_autocast);

}  // namespace flambeau::python
