// Sorting along rows of a contiguous [rows, n] input (the core moves the dim last):
//   sort: tensors [values, indices, in]; ints [descending]
//   topk: tensors [values, indices, in]; ints [k, largest, sorted] (values, indices [rows, k])
// Elements become unsigned keys ordered as PyTorch orders numbers (-0.0 equal to
// +0.0, every NaN above +inf; descending sorts complement the keys), and CUB's
// radix sort, which is stable, orders (key, index) pairs: equal keys keep index
// order, as the CPU's comparator breaks ties, so both devices give the same
// indices. Rows shorter than 2**16 are sorted together by the segmented sort (in
// passes of at most 2**31 - 1 elements, its int count); longer rows one at a time
// by the device-wide sort. topk sorts whole rows and keeps the first k, so its
// output is always sorted (allowed when sorted=False, as on the CPU).
#include <cuda_runtime_api.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <type_traits>

#include "backend/kernels/device_buffer.h"
#include "backend/kernels/dtypes.cuh"
#include "backend/kernels/index_math.h"
#include "backend/kernels/kernels.h"
#include "backend/kernels/launch.cuh"
#include "backend/kernels/select_math.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

constexpr int64_t kLongRow = int64_t(1) << 16;

// The unsigned key type and key kind of each element type.
template <class T>
struct KeyOf {
  using U = std::conditional_t<
      sizeof(T) == 1, uint8_t,
      std::conditional_t<sizeof(T) == 2, uint16_t,
                         std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  static constexpr KeyKind kind = std::is_same_v<T, __half>          ? KeyKind::kFloat16
                                  : std::is_same_v<T, __nv_bfloat16> ? KeyKind::kBFloat16
                                  : std::is_same_v<T, float>         ? KeyKind::kFloat32
                                  : std::is_same_v<T, double>        ? KeyKind::kFloat64
                                  : std::is_signed_v<T>              ? KeyKind::kSigned
                                                                     : KeyKind::kUnsigned;
};

template <class T>
__device__ inline typename KeyOf<T>::U key_of(T v, bool descending) {
  using U = typename KeyOf<T>::U;
  U bits;
  if constexpr (std::is_same_v<T, bool>) {
    bits = v ? 1 : 0;
  } else {
    memcpy(&bits, &v, sizeof(T));
  }
  return directed_key<U>(order_key<U>(bits, KeyOf<T>::kind), descending);
}

template <class T, class U>
__global__ void make_keys_kernel(const T* in, U* keys, int64_t* index, int64_t total, int64_t n,
                                 bool descending) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += step) {
    keys[i] = key_of(in[i], descending);
    index[i] = i % n;
  }
}

__global__ void row_offsets_kernel(int* offsets, int64_t count, int64_t n) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += step)
    offsets[i] = static_cast<int>(i * n);
}

// values/indices [rows, k] from the first k sorted positions of each row.
template <class T>
__global__ void take_sorted_kernel(const T* in, const int64_t* sorted, T* values, int64_t* indices,
                                   int64_t rows, int64_t n, int64_t k) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows * k;
       i += step) {
    const int64_t r = i / k;
    const int64_t src = sorted[r * n + (i - r * k)];
    values[i] = in[r * n + src];
    indices[i] = src;
  }
}

bool is_dense(const flb_tensor& t) {
  int64_t expected = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.sizes[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.sizes[d];
  }
  return true;
}

// Sorts the (key, index) pairs of every row: keys/index in, keys_out/sorted out.
template <class U>
flb_status sort_pairs(const flb_kernel_call* c, const U* keys, U* keys_out, const int64_t* index,
                      int64_t* sorted, int64_t rows, int64_t n) {
  auto stream = static_cast<cudaStream_t>(c->stream);
  constexpr int bits = static_cast<int>(sizeof(U) * 8);
  if (n >= kLongRow) {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t at = r * n;
      size_t bytes = 0;
      cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys + at, keys_out + at, index + at,
                                      sorted + at, n, 0, bits, stream);
      DeviceBuffer temp;
      if (flb_status s = temp.allocate(c->device_index, bytes, stream, c->op); s != FLB_OK)
        return s;
      cub::DeviceRadixSort::SortPairs(temp.get(), bytes, keys + at, keys_out + at, index + at,
                                      sorted + at, n, 0, bits, stream);
    }
    return launch_status(c->op);
  }
  const int64_t per_pass = rows_per_pass(rows, n, INT_MAX);
  DeviceBuffer offsets;
  if (flb_status s = offsets.allocate(c->device_index, (per_pass + 1) * sizeof(int), stream, c->op);
      s != FLB_OK)
    return s;
  row_offsets_kernel<<<blocks_for(per_pass + 1), kThreads, 0, stream>>>(offsets.get<int>(),
                                                                        per_pass + 1, n);
  for (int64_t r0 = 0; r0 < rows; r0 += per_pass) {
    const int64_t count = rows - r0 < per_pass ? rows - r0 : per_pass, at = r0 * n;
    const int items = static_cast<int>(count * n), segments = static_cast<int>(count);
    const int* begin = offsets.get<int>();
    size_t bytes = 0;
    cub::DeviceSegmentedRadixSort::SortPairs(nullptr, bytes, keys + at, keys_out + at, index + at,
                                             sorted + at, items, segments, begin, begin + 1, 0,
                                             bits, stream);
    DeviceBuffer temp;
    if (flb_status s = temp.allocate(c->device_index, bytes, stream, c->op); s != FLB_OK) return s;
    cub::DeviceSegmentedRadixSort::SortPairs(temp.get(), bytes, keys + at, keys_out + at,
                                             index + at, sorted + at, items, segments, begin,
                                             begin + 1, 0, bits, stream);
  }
  return launch_status(c->op);
}

// Sorts every row of `in` ([rows, n] of T) in the order `descending`: the sorted
// keys into keys_out and each sorted position's index in its row into sorted.
template <class T>
flb_status sort_row_keys(const flb_kernel_call* c, const T* in, int64_t rows, int64_t n,
                         bool descending, DeviceBuffer* keys_out, DeviceBuffer* sorted) {
  using U = typename KeyOf<T>::U;
  const int64_t total = rows * n;
  if (n > INT_MAX)
    return kernel_fail(FLB_NOT_IMPLEMENTED, c->op, "rows of more than 2**31 - 1 elements");
  auto stream = static_cast<cudaStream_t>(c->stream);
  DeviceBuffer keys, index;
  const size_t key_bytes = static_cast<size_t>(total) * sizeof(U);
  const size_t index_bytes = static_cast<size_t>(total) * sizeof(int64_t);
  for (auto [buffer, bytes] : {std::pair{&keys, key_bytes}, std::pair{keys_out, key_bytes},
                               std::pair{&index, index_bytes}, std::pair{sorted, index_bytes}})
    if (flb_status s = buffer->allocate(c->device_index, bytes, stream, c->op); s != FLB_OK)
      return s;
  make_keys_kernel<T, U><<<blocks_for(total), kThreads, 0, stream>>>(
      in, keys.get<U>(), index.get<int64_t>(), total, n, descending);
  return sort_pairs<U>(c, keys.get<U>(), keys_out->get<U>(), index.get<int64_t>(),
                       sorted->get<int64_t>(), rows, n);
}

// The first k of every row of tensors[2] in the order `descending`, into tensors[0..1].
template <class T>
flb_status sorted_rows(const flb_kernel_call* c, bool descending, int64_t k) {
  const flb_tensor &values = c->tensors[0], &indices = c->tensors[1], &in = c->tensors[2];
  const int64_t rows = in.sizes[0], n = in.sizes[1];
  if (rows * n == 0 || k == 0) return FLB_OK;
  runtime::DeviceGuard guard(c->device_index);
  auto stream = static_cast<cudaStream_t>(c->stream);
  DeviceBuffer keys_out, sorted;
  if (flb_status s = sort_row_keys<T>(c, static_cast<const T*>(in.data), rows, n, descending,
                                      &keys_out, &sorted);
      s != FLB_OK)
    return s;
  take_sorted_kernel<T><<<blocks_for(rows * k), kThreads, 0, stream>>>(
      static_cast<const T*>(in.data), sorted.get<int64_t>(), static_cast<T*>(values.data),
      static_cast<int64_t*>(indices.data), rows, n, k);
  return launch_status(c->op);
}

// kthvalue: values/indices [rows, 1] of the element select_sorted_position picks.
template <class T, class U>
__global__ void select_kernel(const T* in, const U* keys, const int64_t* sorted, T* values,
                              int64_t* indices, int64_t rows, int64_t n, int64_t k,
                              SelectWhat what) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows;
       r += step) {
    const bool floating = KeyOf<T>::kind >= KeyKind::kFloat16;
    const int64_t finite =
        floating ? count_before_key<U>(keys + r * n, n, static_cast<U>(~U(0))) : n;
    const int64_t at = sorted[r * n + select_sorted_position(n, finite, k, what)];
    values[r] = in[r * n + at];
    indices[r] = at;
  }
}

// mode: values/indices [rows, 1], one thread per sorted row.
template <class T, class U>
__global__ void mode_kernel(const T* in, const U* keys, const int64_t* sorted, T* values,
                            int64_t* indices, int64_t rows, int64_t n) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows;
       r += step) {
    const int64_t at = sorted[r * n + mode_sorted_position<U>(keys + r * n, n)];
    values[r] = in[r * n + at];
    indices[r] = at;
  }
}

// Sorts the rows of tensors[2] ascending and runs the picking kernel `pick`.
template <class T, class Pick>
flb_status pick_from_sorted_rows(const flb_kernel_call* c, Pick&& pick) {
  using U = typename KeyOf<T>::U;
  const flb_tensor& in = c->tensors[2];
  const int64_t rows = in.sizes[0], n = in.sizes[1];
  if (rows == 0) return FLB_OK;
  if (n == 0) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "empty rows");
  runtime::DeviceGuard guard(c->device_index);
  DeviceBuffer keys_out, sorted;
  if (flb_status s =
          sort_row_keys<T>(c, static_cast<const T*>(in.data), rows, n, false, &keys_out, &sorted);
      s != FLB_OK)
    return s;
  pick(static_cast<const T*>(in.data), keys_out.get<const U>(), sorted.get<const int64_t>(),
       static_cast<T*>(c->tensors[0].data), static_cast<int64_t*>(c->tensors[1].data), rows, n,
       static_cast<cudaStream_t>(c->stream));
  return launch_status(c->op);
}

// values and indices [rows, 1] (any rank as long as they hold rows elements).
flb_status check_picked_rows(const flb_kernel_call* c, int n_ints) {
  if (c->n_tensors < 3 || c->n_ints < n_ints)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors or arguments");
  const flb_tensor &values = c->tensors[0], &indices = c->tensors[1], &in = c->tensors[2];
  if (in.ndim != 2 || !is_dense(in) || !is_dense(values) || !is_dense(indices))
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected contiguous [rows, n] tensors");
  if (values.dtype != in.dtype || indices.dtype != FLB_INT64) return unsupported_dtypes(c);
  if (numel(values) != in.sizes[0] || numel(indices) != in.sizes[0])
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected one value per row");
  return FLB_OK;
}

flb_status check_rows(const flb_kernel_call* c, int n_ints) {
  if (c->n_tensors < 3 || c->n_ints < n_ints)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors or arguments");
  const flb_tensor &values = c->tensors[0], &indices = c->tensors[1], &in = c->tensors[2];
  if (in.ndim != 2 || values.ndim != 2 || indices.ndim != 2)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected [rows, n] tensors");
  if (values.dtype != in.dtype || indices.dtype != FLB_INT64) return unsupported_dtypes(c);
  if (!is_dense(values) || !is_dense(indices) || !is_dense(in))
    return kernel_fail(FLB_NOT_IMPLEMENTED, c->op, "expected contiguous rows");
  return FLB_OK;
}

template <class F>
flb_status with_dtype(const flb_kernel_call* c, F&& f) {
  flb_status status = FLB_OK;
  const bool ok = dispatch(c->tensors[2].dtype, [&](auto tag) { status = f(tag); });
  return ok ? status : unsupported_dtypes(c);
}

}  // namespace

flb_status sort(void*, const flb_kernel_call* c) {
  if (flb_status s = check_rows(c, 1); s != FLB_OK) return s;
  const bool descending = c->ints[0] != 0;
  return with_dtype(c, [&](auto tag) {
    return sorted_rows<decltype(tag)>(c, descending, c->tensors[2].sizes[1]);
  });
}

flb_status topk(void*, const flb_kernel_call* c) {
  if (flb_status s = check_rows(c, 3); s != FLB_OK) return s;
  const int64_t k = c->ints[0];
  const bool largest = c->ints[1] != 0;
  if (k < 0 || k > c->tensors[2].sizes[1] || c->tensors[0].sizes[1] != k)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "k out of range");
  return with_dtype(c, [&](auto tag) { return sorted_rows<decltype(tag)>(c, largest, k); });
}

flb_status kthvalue(void*, const flb_kernel_call* c) {
  if (flb_status s = check_picked_rows(c, 2); s != FLB_OK) return s;
  const int64_t k = c->ints[0], n = c->tensors[2].sizes[1];
  if (c->ints[1] < 0 || c->ints[1] > static_cast<int64_t>(SelectWhat::kNanMedian))
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "unknown selection");
  const auto what = static_cast<SelectWhat>(c->ints[1]);
  if (what == SelectWhat::kKth && (k < 0 || k >= n))
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "k out of range");
  return with_dtype(c, [&](auto tag) {
    using T = decltype(tag);
    return pick_from_sorted_rows<T>(
        c, [&](const T* in, const auto* keys, const int64_t* sorted, T* values, int64_t* indices,
               int64_t rows, int64_t n, cudaStream_t stream) {
          using U = std::remove_cv_t<std::remove_pointer_t<decltype(keys)>>;
          select_kernel<T, U><<<blocks_for(rows), kThreads, 0, stream>>>(in, keys, sorted, values,
                                                                         indices, rows, n, k, what);
        });
  });
}

flb_status mode(void*, const flb_kernel_call* c) {
  if (flb_status s = check_picked_rows(c, 0); s != FLB_OK) return s;
  return with_dtype(c, [&](auto tag) {
    using T = decltype(tag);
    return pick_from_sorted_rows<T>(c, [&](const T* in, const auto* keys, const int64_t* sorted,
                                           T* values, int64_t* indices, int64_t rows, int64_t n,
                                           cudaStream_t stream) {
      using U = std::remove_cv_t<std::remove_pointer_t<decltype(keys)>>;
      mode_kernel<T, U>
          <<<blocks_for(rows), kThreads, 0, stream>>>(in, keys, sorted, values, indices, rows, n);
    });
  });
}

}  // namespace flambeau::cuda::kernels
