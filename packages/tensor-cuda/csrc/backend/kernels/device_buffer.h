// Temporary device memory for a kernel call: a block of the caching allocator on
// the call's stream, given back when the buffer goes out of scope (the allocator
// reuses it only for work queued after the call's, so kernels still in flight on
// that stream keep it).
#pragma once
#include <cuda_runtime_api.h>
#include <flambeau/backend_abi.h>

#include <cstddef>
#include <exception>

#include "backend/kernels/launch.cuh"
#include "backend/state.h"

namespace flambeau::cuda::kernels {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_ != nullptr) backend::allocator().free(ptr_);
  }
  // FLB_OK, or FLB_OUT_OF_MEMORY with the allocator's message recorded for op.
  flb_status allocate(int device, size_t nbytes, cudaStream_t stream, const char* op) {
    try {
      ptr_ = backend::allocator().malloc(device, nbytes > 0 ? nbytes : 1, stream);
    } catch (const std::exception& e) {
      return kernel_fail(FLB_OUT_OF_MEMORY, op, e.what());
    }
    return FLB_OK;
  }
  template <class T = void>
  T* get() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
};

}  // namespace flambeau::cuda::kernels
