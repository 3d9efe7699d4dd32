// Turning cudart's and the driver's error codes into the statuses and messages
// the allocator's device table (flb_cuda_status, last_error) and the backend
// hooks report.
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <string>

#include "allocator/device_api.h"

namespace flambeau::cuda::runtime {

// The message of the last failing call on this thread ("" when none failed).
const std::string& last_error();
void set_last_error(std::string message);

// FLB_CUDA_OK, or the status of `err` after recording "call: <cudart's words>".
// cudaGetLastError is called for a failure so that the sticky-free error does
// not resurface in an unrelated later call.
flb_cuda_status check_runtime(cudaError_t err, const char* call);
// The same for a driver entry point's CUresult.
flb_cuda_status check_driver(CUresult res, const char* call);

// Makes `device` current for the scope, restoring the previous device after.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  bool ok() const { return ok_; }

 private:
  int previous_ = -1;
  bool ok_ = false;
};

}  // namespace flambeau::cuda::runtime
