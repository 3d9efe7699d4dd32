// searchsorted: tensors [out (rows, m) int64 or int32, seq (rows or 1, s), values
// (rows, m), sorter? (seq's shape, int64)]; ints [right]. Contiguous. One thread
// per value runs the CPU's binary search in the sorting order (NaN above every
// number; 16-bit floats compare as float, bool as uint8). A sorter index outside
// [0, s) fails with the CPU's message (the first one in order), checked before
// any search.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/device_buffer.h"
#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"
#include "backend/kernels/select_math.h"
#include "backend/state.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

template <class T>
using search_key_t = std::conditional_t<std::is_same_v<T, bool>, uint8_t, acc_t<T>>;

__global__ void check_sorter_kernel(const int64_t* sorter, int64_t n, int64_t s,
                                    unsigned long long* first_bad) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    if (sorter[i] < 0 || sorter[i] >= s) atomicMin(first_bad, static_cast<unsigned long long>(i));
}

template <class T, class I>
__global__ void searchsorted_kernel(I* out, const T* seq, const T* values, const int64_t* sorter,
                                    int64_t total, int64_t m, int64_t s, bool shared, bool right) {
  using K = search_key_t<T>;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += step) {
    const int64_t r = shared ? 0 : e / m;
    const T* row = seq + r * s;
    const int64_t* perm = sorter ? sorter + r * s : nullptr;
    const K key = convert<K>(values[e]);
    out[e] = static_cast<I>(search_position<K>(
        key, s, right, [&](int64_t q) { return convert<K>(row[perm ? perm[q] : q]); }));
  }
}

// FLB_OK, or the CPU's message for the first sorter index out of range (one sync).
flb_status check_sorter(const flb_kernel_call* c, const int64_t* sorter, int64_t n, int64_t s) {
  auto stream = static_cast<cudaStream_t>(c->stream);
  DeviceBuffer first_bad;
  if (flb_status st = first_bad.allocate(c->device_index, 8, stream, c->op); st != FLB_OK)
    return st;
  cudaMemsetAsync(first_bad.get(), 0xFF, 8, stream);
  check_sorter_kernel<<<blocks_for(n), kThreads, 0, stream>>>(sorter, n, s,
                                                              first_bad.get<unsigned long long>());
  if (flb_status st = launch_status(c->op); st != FLB_OK) return st;
  unsigned long long at = ~0ull;
  int64_t bad = 0;
  cudaError_t err = cudaMemcpyAsync(&at, first_bad.get(), 8, cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  if (err == cudaSuccess && at != ~0ull) {
    err = cudaMemcpyAsync(&bad, sorter + at, 8, cudaMemcpyDeviceToHost, stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  }
  if (err != cudaSuccess)
    return kernel_fail(FLB_ERROR, c->op, std::string("CUDA error: ") + cudaGetErrorString(err));
  if (at == ~0ull) return FLB_OK;
  return backend::fail(FLB_ERROR, "searchsorted(): sorter index " + std::to_string(bad) +
                                      " is out of range for a sequence of length " +
                                      std::to_string(s));
}

}  // namespace

flb_status searchsorted(void*, const flb_kernel_call* c) {
  if (c->n_tensors < 3 || c->n_ints < 1)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors or arguments");
  const flb_tensor &out = c->tensors[0], &seq = c->tensors[1], &values = c->tensors[2];
  const bool has_sorter = present(c, 3);
  if (seq.ndim != 2 || values.ndim != 2 || seq.dtype != values.dtype ||
      (out.dtype != FLB_INT64 && out.dtype != FLB_INT32) ||
      (has_sorter && c->tensors[3].dtype != FLB_INT64))
    return unsupported_dtypes(c);
  const int64_t rows = values.sizes[0], m = values.sizes[1], s = seq.sizes[1];
  const bool shared = seq.sizes[0] == 1, right = c->ints[0] != 0;
  runtime::DeviceGuard guard(c->device_index);
  const int64_t* sorter = has_sorter ? static_cast<const int64_t*>(c->tensors[3].data) : nullptr;
  if (has_sorter && numel(c->tensors[3]) > 0)
    if (flb_status st = check_sorter(c, sorter, numel(c->tensors[3]), s); st != FLB_OK) return st;
  const int64_t total = rows * m;
  if (total == 0) return FLB_OK;
  auto stream = static_cast<cudaStream_t>(c->stream);
  const bool known = dispatch(values.dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto* sq = static_cast<const T*>(seq.data);
    const auto* v = static_cast<const T*>(values.data);
    if (out.dtype == FLB_INT32)
      searchsorted_kernel<T, int32_t><<<blocks_for(total), kThreads, 0, stream>>>(
          static_cast<int32_t*>(out.data), sq, v, sorter, total, m, s, shared, right);
    else
      searchsorted_kernel<T, int64_t><<<blocks_for(total), kThreads, 0, stream>>>(
          static_cast<int64_t*>(out.data), sq, v, sorter, total, m, s, shared, right);
  });
  if (!known) return unsupported_dtypes(c);
  return launch_status(c->op);
}

}  // namespace flambeau::cuda::kernels
