#include "backend/state.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <mutex>

#include "runtime/cudart_device_api.h"
#include "runtime/lazy_init.h"

namespace flambeau::cuda::backend {

const flb_core_api* g_core = nullptr;
int32_t g_device_type = -1;

namespace {
std::atomic<CachingAllocator*> g_allocator{nullptr};
std::mutex g_allocator_mutex;
}  // namespace

flb_status fail(flb_status status, const std::string& message) {
  if (g_core) g_core->set_error(status, message.c_str());
  return status;
}

flb_status ensure_initialized() {
  std::string error = runtime::ensure_initialized();
  return error.empty() ? FLB_OK : fail(FLB_ERROR, error);
}

flb_status check_device(int32_t device) {
  if (flb_status s = ensure_initialized(); s != FLB_OK) return s;
  int count = runtime::probe().device_count;
  if (device < 0 || device >= count)
    return fail(FLB_ERROR, "CUDA error: invalid device ordinal (device " + std::to_string(device) +
                               ", " + std::to_string(count) + " device(s) available)");
  return FLB_OK;
}

CachingAllocator& allocator() {
  if (CachingAllocator* a = g_allocator.load(std::memory_order_acquire)) return *a;
  std::lock_guard<std::mutex> lock(g_allocator_mutex);
  if (CachingAllocator* a = g_allocator.load()) return *a;
  // Never destroyed: device storages may be freed at interpreter shutdown.
  auto* a = new CachingAllocator(runtime::cudart_device_api(), runtime::probe().device_count);
  g_allocator.store(a, std::memory_order_release);
  return *a;
}

CachingAllocator* allocator_if_created() { return g_allocator.load(std::memory_order_acquire); }

}  // namespace flambeau::cuda::backend
