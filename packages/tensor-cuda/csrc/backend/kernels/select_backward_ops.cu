// value_selecting_reduction_backward (the backward of max, min, median, kthvalue,
// mode along a dim): tensors [out (rows, n), grad (rows, k), indices (rows, k),
// int64], all contiguous, a floating dtype: out[r, indices[r, j]] += grad[r, j],
// zero elsewhere. Every index is checked first (one stream synchronization); a bad
// one fails with the CPU's message and leaves out unwritten. Each row adds its k
// gradients in order in the compute type (float for the 16-bit floats) and rounds
// once, as the CPU does, so repeated indices sum to the CPU's bits.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/device_buffer.h"
#include "backend/kernels/index_checks.cuh"
#include "backend/kernels/kernels.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

__global__ void check_indices_kernel(const int64_t* idx, int64_t count, int64_t n,
                                     BadIndexRecord* bad) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride)
    if (idx[i] < 0 || idx[i] >= n) record_bad_index(bad, idx[i]);
}

// One thread per row: acc[r, :] (zeroed) += grad[r, j] at indices[r, j], j in order.
template <class T, class C>
__global__ void scatter_add_rows_kernel(C* acc, const T* grad, const int64_t* idx, int64_t rows,
                                        int64_t n, int64_t k) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows;
       r += stride)
    for (int64_t j = 0; j < k; ++j) acc[r * n + idx[r * k + j]] += convert<C>(grad[r * k + j]);
}

template <class T, class C>
__global__ void round_kernel(T* out, const C* acc, int64_t count) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride)
    out[i] = convert<T>(acc[i]);
}

}  // namespace

flb_status value_selecting_backward(void*, const flb_kernel_call* c) {
  if (c->n_tensors != 3) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected 3 tensors");
  const flb_tensor &out = c->tensors[0], &grad = c->tensors[1], &indices = c->tensors[2];
  if (out.ndim != 2 || grad.ndim != 2 || indices.ndim != 2 || indices.dtype != FLB_INT64 ||
      grad.dtype != out.dtype || !dense(out) || !dense(grad) || !dense(indices) ||
      grad.sizes[0] != out.sizes[0] || indices.sizes[0] != out.sizes[0] ||
      indices.sizes[1] != grad.sizes[1])
    return unsupported_dtypes(c);
  const int64_t rows = out.sizes[0], n = out.sizes[1], k = grad.sizes[1];
  return with_float_dtype(c, out.dtype, [&](auto tag) -> flb_status {
    using T = decltype(tag);
    using C = acc_t<T>;
    if (rows * n == 0) return FLB_OK;
    runtime::DeviceGuard guard(c->device_index);
    auto stream = static_cast<cudaStream_t>(c->stream);
    const auto* idx = static_cast<const int64_t*>(indices.data);
    if (rows * k > 0) {
      DeviceBuffer bad;
      if (flb_status s = bad.allocate(c->device_index, sizeof(BadIndexRecord), stream, c->op);
          s != FLB_OK)
        return s;
      cudaMemsetAsync(bad.get(), 0, sizeof(BadIndexRecord), stream);
      check_indices_kernel<<<blocks_for(rows * k), kThreads, 0, stream>>>(
          idx, rows * k, n, bad.get<BadIndexRecord>());
      if (flb_status s = launch_status(c->op); s != FLB_OK) return s;
      BadIndexRecord host{};
      cudaError_t err =
          cudaMemcpyAsync(&host, bad.get(), sizeof(host), cudaMemcpyDeviceToHost, stream);
      if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
      if (err != cudaSuccess)
        return kernel_fail(FLB_ERROR, c->op, std::string("CUDA error: ") + cudaGetErrorString(err));
      if (host.found)
        return kernel_fail(FLB_ERROR, c->op,
                           "index " + std::to_string(host.value) +
                               " is out of bounds for dim of size " + std::to_string(n));
    }
    DeviceBuffer acc;
    const size_t bytes = static_cast<size_t>(rows * n) * sizeof(C);
    if (flb_status s = acc.allocate(c->device_index, bytes, stream, c->op); s != FLB_OK) return s;
    cudaMemsetAsync(acc.get(), 0, bytes, stream);  // all-zero bits: +0.0
    if (k > 0)
      scatter_add_rows_kernel<T, C><<<blocks_for(rows), kThreads, 0, stream>>>(
          acc.get<C>(), static_cast<const T*>(grad.data), idx, rows, n, k);
    round_kernel<T, C><<<blocks_for(rows * n), kThreads, 0, stream>>>(static_cast<T*>(out.data),
                                                                      acc.get<const C>(), rows * n);
    return launch_status(c->op);
  });
}

}  // namespace flambeau::cuda::kernels
