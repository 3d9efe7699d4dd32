#include "backend/kernels/launch.cuh"

#include "backend/state.h"

namespace flambeau::cuda::kernels {

flb_status kernel_fail(flb_status status, const char* op, const std::string& message) {
  return backend::fail(status, std::string(op) + ": " + message);
}

flb_status launch_status(const char* op) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return FLB_OK;
  return kernel_fail(FLB_ERROR, op, std::string("CUDA error: ") + cudaGetErrorString(err));
}

flb_status unsupported_dtypes(const flb_kernel_call* call) {
  std::string dtypes;
  for (int i = 0; i < call->n_tensors; ++i)
    dtypes += (i ? ", " : "") + std::to_string(call->tensors[i].dtype);
  return kernel_fail(
      FLB_NOT_IMPLEMENTED, call->op,
      "the CUDA kernel does not handle this combination of dtypes yet (flb_dtype " + dtypes + ")");
}

}  // namespace flambeau::cuda::kernels
