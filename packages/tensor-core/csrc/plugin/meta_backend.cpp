// The meta device (PyTorch's "meta"): tensors that have sizes, strides and a dtype but
// no data, for working out shapes and for building a model without its memory
// (nn.Linear(..., device="meta"), then Module.to_empty). It is a backend of the plugin
// ABI (flambeau/backend_abi.h) that the core registers itself: a block is an address
// nothing maps, copies onto it and kernels on it do nothing, and whatever needs the
// data (a copy to the host, a kernel whose result is a number read from it, such as
// nonzero's count) raises NotImplementedError. docs/design/meta-device.rst.
#include <flambeau/backend_abi.h>

#include <cstdint>

#include "dispatch/dispatcher.h"
#include "plugin/backends.h"
#include "plugin/foreign_call.h"

namespace flambeau {
DeviceType g_meta_device_type = -1;
}  // namespace flambeau

namespace flambeau::plugin {
namespace {

const flb_core_api* api() { return core_api(); }

// Where every meta block "is": non-null (a tensor's data is never null where it has
// elements), aligned, and in no mapping, so that a read that slipped through faults.
void* const kNowhere = reinterpret_cast<void*>(uintptr_t{1} << 46);

// One device with no index: tensors on it say device='meta', as in PyTorch.
int32_t device_count(void*) { return 1; }
int32_t current_device(void*) { return -1; }
flb_status set_device(void*, int32_t index) {
  if (index <= 0) return FLB_OK;
  api()->set_error(FLB_INVALID_ARGUMENT, "the meta device has no index but 0");
  return FLB_INVALID_ARGUMENT;
}

flb_status allocate(void*, int32_t, size_t, void** ptr, void** ctx) {
  *ptr = kNowhere;
  *ctx = nullptr;
  return FLB_OK;
}
void release(void*, void*, void*) {}

flb_status copy_nothing(void*, void*, const void*, size_t, int32_t, flb_stream, int32_t) {
  return FLB_OK;
}
flb_status copy_nothing_on_device(void*, void*, const void*, size_t, int32_t, flb_stream) {
  return FLB_OK;
}
flb_status no_data(void*, void*, const void*, size_t, int32_t, flb_stream, int32_t) {
  api()->set_error(FLB_NOT_IMPLEMENTED,
                   "Cannot copy out of meta tensor; no data! Please use "
                   "torch.nn.Module.to_empty() instead of torch.nn.Module.to() when moving "
                   "module from meta to a different device.");
  return FLB_NOT_IMPLEMENTED;
}

// Every kernel: the outputs' sizes are already set, so there is nothing to do; unless
// the kernel's result is a number read from the data.
flb_status kernel(void*, const flb_kernel_call* call) {
  if (call->int_result == nullptr) return FLB_OK;
  api()->set_error(FLB_NOT_IMPLEMENTED,
                   str_cat(call->op,
                           ": the result depends on the data, which meta tensors "
                           "do not have")
                       .c_str());
  return FLB_NOT_IMPLEMENTED;
}

}  // namespace

void register_meta_backend() {
  flb_backend b{};
  b.struct_size = sizeof(b);
  b.abi_major = FLB_ABI_MAJOR;
  b.abi_minor = FLB_ABI_MINOR;
  b.name = "meta";
  b.version = FLAMBEAU_VERSION;
  b.device_count = device_count;
  b.current_device = current_device;
  b.set_device = set_device;
  b.allocate = allocate;
  b.free = release;
  b.copy_from_host = copy_nothing;
  b.copy_to_host = no_data;
  b.copy_on_device = copy_nothing_on_device;
  const int32_t type = api()->register_backend(&b);
  FLB_CHECK(type >= 0, "registering the meta device failed: ", api()->last_error());
  g_meta_device_type = static_cast<DeviceType>(type);
  for (const std::string& op : Dispatcher::operators_with_kernel(kCPU))
    if (kernel_form(op.c_str()) == KernelForm::kC)
      api()->register_kernel(type, op.c_str(), FLB_ANY_DTYPE, kernel, nullptr);
}

}  // namespace flambeau::plugin
