// Device type names as flambeau.device(...) resolves them: naming a type that
// no backend provides yet loads its plugin first (flambeau/backends.py).
#pragma once
#include <pybind11/pybind11.h>

#include <string>

#include "core/device.h"

namespace flambeau::python {

// The device type called `name`, or -1 when none is known even after trying
// to load a plugin for it. Raises the plugin's recorded error when it failed.
DeviceType resolve_device_type(const std::string& name);

// The flambeau.device object of d (shared between calls: devices are immutable).
pybind11::object device_object(const Device& d);

}  // namespace flambeau::python
