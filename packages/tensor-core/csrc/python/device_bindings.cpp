// The backend ABI as Python sees it: the capsule plugins import, and generic
// per-device functions (counts, memory statistics, synchronization) that
// flambeau.backends and the plugins' Python modules build on.
#include "python/device_bindings.h"

#include <flambeau/backend_abi.h>

#include "core/error.h"
#include "dispatch/dispatcher.h"
#include "plugin/backends.h"
#include "python/registry.h"

namespace flambeau::python {

// The Python device of d: devices are immutable, so one object per (type, index) for
// indices below kCachedIndices is made once and handed out again (t.device is read
// often, and a new pybind11 instance each time cost 70 ns). Kept for the process's
// life: no destructor runs after the interpreter is gone.
py::object device_object(const Device& d) {
  constexpr int kCachedIndices = 64;
  static PyObject* cache[kMaxDeviceTypes][kCachedIndices + 1] = {};
  if (d.type < 0 || d.type >= kMaxDeviceTypes || d.index < -1 || d.index >= kCachedIndices)
    return py::cast(d);
  PyObject*& slot = cache[d.type][d.index + 1];
  if (!slot) slot = py::cast(d).release().ptr();
  return py::reinterpret_borrow<py::object>(slot);
}

namespace {

const plugin::Backend& backend_named(const std::string& type) {
  const plugin::Backend* b = plugin::backend_for(resolve_device_type(type));
  FLB_CHECK(b != nullptr, "no backend for device type '", type, "' is loaded");
  return *b;
}

int32_t index_or_current(const plugin::Backend& b, int index) {
  FLB_CHECK(index >= -1 && index <= kMaxDeviceIndex, "Device index ", index,
            " is out of range (at most ", kMaxDeviceIndex, ")");
  return plugin::resolve_index(b, Device{b.type, static_cast<int16_t>(index)});
}

void bind(py::module_& m, py::object) {
  plugin::register_meta_backend();  // after every CPU kernel registered itself
  m.attr("_backend_abi") =
      py::capsule(static_cast<const void*>(plugin::core_api()), FLB_ABI_CAPSULE);
  m.attr("_backend_abi_version") = py::make_tuple(FLB_ABI_MAJOR, FLB_ABI_MINOR);
  m.def("_has_backend", [](const std::string& type) {
    return plugin::backend_for(device_type_from_name(type)) != nullptr;
  });
  m.def("_backend_version", [](const std::string& type) -> py::object {
    const plugin::Backend* b = plugin::backend_for(device_type_from_name(type));
    if (!b) return py::none();
    return py::str(b->hooks.version ? b->hooks.version : "");
  });
  m.def("_device_count", [](const std::string& type) {
    const plugin::Backend* b = plugin::backend_for(device_type_from_name(type));
    return b ? b->hooks.device_count(b->hooks.self) : 0;
  });
  m.def("_current_device",
        [](const std::string& type) { return index_or_current(backend_named(type), -1); });
  m.def("_set_device", [](const std::string& type, int index) {
    const plugin::Backend& b = backend_named(type);
    FLB_CHECK(b.hooks.set_device != nullptr, type, ": the backend has no set_device hook");
    plugin::check(b.hooks.set_device(b.hooks.self, index), b, "set_device");
  });
  m.def("_synchronize", [](const std::string& type, int index) {
    const plugin::Backend& b = backend_named(type);
    if (!b.hooks.synchronize) return;  // a synchronous backend
    py::gil_scoped_release unlocked;
    plugin::check(b.hooks.synchronize(b.hooks.self, index_or_current(b, index)), b, "synchronize");
  });
  m.def("_memory_stats", [](const std::string& type, int index) {
    const plugin::Backend& b = backend_named(type);
    FLB_CHECK(b.hooks.allocator_stats != nullptr, type,
              ": the backend keeps no allocator statistics");
    flb_allocator_stats s{};
    s.struct_size = sizeof(s);
    plugin::check(b.hooks.allocator_stats(b.hooks.self, index_or_current(b, index), &s), b,
                  "allocator_stats");
    py::dict d;
    d["allocated_bytes"] = s.allocated_bytes;
    d["reserved_bytes"] = s.reserved_bytes;
    d["peak_allocated_bytes"] = s.peak_allocated_bytes;
    d["peak_reserved_bytes"] = s.peak_reserved_bytes;
    d["allocations"] = s.allocations;
    return d;
  });
  m.def("_reset_peak_memory_stats", [](const std::string& type, int index) {
    const plugin::Backend& b = backend_named(type);
    if (b.hooks.reset_peak_stats)
      plugin::check(b.hooks.reset_peak_stats(b.hooks.self, index_or_current(b, index)), b,
                    "reset_peak_stats");
  });
  m.def("_empty_cache", [](const std::string& type, int index) {
    const plugin::Backend& b = backend_named(type);
    if (b.hooks.empty_cache)
      plugin::check(b.hooks.empty_cache(b.hooks.self, index_or_current(b, index)), b,
                    "empty_cache");
  });
}

FLB_BINDINGS(50, bind);

}  // namespace

DeviceType resolve_device_type(const std::string& name) {
  DeviceType t = device_type_from_name(name);
  if (t == kCPU || plugin::backend_for(t) != nullptr) return t;
  // Loads the plugin providing `name` if one is installed (or raises its
  // recorded failure); returns quietly otherwise.
  py::module_::import("flambeau.backends").attr("_on_device_named")(name);
  return device_type_from_name(name);
}

}  // namespace flambeau::python
