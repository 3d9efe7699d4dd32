// Launch geometry and error reporting shared by the kernels' host code.
#pragma once
#include <cuda_runtime_api.h>
#include <flambeau/backend_abi.h>

#include <cstdint>
#include <string>

namespace flambeau::cuda::kernels {

constexpr int kThreads = 256;

// Blocks for n elements with a grid-stride loop (at most 65535 * 32 blocks).
inline unsigned blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  const int64_t cap = 65535LL * 32;
  return static_cast<unsigned>(b < 1 ? 1 : (b > cap ? cap : b));
}

// FLB_OK after a launch, or the launch error recorded for the core.
flb_status launch_status(const char* op);
// Records "<op>: <message>" with `status` for the core and returns it.
flb_status kernel_fail(flb_status status, const char* op, const std::string& message);
// The common refusal: a dtype combination this kernel does not handle yet.
flb_status unsupported_dtypes(const flb_kernel_call* call);

}  // namespace flambeau::cuda::kernels
