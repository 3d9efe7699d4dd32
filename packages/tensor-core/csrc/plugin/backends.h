// Backends that plugins registered through the C ABI (flambeau/backend_abi.h):
// their hook tables by device type, the core's exported API table, and the
// bridge from a hook's status to the core's exceptions.
#pragma once
#include <flambeau/backend_abi.h>

#include "core/device.h"

namespace flambeau::plugin {

struct Backend {
  flb_backend hooks;  // zero-filled past the size the backend compiled with
  DeviceType type;
};

// The backend of a device type; nullptr when no plugin registered it.
const Backend* backend_for(DeviceType t);
// The table exported to plugins as the capsule FLB_ABI_CAPSULE.
const flb_core_api* core_api();
// Registers the meta device, a backend with no memory (plugin/meta_backend.cpp).
void register_meta_backend();
// Throws the error a hook recorded with set_error, prefixed by `what`.
void check(flb_status status, const Backend& b, const char* what);
// The device index a tensor on `d` really uses (-1 means the current device).
int32_t resolve_index(const Backend& b, Device d);

}  // namespace flambeau::plugin
