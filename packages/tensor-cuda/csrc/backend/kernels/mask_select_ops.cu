// The data-sized results, in the core's two steps (ops/indexing_mask.cpp): the
// count comes back to the host, the core allocates the result on the device, and
// the kernel fills it. Inputs arrive contiguous.
//   _nonzero_count: tensors [in (any real dtype)]; the count in *call->int_result
//   nonzero:        tensors [out ((count, in.ndim) int64), in (any real dtype)]
//   masked_select:  tensors [out ((count,)), in, mask (bool, in's shape)]
// Each selected element gets a 0/1 flag and CUB's exclusive scan of the flags its
// output row, in row-major order: the CPU's result, deterministically.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <string>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/device_buffer.h"
#include "backend/kernels/kernels.h"
#include "backend/kernels/strided_index.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

constexpr int kMaxNonzeroDims = 64;

struct Sizes {
  int64_t v[kMaxNonzeroDims];
};

template <class T>
__global__ void flags_kernel(const T* in, int64_t* flags, int64_t n) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    flags[i] = convert<bool>(in[i]) ? 1 : 0;
}

__global__ void nonzero_kernel(const int64_t* flags, const int64_t* rows, int64_t* out, Sizes sizes,
                               int ndim, int64_t n) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    if (!flags[i]) continue;
    int64_t* row = out + rows[i] * ndim;
    int64_t rest = i;
    for (int d = ndim - 1; d >= 0; --d) {
      row[d] = rest % sizes.v[d];
      rest /= sizes.v[d];
    }
  }
}

template <class W>
__global__ void select_kernel(const int64_t* flags, const int64_t* rows, const W* in, W* out,
                              int64_t n) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    if (flags[i]) out[rows[i]] = in[i];
}

// The 0/1 flags of t's non-zero elements, and (with rows) each one's output row.
struct Marks {
  DeviceBuffer flags, rows;
};

flb_status mark(const flb_kernel_call* c, const flb_tensor& t, Marks& m, bool with_rows) {
  const int64_t n = numel(t);
  auto stream = static_cast<cudaStream_t>(c->stream);
  if (flb_status s = m.flags.allocate(c->device_index, static_cast<size_t>(n) * 8, stream, c->op);
      s != FLB_OK)
    return s;
  const bool known = dispatch(t.dtype, [&](auto tag) {
    using T = decltype(tag);
    flags_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const T*>(t.data),
                                                            m.flags.get<int64_t>(), n);
  });
  if (!known) return unsupported_dtypes(c);
  if (flb_status s = launch_status(c->op); s != FLB_OK || !with_rows) return s;
  if (flb_status s = m.rows.allocate(c->device_index, static_cast<size_t>(n) * 8, stream, c->op);
      s != FLB_OK)
    return s;
  size_t temp_bytes = 0;
  cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, m.flags.get<const int64_t>(),
                                m.rows.get<int64_t>(), n, stream);
  DeviceBuffer temp;
  if (flb_status s = temp.allocate(c->device_index, temp_bytes, stream, c->op); s != FLB_OK)
    return s;
  cub::DeviceScan::ExclusiveSum(temp.get(), temp_bytes, m.flags.get<const int64_t>(),
                                m.rows.get<int64_t>(), n, stream);
  return launch_status(c->op);
}

}  // namespace

flb_status nonzero_count(void*, const flb_kernel_call* c) {
  if (c->n_tensors < 1 || c->int_result == nullptr)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected a tensor and an integer result");
  const flb_tensor& in = c->tensors[0];
  const int64_t n = numel(in);
  *c->int_result = 0;
  if (n == 0) return FLB_OK;
  if (!dense(in)) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "input must be contiguous");
  runtime::DeviceGuard guard(c->device_index);
  auto stream = static_cast<cudaStream_t>(c->stream);
  Marks m;
  if (flb_status s = mark(c, in, m, false); s != FLB_OK) return s;
  DeviceBuffer total;
  if (flb_status s = total.allocate(c->device_index, 8, stream, c->op); s != FLB_OK) return s;
  size_t temp_bytes = 0;
  cub::DeviceReduce::Sum(nullptr, temp_bytes, m.flags.get<const int64_t>(), total.get<int64_t>(), n,
                         stream);
  DeviceBuffer temp;
  if (flb_status s = temp.allocate(c->device_index, temp_bytes, stream, c->op); s != FLB_OK)
    return s;
  cub::DeviceReduce::Sum(temp.get(), temp_bytes, m.flags.get<const int64_t>(), total.get<int64_t>(),
                         n, stream);
  if (flb_status s = launch_status(c->op); s != FLB_OK) return s;
  // The count sizes the result the core allocates next: one synchronization.
  cudaError_t err =
      cudaMemcpyAsync(c->int_result, total.get<int64_t>(), 8, cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess)
    return kernel_fail(FLB_ERROR, c->op, std::string("CUDA error: ") + cudaGetErrorString(err));
  return FLB_OK;
}

flb_status nonzero(void*, const flb_kernel_call* c) {
  if (c->n_tensors < 2) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "too few tensors");
  const flb_tensor &out = c->tensors[0], &in = c->tensors[1];
  if (out.dtype != FLB_INT64 || out.ndim != 2 || out.sizes[1] != in.ndim)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "out must be (count, input.dim()) int64");
  if (in.ndim > kMaxNonzeroDims)
    return kernel_fail(FLB_NOT_IMPLEMENTED, c->op, "too many dimensions");
  if (!dense(in) || !dense(out))
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "tensors must be contiguous");
  const int64_t n = numel(in);
  if (n == 0 || numel(out) == 0) return FLB_OK;
  runtime::DeviceGuard guard(c->device_index);
  auto stream = static_cast<cudaStream_t>(c->stream);
  Marks m;
  if (flb_status s = mark(c, in, m, true); s != FLB_OK) return s;
  Sizes sizes{};
  for (int d = 0; d < in.ndim; ++d) sizes.v[d] = in.sizes[d];
  nonzero_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
      m.flags.get<const int64_t>(), m.rows.get<const int64_t>(), static_cast<int64_t*>(out.data),
      sizes, in.ndim, n);
  return launch_status(c->op);
}

flb_status masked_select(void*, const flb_kernel_call* c) {
  if (c->n_tensors < 3) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "too few tensors");
  const flb_tensor &out = c->tensors[0], &in = c->tensors[1], &mask = c->tensors[2];
  if (mask.dtype != FLB_BOOL || out.dtype != in.dtype) return unsupported_dtypes(c);
  if (!dense(in) || !dense(mask) || !dense(out) || numel(in) != numel(mask))
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op,
                       "input and mask must be contiguous, of one shape");
  const int64_t n = numel(in);
  if (n == 0 || numel(out) == 0) return FLB_OK;
  runtime::DeviceGuard guard(c->device_index);
  auto stream = static_cast<cudaStream_t>(c->stream);
  Marks m;
  if (flb_status s = mark(c, mask, m, true); s != FLB_OK) return s;
  const bool ok = dispatch_width(itemsize(in.dtype), [&](auto tag) {
    using W = decltype(tag);
    select_kernel<W><<<blocks_for(n), kThreads, 0, stream>>>(
        m.flags.get<const int64_t>(), m.rows.get<const int64_t>(), static_cast<const W*>(in.data),
        static_cast<W*>(out.data), n);
  });
  if (!ok) return unsupported_dtypes(c);
  return launch_status(c->op);
}

}  // namespace flambeau::cuda::kernels
