// Reading the indexing kernels' arguments (the flb_index_spec struct) and
// reporting an out-of-range index found on the device: a kernel records the
// first bad index it meets in a small device record, and the host reads the
// record back after the launch (one stream synchronization) and fails with the
// CPU's message, "index K is out of bounds for dimension D with size S". Kernels
// that write through indices (scatter, index_put) check every index in a first
// pass and skip the writing pass when one is bad, so a failing call changes
// nothing, as on the CPU.
#pragma once
#include <cuda_runtime_api.h>
#include <flambeau/backend_abi.h>

#include <cstdint>
#include <string>

#include "backend/kernels/device_buffer.h"
#include "backend/kernels/launch.cuh"

namespace flambeau::cuda::kernels {

struct BadIndexRecord {
  unsigned int found;
  int64_t value;
};

// Records k when it is the first bad index any thread reports.
__device__ inline void record_bad_index(BadIndexRecord* r, int64_t k) {
  if (atomicCAS(&r->found, 0u, 1u) == 0u) r->value = k;
}

// The call's i-th argument struct, or nullptr when the call has none there.
template <class S>
const S* struct_arg(const flb_kernel_call* c, int i) {
  if (!FLB_HAS_FIELD(c, flb_kernel_call, structs) || c->n_structs <= i || c->structs == nullptr)
    return nullptr;
  return static_cast<const S*>(c->structs[i]);
}

// A zeroed BadIndexRecord on the call's stream, when the spec asks for checks.
class BadIndexCheck {
 public:
  // FLB_OK, or the allocation's failure. Nothing is allocated for a spec whose
  // index holds already checked offsets (size < 0).
  flb_status prepare(const flb_kernel_call* c, const flb_index_spec& spec) {
    spec_ = spec;
    if (spec.size < 0) return FLB_OK;
    stream_ = static_cast<cudaStream_t>(c->stream);
    if (flb_status s = buffer_.allocate(c->device_index, sizeof(BadIndexRecord), stream_, c->op);
        s != FLB_OK)
      return s;
    cudaMemsetAsync(buffer_.get(), 0, sizeof(BadIndexRecord), stream_);
    return FLB_OK;
  }
  BadIndexRecord* record() const { return buffer_.get<BadIndexRecord>(); }
  // After the launches: FLB_OK, or FLB_ERROR naming the bad index (waits for the stream).
  flb_status finish(const char* op) const {
    if (flb_status s = launch_status(op); s != FLB_OK) return s;
    if (record() == nullptr) return FLB_OK;
    BadIndexRecord host{};
    cudaError_t err =
        cudaMemcpyAsync(&host, record(), sizeof(host), cudaMemcpyDeviceToHost, stream_);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream_);
    if (err != cudaSuccess)
      return kernel_fail(FLB_ERROR, op, std::string("CUDA error: ") + cudaGetErrorString(err));
    if (host.found == 0) return FLB_OK;
    return kernel_fail(FLB_ERROR, op,
                       "index " + std::to_string(host.value) + " is out of bounds for dimension " +
                           std::to_string(spec_.dim) + " with size " + std::to_string(spec_.size));
  }

 private:
  flb_index_spec spec_{};
  cudaStream_t stream_ = nullptr;
  DeviceBuffer buffer_;
};

}  // namespace flambeau::cuda::kernels
