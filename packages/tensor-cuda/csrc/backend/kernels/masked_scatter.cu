// masked_scatter: tensors [dst (strided), mask (bool, broadcast to dst), source
// (1-d, contiguous)]: the i-th True of mask in row-major order takes source[i].
// The mask becomes int64 flags, CUB's scan gives each True its source position,
// and the count is read back (one stream synchronization) and checked against
// source's size before anything is written, so a failing call leaves dst as it
// was, with the CPU's message. Writes move raw elements (any dtype).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cub/device/device_scan.cuh>
#include <string>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/device_buffer.h"
#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

__global__ void mask_flags_kernel(StridedIndex<2> ix, const char* mask, int64_t* flags, int64_t n) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[2];
    ix.offsets(i, off);
    flags[i] = *reinterpret_cast<const bool*>(mask + off[1]) ? 1 : 0;
  }
}

template <class W>
__global__ void masked_scatter_kernel(StridedIndex<2> ix, char* dst, const int64_t* flags,
                                      const int64_t* positions, const W* source, int64_t n) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    if (!flags[i]) continue;
    int64_t off[2];
    ix.offsets(i, off);
    *reinterpret_cast<W*>(dst + off[0]) = source[positions[i]];
  }
}

}  // namespace

flb_status masked_scatter(void*, const flb_kernel_call* c) {
  if (c->n_tensors < 3) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "too few tensors");
  const flb_tensor &dst = c->tensors[0], &mask = c->tensors[1], &source = c->tensors[2];
  if (mask.dtype != FLB_BOOL || mask.ndim != dst.ndim || source.dtype != dst.dtype)
    return unsupported_dtypes(c);
  const int64_t item = itemsize(dst.dtype);
  const int64_t* strides[2] = {dst.strides, mask.strides};
  const int64_t items[2] = {item, 1};
  StridedIndex<2> ix;
  if (!make_index<2>(dst.ndim, dst.sizes, strides, items, &ix))
    return kernel_fail(FLB_NOT_IMPLEMENTED, c->op, "more than 16 non-mergeable dimensions");
  const int64_t n = numel(dst), available = numel(source);
  if (n == 0) return FLB_OK;
  runtime::DeviceGuard guard(c->device_index);
  auto stream = static_cast<cudaStream_t>(c->stream);
  DeviceBuffer flags, positions;
  for (DeviceBuffer* b : {&flags, &positions})
    if (flb_status s = b->allocate(c->device_index, static_cast<size_t>(n) * 8, stream, c->op);
        s != FLB_OK)
      return s;
  mask_flags_kernel<<<blocks_for(n), kThreads, 0, stream>>>(ix, static_cast<const char*>(mask.data),
                                                            flags.get<int64_t>(), n);
  size_t temp_bytes = 0;
  cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, flags.get<const int64_t>(),
                                positions.get<int64_t>(), n, stream);
  DeviceBuffer temp;
  if (flb_status s = temp.allocate(c->device_index, temp_bytes, stream, c->op); s != FLB_OK)
    return s;
  cub::DeviceScan::ExclusiveSum(temp.get(), temp_bytes, flags.get<const int64_t>(),
                                positions.get<int64_t>(), n, stream);
  if (flb_status s = launch_status(c->op); s != FLB_OK) return s;
  int64_t last[2] = {0, 0};  // the last position and flag: their sum counts the Trues
  cudaError_t err = cudaMemcpyAsync(&last[0], positions.get<int64_t>() + (n - 1), 8,
                                    cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess)
    err = cudaMemcpyAsync(&last[1], flags.get<int64_t>() + (n - 1), 8, cudaMemcpyDeviceToHost,
                          stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess)
    return kernel_fail(FLB_ERROR, c->op, std::string("CUDA error: ") + cudaGetErrorString(err));
  const int64_t need = last[0] + last[1];
  if (need > available)
    return kernel_fail(FLB_ERROR, c->op,
                       "expected source to have at least " + std::to_string(need) +
                           " elements (the number of True entries in mask), but it has " +
                           std::to_string(available));
  if (need == 0) return FLB_OK;
  const bool ok = dispatch_width(item, [&](auto tag) {
    using W = decltype(tag);
    masked_scatter_kernel<W><<<blocks_for(n), kThreads, 0, stream>>>(
        ix, static_cast<char*>(dst.data), flags.get<const int64_t>(),
        positions.get<const int64_t>(), static_cast<const W*>(source.data), n);
  });
  if (!ok) return unsupported_dtypes(c);
  return launch_status(c->op);
}

}  // namespace flambeau::cuda::kernels
