#include "runtime/cuda_error.h"

#include <utility>

namespace flambeau::cuda::runtime {

namespace {
thread_local std::string t_last_error;
}

const std::string& last_error() { return t_last_error; }
void set_last_error(std::string message) { t_last_error = std::move(message); }

flb_cuda_status check_runtime(cudaError_t err, const char* call) {
  if (err == cudaSuccess) return FLB_CUDA_OK;
  if (err == cudaErrorNotReady) return FLB_CUDA_NOT_READY;
  (void)cudaGetLastError();  // clears the error unless it is sticky
  set_last_error(std::string(call) + ": " + cudaGetErrorString(err));
  return err == cudaErrorMemoryAllocation ? FLB_CUDA_OUT_OF_MEMORY : FLB_CUDA_ERROR;
}

flb_cuda_status check_driver(CUresult res, const char* call) {
  if (res == CUDA_SUCCESS) return FLB_CUDA_OK;
  if (res == CUDA_ERROR_NOT_READY) return FLB_CUDA_NOT_READY;
  // cuGetErrorString is itself a driver entry point; the code says enough.
  set_last_error(std::string(call) + " failed with CUresult " + std::to_string(int(res)));
  return res == CUDA_ERROR_OUT_OF_MEMORY ? FLB_CUDA_OUT_OF_MEMORY : FLB_CUDA_ERROR;
}

DeviceGuard::DeviceGuard(int device) {
  if (cudaGetDevice(&previous_) != cudaSuccess) return;
  ok_ = previous_ == device || cudaSetDevice(device) == cudaSuccess;
}

DeviceGuard::~DeviceGuard() {
  int now = -1;
  if (previous_ >= 0 && cudaGetDevice(&now) == cudaSuccess && now != previous_)
    cudaSetDevice(previous_);
}

}  // namespace flambeau::cuda::runtime
