// Sharing device memory with another process (flambeau.multiprocessing): the
// exporter sends a cudaIpcMemHandle_t of the cudaMalloc'd segment holding the
// block and the block's offset in it; the importer opens the segment once per
// process (cudaIpcOpenMemHandle refuses a second open) and counts its users.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "backend/hooks.h"
#include "backend/state.h"
#include "runtime/cuda_error.h"
#include "runtime/driver_vm.h"

namespace flambeau::cuda::backend {

namespace {

constexpr uint32_t kIpcMagic = 0x464c4243;  // "FLBC", then the layout's version
constexpr uint32_t kIpcVersion = 1;

struct IpcHandle {
  uint32_t magic;
  uint32_t version;
  cudaIpcMemHandle_t segment;
  uint64_t offset;  // of the block in the segment
  int32_t device;
};

struct Opened {
  void* base = nullptr;
  int32_t device = 0;
  int64_t users = 0;
  std::string key;
};

std::mutex g_ipc_mutex;
std::map<std::string, Opened*>& opened() {
  static auto* m = new std::map<std::string, Opened*>();
  return *m;
}

flb_status runtime_fail(cudaError_t err, const char* call) {
  (void)cudaGetLastError();
  return fail(FLB_ERROR, std::string("CUDA error: ") + cudaGetErrorString(err) + " (" + call + ")");
}

}  // namespace

flb_status ipc_export(void*, void* ptr, void*, void* handle, size_t* size) {
  if (flb_status s = ensure_initialized(); s != FLB_OK) return s;
  if (*size < sizeof(IpcHandle)) {
    *size = sizeof(IpcHandle);
    return fail(FLB_INVALID_ARGUMENT, "ipc_export: the handle buffer is too small");
  }
  const runtime::DriverVm& drv = runtime::driver_vm();
  if (!drv.address_range)
    return fail(FLB_ERROR, "ipc_export: the driver lacks cuMemGetAddressRange");
  CUdeviceptr base = 0;
  size_t extent = 0;
  if (drv.address_range(&base, &extent, reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS)
    return fail(FLB_ERROR, "ipc_export: cuMemGetAddressRange failed for the block");
  cudaPointerAttributes attrs{};
  if (cudaError_t err = cudaPointerGetAttributes(&attrs, ptr); err != cudaSuccess)
    return runtime_fail(err, "cudaPointerGetAttributes");
  IpcHandle h{};
  h.magic = kIpcMagic;
  h.version = kIpcVersion;
  h.offset = reinterpret_cast<uintptr_t>(ptr) - static_cast<uintptr_t>(base);
  h.device = attrs.device;
  cudaError_t err = cudaIpcGetMemHandle(&h.segment, reinterpret_cast<void*>(base));
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return fail(FLB_NOT_IMPLEMENTED,
                std::string("CUDA IPC of this block failed (") + cudaGetErrorString(err) +
                    "): blocks of expandable segments cannot be shared yet; set "
                    "FLAMBEAU_CUDA_ALLOC_CONF=expandable_segments:False in the exporting process");
  }
  std::memcpy(handle, &h, sizeof h);
  *size = sizeof h;
  return FLB_OK;
}

flb_status ipc_import(void*, int32_t device, const void* handle, size_t size, void** ptr,
                      void** ctx) {
  IpcHandle h{};
  if (size != sizeof h) return fail(FLB_INVALID_ARGUMENT, "ipc_import: not a CUDA IPC handle");
  std::memcpy(&h, handle, sizeof h);
  if (h.magic != kIpcMagic || h.version != kIpcVersion)
    return fail(FLB_INVALID_ARGUMENT, "ipc_import: not a CUDA IPC handle of this version");
  if (device < 0) device = h.device;
  if (flb_status s = check_device(device); s != FLB_OK) return s;
  std::string key(reinterpret_cast<const char*>(&h.segment), sizeof h.segment);
  std::lock_guard<std::mutex> lock(g_ipc_mutex);
  Opened*& entry = opened()[key];
  if (entry == nullptr) {
    runtime::DeviceGuard guard(device);
    void* base = nullptr;
    cudaError_t err = cudaIpcOpenMemHandle(&base, h.segment, cudaIpcMemLazyEnablePeerAccess);
    if (err != cudaSuccess) {
      opened().erase(key);
      return runtime_fail(err, "cudaIpcOpenMemHandle");
    }
    entry = new Opened{base, device, 0, key};
  }
  entry->users += 1;
  *ptr = static_cast<char*>(entry->base) + h.offset;
  *ctx = entry;
  return FLB_OK;
}

// The free hook's path for imported blocks (hooks.cpp tells them by ctx).
void ipc_release(void* ctx) {
  auto* entry = static_cast<Opened*>(ctx);
  std::lock_guard<std::mutex> lock(g_ipc_mutex);
  if (--entry->users > 0) return;
  runtime::DeviceGuard guard(entry->device);
  cudaIpcCloseMemHandle(entry->base);
  (void)cudaGetLastError();
  opened().erase(entry->key);
  delete entry;
}

}  // namespace flambeau::cuda::backend
