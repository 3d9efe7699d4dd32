#include "runtime/driver_vm.h"

#include <cuda_runtime_api.h>

namespace flambeau::cuda::runtime {

namespace {

// The driver ABI version the entry points are asked for: the PFN_*_v10020 and
// _v2000 typedefs above are those functions' signatures at CUDA 12.0.
constexpr unsigned kDriverApiVersion = 12000;

template <class Fn>
void fetch(const char* symbol, Fn& out) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, kDriverApiVersion, cudaEnableDefault, &found) ==
          cudaSuccess &&
      found == cudaDriverEntryPointSuccess) {
    out = reinterpret_cast<Fn>(fn);
  } else {
    (void)cudaGetLastError();
    out = nullptr;
  }
}

DriverVm load() {
  DriverVm vm;
  fetch("cuDeviceGet", vm.device_get);
  fetch("cuDeviceGetAttribute", vm.device_get_attribute);
  fetch("cuMemGetAllocationGranularity", vm.granularity);
  fetch("cuMemAddressReserve", vm.address_reserve);
  fetch("cuMemAddressFree", vm.address_free);
  fetch("cuMemCreate", vm.create);
  fetch("cuMemMap", vm.map);
  fetch("cuMemSetAccess", vm.set_access);
  fetch("cuMemUnmap", vm.unmap);
  fetch("cuMemRelease", vm.release);
  fetch("cuMemGetAddressRange", vm.address_range);
  return vm;
}

}  // namespace

bool DriverVm::complete() const {
  return device_get && device_get_attribute && granularity && address_reserve && address_free &&
         create && map && set_access && unmap && release;
}

bool DriverVm::supported_on(int device) const {
  if (!complete()) return false;
  CUdevice dev = 0;
  int supported = 0;
  return device_get(&dev, device) == CUDA_SUCCESS &&
         device_get_attribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                              dev) == CUDA_SUCCESS &&
         supported != 0;
}

const DriverVm& driver_vm() {
  static const DriverVm vm = load();
  return vm;
}

}  // namespace flambeau::cuda::runtime
