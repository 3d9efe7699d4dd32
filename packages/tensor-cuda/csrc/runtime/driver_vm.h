// The driver's virtual-memory functions, for expandable segments, fetched from
// cudart with cudaGetDriverEntryPointByVersion: libcuda.so.1 is never linked,
// so the extension loads on machines without a driver (cudart opens it itself).
#pragma once
#include <cudaTypedefs.h>

namespace flambeau::cuda::runtime {

struct DriverVm {
  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuDeviceGetAttribute_v2000 device_get_attribute = nullptr;
  PFN_cuMemGetAllocationGranularity_v10020 granularity = nullptr;
  PFN_cuMemAddressReserve_v10020 address_reserve = nullptr;
  PFN_cuMemAddressFree_v10020 address_free = nullptr;
  PFN_cuMemCreate_v10020 create = nullptr;
  PFN_cuMemMap_v10020 map = nullptr;
  PFN_cuMemSetAccess_v10020 set_access = nullptr;
  PFN_cuMemUnmap_v10020 unmap = nullptr;
  PFN_cuMemRelease_v10020 release = nullptr;
  // Not virtual memory, but fetched alike: the cudaMalloc'd allocation holding a
  // pointer (IPC shares whole allocations).
  PFN_cuMemGetAddressRange_v3020 address_range = nullptr;

  // Whether every entry point was found (the driver is recent enough).
  bool complete() const;
  // Whether `device` supports virtual memory management (and so expandable
  // segments): the entry points exist and the device attribute says so.
  bool supported_on(int device) const;
};

// Fetched once, after cudart found a driver; all null without one.
const DriverVm& driver_vm();

}  // namespace flambeau::cuda::runtime
