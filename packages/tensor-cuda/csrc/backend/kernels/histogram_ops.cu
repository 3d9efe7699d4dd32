// Counting kernels, with the CPU's arithmetic (cpu/sort_search_kernels.cpp):
//   bincount: tensors [out (len; int64, or float32/float64 with weights), in
//             (int64, contiguous, values already checked in [0, len) by the
//             frontend), weights (out's dtype, contiguous) or absent]: out[v] counts
//             (or sums the weights of) the elements equal to v;
//   histc:    tensors [out (bins, a floating dtype), in (float64, contiguous)],
//             scalars [lo, hi]: the elements in [lo, hi] (NaN never) counted in
//             bins equal-width bins, the top edge in the last one.
// Counts are exact integers (64-bit atomics); weighted sums add in whatever order
// the atomics land, so they may differ from the CPU's in the last bits (the
// operator table marks bincount with weights nondeterministic on CUDA).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/device_buffer.h"
#include "backend/kernels/kernels.h"
#include "backend/kernels/strided_index.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

using Count = unsigned long long;  // NOLINT(runtime/int): atomicAdd's 64-bit type

// Up to this many bins, each block counts in shared memory first (32 KiB of 64-bit
// values) and adds its non-zero bins to the output once: far fewer contended global
// atomics when many elements share few bins.
constexpr int64_t kSharedBins = 4096;
constexpr unsigned kSharedBlocks = 1024;

// What element i adds where: bincount's counts and weights, histc's counts.
struct CountOf {
  const int64_t* in;
  __device__ int64_t operator()(int64_t i, Count* v) const {
    *v = 1;
    return in[i];
  }
};

template <class T>
struct WeightOf {
  const int64_t* in;
  const T* w;
  __device__ int64_t operator()(int64_t i, T* v) const {
    *v = w[i];
    return in[i];
  }
};

// The bin of x, or -1 outside [lo, hi] (NaN included). Rounded steps, no fused
// multiply-add: the CPU's int64((x - lo) * scale).
struct HistcBinOf {
  const double* x;
  double lo, hi, scale;
  int64_t bins;
  __device__ int64_t operator()(int64_t i, Count* v) const {
    *v = 1;
    if (!(x[i] >= lo && x[i] <= hi)) return -1;
    const int64_t b = static_cast<int64_t>(__dmul_rn(__dsub_rn(x[i], lo), scale));
    return b < bins - 1 ? b : bins - 1;
  }
};

// out[bin_of(i)] += value of i, for i in [0, n); out zeroed before.
template <class V, class BinOf>
__global__ void accumulate_kernel(V* out, int64_t n, int64_t bins, bool privatized, BinOf bin_of) {
  extern __shared__ __align__(8) unsigned char shared_bytes[];
  V* local = reinterpret_cast<V*>(shared_bytes);
  if (privatized) {
    for (int64_t b = threadIdx.x; b < bins; b += blockDim.x) local[b] = V(0);
    __syncthreads();
  }
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    V v;
    const int64_t b = bin_of(i, &v);
    if (b >= 0) atomicAdd((privatized ? local : out) + b, v);
  }
  if (privatized) {
    __syncthreads();
    for (int64_t b = threadIdx.x; b < bins; b += blockDim.x)
      if (local[b] != V(0)) atomicAdd(out + b, local[b]);
  }
}

template <class V, class BinOf>
void launch_accumulate(V* out, int64_t n, int64_t bins, BinOf bin_of, cudaStream_t stream) {
  const bool privatized = bins <= kSharedBins;
  unsigned grid = blocks_for(n);
  if (privatized && grid > kSharedBlocks) grid = kSharedBlocks;
  const size_t shared = privatized ? static_cast<size_t>(bins) * sizeof(V) : 0;
  accumulate_kernel<V, BinOf><<<grid, kThreads, shared, stream>>>(out, n, bins, privatized, bin_of);
}

template <class T>
__global__ void counts_to_kernel(T* out, const Count* counts, int64_t bins) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < bins;
       b += stride)
    out[b] = convert<T>(static_cast<acc_t<T>>(static_cast<double>(counts[b])));
}

flb_status cuda_status(const char* op, cudaError_t err) {
  if (err == cudaSuccess) return FLB_OK;
  return kernel_fail(FLB_ERROR, op, std::string("CUDA error: ") + cudaGetErrorString(err));
}

}  // namespace

flb_status bincount(void*, const flb_kernel_call* c) {
  if (c->n_tensors != 3 || !present(c, 0) || !present(c, 1))
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected [out, in, weights?]");
  const flb_tensor &out = c->tensors[0], &in = c->tensors[1];
  const bool weighted = present(c, 2);
  if (in.dtype != FLB_INT64 || !dense(in) || !dense(out) ||
      (weighted && (c->tensors[2].dtype != out.dtype || !dense(c->tensors[2]))) ||
      (!weighted && out.dtype != FLB_INT64) ||
      (out.dtype != FLB_INT64 && out.dtype != FLB_FLOAT32 && out.dtype != FLB_FLOAT64))
    return unsupported_dtypes(c);
  const int64_t n = numel(in), len = numel(out);
  if (len == 0) return FLB_OK;
  runtime::DeviceGuard guard(c->device_index);
  auto stream = static_cast<cudaStream_t>(c->stream);
  const size_t bytes = static_cast<size_t>(len) * (out.dtype == FLB_FLOAT32 ? 4 : 8);
  if (flb_status s = cuda_status(c->op, cudaMemsetAsync(out.data, 0, bytes, stream)); s != FLB_OK)
    return s;
  if (n == 0) return FLB_OK;
  const auto* idx = static_cast<const int64_t*>(in.data);
  if (!weighted) {  // int64 counts: the same bits as unsigned 64-bit ones
    launch_accumulate(static_cast<Count*>(out.data), n, len, CountOf{idx}, stream);
  } else if (out.dtype == FLB_FLOAT32) {
    const auto* w = static_cast<const float*>(c->tensors[2].data);
    launch_accumulate(static_cast<float*>(out.data), n, len, WeightOf<float>{idx, w}, stream);
  } else if (out.dtype == FLB_FLOAT64) {
    const auto* w = static_cast<const double*>(c->tensors[2].data);
    launch_accumulate(static_cast<double*>(out.data), n, len, WeightOf<double>{idx, w}, stream);
  } else {
    return unsupported_dtypes(c);
  }
  return launch_status(c->op);
}

flb_status histc(void*, const flb_kernel_call* c) {
  if (c->n_tensors != 2 || c->n_scalars != 2)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected [out, in], [lo, hi]");
  const flb_tensor &out = c->tensors[0], &in = c->tensors[1];
  if (in.dtype != FLB_FLOAT64 || !dense(in) || !dense(out)) return unsupported_dtypes(c);
  const double lo = c->scalars[0].real, hi = c->scalars[1].real;
  const int64_t bins = numel(out), n = numel(in);
  const double scale = static_cast<double>(bins) / (hi - lo);
  return with_float_dtype(c, out.dtype, [&](auto tag) -> flb_status {
    using T = decltype(tag);
    if (bins == 0) return FLB_OK;
    runtime::DeviceGuard guard(c->device_index);
    auto stream = static_cast<cudaStream_t>(c->stream);
    DeviceBuffer counts;
    const size_t bytes = static_cast<size_t>(bins) * sizeof(Count);
    if (flb_status s = counts.allocate(c->device_index, bytes, stream, c->op); s != FLB_OK)
      return s;
    if (flb_status s = cuda_status(c->op, cudaMemsetAsync(counts.get(), 0, bytes, stream));
        s != FLB_OK)
      return s;
    if (n > 0)
      launch_accumulate(counts.get<Count>(), n, bins,
                        HistcBinOf{static_cast<const double*>(in.data), lo, hi, scale, bins},
                        stream);
    counts_to_kernel<T><<<blocks_for(bins), kThreads, 0, stream>>>(static_cast<T*>(out.data),
                                                                   counts.get<Count>(), bins);
    return launch_status(c->op);
  });
}

}  // namespace flambeau::cuda::kernels
