#include "runtime/cudart_device_api.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <mutex>

#include "runtime/cuda_error.h"
#include "runtime/driver_vm.h"

namespace flambeau::cuda::runtime {

namespace {

const char* last_error_fn(void*) { return last_error().c_str(); }

// Runs `body` with `device` current; a device that cannot be made current fails.
template <class F>
flb_cuda_status on_device(int32_t device, const char* call, F&& body) {
  DeviceGuard guard(device);
  if (!guard.ok()) return check_runtime(cudaSetDevice(device), call);
  return body();
}

flb_cuda_status malloc_fn(void*, int32_t device, size_t size, void** ptr) {
  return on_device(device, "cudaMalloc",
                   [&] { return check_runtime(cudaMalloc(ptr, size), "cudaMalloc"); });
}

flb_cuda_status free_fn(void*, int32_t device, void* ptr) {
  return on_device(device, "cudaFree", [&] { return check_runtime(cudaFree(ptr), "cudaFree"); });
}

flb_cuda_status mem_get_info_fn(void*, int32_t device, size_t* free_bytes, size_t* total_bytes) {
  return on_device(device, "cudaMemGetInfo", [&] {
    return check_runtime(cudaMemGetInfo(free_bytes, total_bytes), "cudaMemGetInfo");
  });
}

flb_cuda_status event_create_fn(void*, int32_t device, void** event) {
  return on_device(device, "cudaEventCreateWithFlags", [&] {
    return check_runtime(
        cudaEventCreateWithFlags(reinterpret_cast<cudaEvent_t*>(event), cudaEventDisableTiming),
        "cudaEventCreateWithFlags");
  });
}

flb_cuda_status event_destroy_fn(void*, int32_t device, void* event) {
  return on_device(device, "cudaEventDestroy", [&] {
    return check_runtime(cudaEventDestroy(static_cast<cudaEvent_t>(event)), "cudaEventDestroy");
  });
}

flb_cuda_status event_record_fn(void*, void* event, void* stream) {
  return check_runtime(
      cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)),
      "cudaEventRecord");
}

flb_cuda_status event_query_fn(void*, void* event) {
  return check_runtime(cudaEventQuery(static_cast<cudaEvent_t>(event)), "cudaEventQuery");
}

flb_cuda_status event_synchronize_fn(void*, void* event) {
  return check_runtime(cudaEventSynchronize(static_cast<cudaEvent_t>(event)),
                       "cudaEventSynchronize");
}

// ---- virtual memory: one physical allocation per granule, so that any
// granule-aligned part of a mapped range can be unmapped on its own. ----------

struct Physical {
  std::mutex mutex;
  std::map<uintptr_t, CUmemGenericAllocationHandle> by_address;  // granule start -> handle
};
Physical& physical() {
  static Physical* p = new Physical();  // outlives every allocator (process exit)
  return *p;
}

CUmemAllocationProp device_prop(int32_t device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

flb_cuda_status vm_granularity_fn(void*, int32_t device, size_t* granularity) {
  const DriverVm& vm = driver_vm();
  *granularity = 0;
  if (!vm.supported_on(device)) return FLB_CUDA_OK;  // 0: no expandable segments here
  CUmemAllocationProp prop = device_prop(device);
  return check_driver(vm.granularity(granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                      "cuMemGetAllocationGranularity");
}

flb_cuda_status reserve_va_fn(void*, int32_t device, size_t size, void** base) {
  (void)device;
  CUdeviceptr ptr = 0;
  flb_cuda_status s =
      check_driver(driver_vm().address_reserve(&ptr, size, 0, 0, 0), "cuMemAddressReserve");
  if (s == FLB_CUDA_OK) *base = reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
  return s;
}

flb_cuda_status release_va_fn(void*, int32_t device, void* base, size_t size) {
  (void)device;
  return check_driver(
      driver_vm().address_free(static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(base)), size),
      "cuMemAddressFree");
}

// Unmaps and releases the granules [addr, addr + size), all recorded as mapped.
flb_cuda_status release_granules(int32_t device, uintptr_t addr, size_t size) {
  const DriverVm& vm = driver_vm();
  size_t g = 0;
  if (vm_granularity_fn(nullptr, device, &g) != FLB_CUDA_OK || g == 0) return FLB_CUDA_ERROR;
  flb_cuda_status result = FLB_CUDA_OK;
  Physical& phys = physical();
  std::lock_guard<std::mutex> lock(phys.mutex);
  for (uintptr_t a = addr; a < addr + size; a += g) {
    auto it = phys.by_address.find(a);
    if (it == phys.by_address.end()) continue;
    flb_cuda_status s = check_driver(vm.unmap(static_cast<CUdeviceptr>(a), g), "cuMemUnmap");
    if (s == FLB_CUDA_OK) s = check_driver(vm.release(it->second), "cuMemRelease");
    if (s != FLB_CUDA_OK) result = s;
    phys.by_address.erase(it);
  }
  return result;
}

flb_cuda_status map_fn(void*, int32_t device, void* addr, size_t size) {
  const DriverVm& vm = driver_vm();
  size_t g = 0;
  flb_cuda_status s = vm_granularity_fn(nullptr, device, &g);
  if (s != FLB_CUDA_OK) return s;
  CUmemAllocationProp prop = device_prop(device);
  const uintptr_t start = reinterpret_cast<uintptr_t>(addr);
  uintptr_t done = start;
  for (; done < start + size && s == FLB_CUDA_OK; done += g) {
    CUmemGenericAllocationHandle handle = 0;
    s = check_driver(vm.create(&handle, g, &prop, 0), "cuMemCreate");
    if (s != FLB_CUDA_OK) break;
    s = check_driver(vm.map(static_cast<CUdeviceptr>(done), g, 0, handle, 0), "cuMemMap");
    if (s != FLB_CUDA_OK) {
      vm.release(handle);
      break;
    }
    std::lock_guard<std::mutex> lock(physical().mutex);
    physical().by_address[done] = handle;
  }
  if (s == FLB_CUDA_OK) {
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    s = check_driver(vm.set_access(static_cast<CUdeviceptr>(start), size, &access, 1),
                     "cuMemSetAccess");
    if (s == FLB_CUDA_OK) return s;
    done = start + size;
  }
  // All or nothing: what this call mapped goes back (keeping the first error).
  std::string message = last_error();
  release_granules(device, start, done - start);
  set_last_error(message);
  return s;
}

flb_cuda_status unmap_fn(void*, int32_t device, void* addr, size_t size) {
  return release_granules(device, reinterpret_cast<uintptr_t>(addr), size);
}

flb_cuda_device_api build() {
  flb_cuda_device_api api{};
  api.struct_size = sizeof api;
  api.last_error = last_error_fn;
  api.malloc = malloc_fn;
  api.free = free_fn;
  api.mem_get_info = mem_get_info_fn;
  api.event_create = event_create_fn;
  api.event_destroy = event_destroy_fn;
  api.event_record = event_record_fn;
  api.event_query = event_query_fn;
  api.event_synchronize = event_synchronize_fn;
  if (driver_vm().complete()) {  // else all five stay NULL: no expandable segments
    api.vm_granularity = vm_granularity_fn;
    api.reserve_va = reserve_va_fn;
    api.release_va = release_va_fn;
    api.map = map_fn;
    api.unmap = unmap_fn;
  }
  return api;
}

}  // namespace

const flb_cuda_device_api& cudart_device_api() {
  static const flb_cuda_device_api api = build();
  return api;
}

}  // namespace flambeau::cuda::runtime
