// What the backend's pieces share: the core's ABI table, the device type id the
// core gave "cuda", the caching allocator (created at the first allocation,
// after lazy initialization), and reporting failures to the core.
#pragma once
#include <flambeau/backend_abi.h>

#include <string>

#include "allocator/caching_allocator.h"

namespace flambeau::cuda::backend {

// Set once by the module's init, before any hook can run.
extern const flb_core_api* g_core;
extern int32_t g_device_type;

// Records `message` with the core and returns `status` (for `return fail(...)`).
flb_status fail(flb_status status, const std::string& message);

// Initializes CUDA if needed; FLB_OK, or FLB_ERROR with PyTorch's message
// recorded (no driver, no device, forked child).
flb_status ensure_initialized();
// ensure_initialized, then checks 0 <= device < device_count.
flb_status check_device(int32_t device);

// The allocator, created on first call (after ensure_initialized succeeded).
CachingAllocator& allocator();
// The allocator if it exists yet, else nullptr (statistics before any allocation).
CachingAllocator* allocator_if_created();

}  // namespace flambeau::cuda::backend
