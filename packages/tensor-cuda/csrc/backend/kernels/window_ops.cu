// The window functions (ctx the WindowOp): tensors [out] (1-d, contiguous, a
// floating dtype), scalars [alpha, beta], ints [periodic]. Each point in double,
// rounded once to out's dtype (through float for the 16-bit floats), as the CPU
// kernels (window_math.h).
#include <cstdint>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/kernels.h"
#include "backend/kernels/window_math.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

template <class T>
__global__ void window_kernel(T* out, int64_t n, bool periodic, WindowParams p) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = convert<T>(static_cast<acc_t<T>>(window_point(p, i, n, periodic)));
}

}  // namespace

flb_status window(void* ctx, const flb_kernel_call* c) {
  const WindowOp op = *static_cast<const WindowOp*>(ctx);
  if (c->n_tensors != 1 || c->n_scalars != 2 || c->n_ints != 1)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected [out], [alpha, beta], [periodic]");
  const flb_tensor& out = c->tensors[0];
  if (!dense(out)) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected a contiguous output");
  const int64_t n = numel(out);
  const WindowParams p = window_params(op, c->scalars[0].real, c->scalars[1].real);
  const bool periodic = c->ints[0] != 0;
  return with_float_dtype(c, out.dtype, [&](auto tag) -> flb_status {
    using T = decltype(tag);
    if (n == 0) return FLB_OK;
    runtime::DeviceGuard guard(c->device_index);
    window_kernel<T><<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(c->stream)>>>(
        static_cast<T*>(out.data), n, periodic, p);
    return launch_status(c->op);
  });
}

}  // namespace flambeau::cuda::kernels
