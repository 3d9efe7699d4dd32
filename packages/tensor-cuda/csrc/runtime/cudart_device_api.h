// The production flb_cuda_device_api: the caching allocator's device table
// bound to cudart (cudaMalloc, cudaFree, cudaMemGetInfo, events) and to the
// driver's virtual-memory entry points (expandable segments) where the driver
// has them.
#pragma once
#include "allocator/device_api.h"

namespace flambeau::cuda::runtime {

// The table; built on first call, which must come after cudart found a driver
// and a device (lazy initialization): it asks the driver for its entry points.
const flb_cuda_device_api& cudart_device_api();

}  // namespace flambeau::cuda::runtime
