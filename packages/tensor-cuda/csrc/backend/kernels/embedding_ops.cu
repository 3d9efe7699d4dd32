// embedding_bag and the embedding backward on the floating dtypes (16-bit floats
// accumulate in float, as the CPU); every tensor contiguous, indices int64 checked
// in range by the core's frontends:
//   embedding_bag: tensors [out (bags, d), offset2bag (m), bag_size (bags),
//     max_indices ((bags, d) for max, else untouched), weight (rows, d), indices (m),
//     starts (bags + 1), per_sample_weights?]; ints [mode (0 sum, 1 mean, 2 max),
//     padding_idx (-1: none)]. One thread per (bag, column) walks the bag in order:
//     the CPU's sums and maxima (NaN wins, the first max kept).
//   embedding_dense_backward: tensors [grad_weight (rows, d), grad, indices,
//     offset2bag?, bag_size?, max_indices?, per_sample_weights?]; ints [mode,
//     scale_grad_by_freq, padding_idx]. Sum and mean sort the positions by index
//     (CUB's stable radix sort) and one thread per (index, column) adds its
//     positions in order: the CPU's sums, deterministic. Max scatters through
//     max_indices with atomics (the operator table marks _embedding_bag_backward
//     with mode=2 nondeterministic on cuda).
#include <cuda_runtime_api.h>

#include <climits>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <type_traits>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/device_buffer.h"
#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

constexpr int64_t kSum = 0, kMean = 1, kMax = 2;

template <class T>
__global__ void embedding_bag_kernel(T* out, int64_t* offset2bag, int64_t* bag_size,
                                     int64_t* max_indices, const T* weight, const int64_t* indices,
                                     const int64_t* starts, const T* psw, int64_t bags, int64_t d,
                                     bool has_columns, int64_t mode, int64_t padding_idx) {
  using A = acc_t<T>;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < bags * d;
       e += step) {
    const int64_t b = e / d, j = e - b * d;
    A acc = mode == kMax ? A(-INFINITY) : A(0);
    int64_t best = -1, count = 0;
    for (int64_t i = starts[b]; i < starts[b + 1]; ++i) {
      if (j == 0) offset2bag[i] = b;
      const int64_t r = indices[i];
      if (r == padding_idx) continue;
      ++count;
      if (!has_columns) continue;  // d == 0: only offset2bag and bag_size
      const A v = convert<A>(weight[r * d + j]);
      if (mode == kMax) {
        if (best < 0 || v > acc || v != v) {
          acc = v;
          best = r;
        }
      } else {
        acc += (psw ? convert<A>(psw[i]) : A(1)) * v;
      }
    }
    if (j == 0) bag_size[b] = count;
    if (!has_columns) continue;
    if (mode == kMean && count > 0) acc /= static_cast<A>(count);
    if (mode == kMax) {
      if (best < 0) acc = A(0);
      max_indices[e] = best;
    }
    out[e] = convert<T>(acc);
  }
}

__global__ void iota_kernel(int64_t* p, int64_t n) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    p[i] = i;
}

// One thread per (sorted position p, column j) where p starts a run of one index:
// the run's positions (in index order) add into grad_weight's row.
template <class T>
__global__ void embedding_backward_sorted_kernel(T* grad_weight, const T* grad,
                                                 const uint64_t* keys, const int64_t* positions,
                                                 const int64_t* offset2bag, const int64_t* bag_size,
                                                 const T* psw, int64_t m, int64_t d, int64_t mode,
                                                 bool scale_by_freq, int64_t padding_idx) {
  using A = acc_t<T>;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < m * d;
       e += step) {
    const int64_t p = e / d, j = e - p * d;
    if (p > 0 && keys[p] == keys[p - 1]) continue;
    const int64_t r = static_cast<int64_t>(keys[p]);
    if (r == padding_idx) continue;
    int64_t end = p + 1;
    while (end < m && keys[end] == keys[p]) ++end;
    A acc = 0;
    for (int64_t q = p; q < end; ++q) {
      const int64_t i = positions[q];
      const int64_t bag = offset2bag ? offset2bag[i] : i;
      A s = psw ? convert<A>(psw[i]) : A(1);
      if (mode == kMean) s /= static_cast<A>(bag_size[bag]);
      if (scale_by_freq) s /= static_cast<A>(end - p);
      acc += s * convert<A>(grad[bag * d + j]);
    }
    grad_weight[r * d + j] = convert<T>(acc);
  }
}

// max: grad rows scatter to the rows max_indices names (atomics into acc, of the
// accumulation type A).
template <class T, class A>
__global__ void embedding_backward_max_kernel(A* acc, const T* grad, const int64_t* max_indices,
                                              int64_t n, int64_t d, int64_t padding_idx) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += step) {
    const int64_t r = max_indices[e];
    if (r >= 0 && r != padding_idx) atomicAdd(acc + r * d + (e % d), convert<A>(grad[e]));
  }
}

template <class T, class A>
__global__ void store_kernel(T* out, const A* acc, int64_t n) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    out[i] = convert<T>(acc[i]);
}

// Bits needed for keys in [0, rows).
int key_bits(int64_t rows) {
  int bits = 1;
  while (bits < 63 && (int64_t(1) << bits) < rows) ++bits;
  return bits;
}

template <class T>
flb_status embedding_backward_sorted(const flb_kernel_call* c, int64_t rows, int64_t d,
                                     int64_t mode, bool scale_by_freq, int64_t padding_idx) {
  const flb_tensor& indices = c->tensors[2];
  const int64_t m = numel(indices);
  if (m == 0 || d == 0) return FLB_OK;
  if (m > INT_MAX) return kernel_fail(FLB_NOT_IMPLEMENTED, c->op, "more than 2**31 - 1 indices");
  auto stream = static_cast<cudaStream_t>(c->stream);
  DeviceBuffer keys_out, positions, sorted_positions;
  const size_t bytes = static_cast<size_t>(m) * 8;
  for (DeviceBuffer* b : {&keys_out, &positions, &sorted_positions})
    if (flb_status s = b->allocate(c->device_index, bytes, stream, c->op); s != FLB_OK) return s;
  iota_kernel<<<blocks_for(m), kThreads, 0, stream>>>(positions.get<int64_t>(), m);
  // Indices are in [0, rows), so their int64 bits order as unsigned keys.
  const auto* keys_in = static_cast<const uint64_t*>(indices.data);
  const int bits = key_bits(rows);
  size_t temp_bytes = 0;
  cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys_in, keys_out.get<uint64_t>(),
                                  positions.get<const int64_t>(), sorted_positions.get<int64_t>(),
                                  static_cast<int>(m), 0, bits, stream);
  DeviceBuffer temp;
  if (flb_status s = temp.allocate(c->device_index, temp_bytes, stream, c->op); s != FLB_OK)
    return s;
  cub::DeviceRadixSort::SortPairs(temp.get(), temp_bytes, keys_in, keys_out.get<uint64_t>(),
                                  positions.get<const int64_t>(), sorted_positions.get<int64_t>(),
                                  static_cast<int>(m), 0, bits, stream);
  embedding_backward_sorted_kernel<T><<<blocks_for(m * d), kThreads, 0, stream>>>(
      static_cast<T*>(c->tensors[0].data), static_cast<const T*>(c->tensors[1].data),
      keys_out.get<const uint64_t>(), sorted_positions.get<const int64_t>(),
      optional_data<int64_t>(c, 3), optional_data<int64_t>(c, 4), optional_data<T>(c, 6), m, d,
      mode, scale_by_freq, padding_idx);
  return launch_status(c->op);
}

template <class T>
flb_status embedding_backward_max(const flb_kernel_call* c, int64_t rows, int64_t d,
                                  int64_t padding_idx) {
  using A = acc_t<T>;
  if (!present(c, 5)) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing max_indices");
  const int64_t n = numel(c->tensors[5]);
  if (n == 0) return FLB_OK;
  auto stream = static_cast<cudaStream_t>(c->stream);
  T* grad_weight = static_cast<T*>(c->tensors[0].data);
  DeviceBuffer acc_buffer;  // 16-bit floats add in float, then round once
  A* acc = reinterpret_cast<A*>(grad_weight);
  if constexpr (!std::is_same_v<A, T>) {
    const size_t bytes = static_cast<size_t>(rows * d) * sizeof(A);
    if (flb_status s = acc_buffer.allocate(c->device_index, bytes, stream, c->op); s != FLB_OK)
      return s;
    acc = acc_buffer.get<A>();
    cudaMemsetAsync(acc, 0, bytes, stream);
  }
  embedding_backward_max_kernel<T, A><<<blocks_for(n), kThreads, 0, stream>>>(
      acc, static_cast<const T*>(c->tensors[1].data),
      static_cast<const int64_t*>(c->tensors[5].data), n, d, padding_idx);
  if constexpr (!std::is_same_v<A, T>)
    store_kernel<T, A><<<blocks_for(rows * d), kThreads, 0, stream>>>(grad_weight, acc, rows * d);
  return launch_status(c->op);
}

}  // namespace

flb_status embedding_bag(void*, const flb_kernel_call* c) {
  if (c->n_tensors < 7 || c->n_ints < 2)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors or arguments");
  const flb_tensor &out = c->tensors[0], &weight = c->tensors[4];
  const int64_t mode = c->ints[0], padding_idx = c->ints[1];
  if (weight.ndim != 2 || weight.dtype != out.dtype || c->tensors[5].dtype != FLB_INT64 ||
      c->tensors[6].dtype != FLB_INT64 || (present(c, 7) && c->tensors[7].dtype != out.dtype))
    return unsupported_dtypes(c);
  if (mode < kSum || mode > kMax) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "unknown mode");
  const int64_t d = weight.sizes[1], bags = numel(c->tensors[2]);
  return with_float_dtype(c, out.dtype, [&](auto tag) {
    using T = decltype(tag);
    runtime::DeviceGuard guard(c->device_index);
    auto stream = static_cast<cudaStream_t>(c->stream);
    const int64_t n = bags * (d > 0 ? d : 1);  // d == 0 still writes offset2bag, bag_size
    if (n > 0)
      embedding_bag_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
          static_cast<T*>(out.data), static_cast<int64_t*>(c->tensors[1].data),
          static_cast<int64_t*>(c->tensors[2].data),
          mode == kMax ? static_cast<int64_t*>(c->tensors[3].data) : nullptr,
          static_cast<const T*>(weight.data), static_cast<const int64_t*>(c->tensors[5].data),
          static_cast<const int64_t*>(c->tensors[6].data), optional_data<T>(c, 7), bags,
          d > 0 ? d : 1, d > 0, mode, padding_idx);
    return launch_status(c->op);
  });
}

flb_status embedding_dense_backward(void*, const flb_kernel_call* c) {
  if (c->n_tensors < 3 || c->n_ints < 3)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors or arguments");
  const flb_tensor &grad_weight = c->tensors[0], &grad = c->tensors[1];
  const int64_t mode = c->ints[0], padding_idx = c->ints[2];
  const bool scale_by_freq = c->ints[1] != 0;
  if (grad_weight.ndim != 2 || grad.dtype != grad_weight.dtype ||
      c->tensors[2].dtype != FLB_INT64 || (present(c, 6) && c->tensors[6].dtype != grad.dtype))
    return unsupported_dtypes(c);
  if (mode < kSum || mode > kMax) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "unknown mode");
  const int64_t rows = grad_weight.sizes[0], d = grad_weight.sizes[1];
  return with_float_dtype(c, grad.dtype, [&](auto tag) {
    using T = decltype(tag);
    runtime::DeviceGuard guard(c->device_index);
    // Rows no index reaches are zero, as the CPU's overwrite leaves them.
    cudaMemsetAsync(grad_weight.data, 0, static_cast<size_t>(rows * d) * sizeof(T),
                    static_cast<cudaStream_t>(c->stream));
    if (mode == kMax) return embedding_backward_max<T>(c, rows, d, padding_idx);
    return embedding_backward_sorted<T>(c, rows, d, mode, scale_by_freq, padding_idx);
  });
}

}  // namespace flambeau::cuda::kernels
