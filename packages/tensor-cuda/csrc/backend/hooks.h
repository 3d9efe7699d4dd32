// The flb_backend table of device type "cuda" (devices, memory, copies, streams,
// events, pinned host memory, IPC), filled for core->register_backend.
#pragma once
#include <flambeau/backend_abi.h>

namespace flambeau::cuda::backend {

// The table; lives for the whole process.
const flb_backend& cuda_backend_table();

// IPC hooks (ipc.cpp).
flb_status ipc_export(void* self, void* ptr, void* ctx, void* handle, size_t* size);
flb_status ipc_import(void* self, int32_t device, const void* handle, size_t size, void** ptr,
                      void** ctx);
// Drops one user of an imported segment (the free hook, for a non-null ctx:
// blocks of the caching allocator have a null ctx).
void ipc_release(void* ctx);

}  // namespace flambeau::cuda::backend
