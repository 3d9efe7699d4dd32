// Indexing kernels (the core's frontends reduce index_select, take, x[idx],
// index_add, index_copy, index_fill, scatter_add, scatter_reduce... to these):
//   gather, index:   tensors [out, src, index]; structs [flb_index_spec]
//                    out[i] = src[i + index[i] * spec.stride] (src stride 0 along the dim)
//   scatter, index_put: tensors [dst, values, index]; ints [mode]; structs [spec]
//                    dst[i + index[i] * spec.stride] (op)= values[i]
//   _index_offsets:  tensors [acc, index]; structs [spec]: acc += index * spec.stride
//   masked_fill:     tensors [dst, mask (bool, broadcast)]; scalars [value]
//   embedding:       tensors [out, weight (contiguous 2-d), indices (contiguous int64)]
// Indices are int64; gathers move raw elements (only the item size matters).
// Scatters with a combining mode update dst with atomics, so duplicate indices
// combine in an unspecified order (the operator table marks those operators
// nondeterministic on cuda); plain assignment with duplicates keeps one of them.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/index_checks.cuh"
#include "backend/kernels/index_math.h"
#include "backend/kernels/kernels.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

__device__ inline int64_t load_index(const char* p) { return *reinterpret_cast<const int64_t*>(p); }

// ---- gather -----------------------------------------------------------------

template <class W>
__global__ void gather_kernel(StridedIndex<3> ix, char* out, const char* src, const char* index,
                              int64_t n, int64_t step_bytes, int64_t size, bool allow_negative,
                              BadIndexRecord* bad) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[3];
    ix.offsets(i, off);
    const int64_t k = load_index(index + off[2]);
    int64_t pos;
    if (!resolve_index(k, size, allow_negative, &pos)) {
      record_bad_index(bad, k);
      continue;
    }
    *reinterpret_cast<W*>(out + off[0]) =
        *reinterpret_cast<const W*>(src + off[1] + pos * step_bytes);
  }
}

// The index over [out/dst, src/values, index] (element sizes item, item, 8).
flb_status three_operand_index(const flb_kernel_call* c, int64_t item, StridedIndex<3>* ix) {
  if (c->n_tensors < 3) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "too few tensors");
  const flb_tensor& t0 = c->tensors[0];
  const int64_t* strides[3];
  for (int k = 0; k < 3; ++k) {
    if (c->tensors[k].ndim != t0.ndim)
      return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "ranks differ");
    strides[k] = c->tensors[k].strides;
  }
  const int64_t items[3] = {item, item, 8};
  if (!make_index<3>(t0.ndim, t0.sizes, strides, items, ix))
    return kernel_fail(FLB_NOT_IMPLEMENTED, c->op, "more than 16 non-mergeable dimensions");
  return FLB_OK;
}

}  // namespace

flb_status gather(void*, const flb_kernel_call* c) {
  const auto* spec = struct_arg<flb_index_spec>(c, 0);
  if (spec == nullptr) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing index spec");
  const flb_tensor& out = c->tensors[0];
  const int64_t item = itemsize(out.dtype);
  StridedIndex<3> ix;
  if (flb_status s = three_operand_index(c, item, &ix); s != FLB_OK) return s;
  const int64_t n = numel(out);
  if (n == 0) return FLB_OK;
  runtime::DeviceGuard guard(c->device_index);
  BadIndexCheck check;
  if (flb_status s = check.prepare(c, *spec); s != FLB_OK) return s;
  auto stream = static_cast<cudaStream_t>(c->stream);
  const bool ok = dispatch_width(item, [&](auto tag) {
    using W = decltype(tag);
    gather_kernel<W><<<blocks_for(n), kThreads, 0, stream>>>(
        ix, static_cast<char*>(out.data), static_cast<const char*>(c->tensors[1].data),
        static_cast<const char*>(c->tensors[2].data), n, spec->stride * item, spec->size,
        spec->allow_negative != 0, check.record());
  });
  if (!ok) return unsupported_dtypes(c);
  return check.finish(c->op);
}

// ---- scatter / index_put ----------------------------------------------------

namespace {

// cur (op) v as the CPU's scatter: bool adds as `or` and multiplies as `and`,
// integers wrap, 16-bit floats compute in float; max/min let NaN win (the one
// already there first).
template <PutMode M, class T>
__device__ inline T put_combine(T cur, T v) {
  using A = acc_t<T>;
  if constexpr (std::is_same_v<T, bool> && M == PutMode::kAdd) {
    return cur || v;
  } else if constexpr (std::is_same_v<T, bool> && M == PutMode::kMultiply) {
    return cur && v;
  } else if constexpr (M == PutMode::kAdd || M == PutMode::kMultiply) {
    if constexpr (std::is_integral_v<T>) {
      const int64_t a = static_cast<int64_t>(cur), b = static_cast<int64_t>(v);
      return static_cast<T>(M == PutMode::kAdd ? wrapping_add(a, b) : wrapping_mul(a, b));
    } else {
      const A a = convert<A>(cur), b = convert<A>(v);
      return convert<T>(M == PutMode::kAdd ? A(a + b) : A(a * b));
    }
  } else {
    const A a = convert<A>(cur), b = convert<A>(v);
    if constexpr (!std::is_integral_v<A>) {
      if (a != a) return cur;
      if (b != b) return v;
    }
    const bool take = M == PutMode::kMax ? b > a : b < a;
    return take ? v : cur;
  }
}

template <class U, class T>
__device__ inline U to_bits(T v) {
  U u = 0;
  memcpy(&u, &v, sizeof(T));
  return u;
}

template <class T, class U>
__device__ inline T from_bits(U u) {
  T v;
  memcpy(&v, &u, sizeof(T));
  return v;
}

// *p = f(*p) atomically: a compare-and-swap loop on the element, or on the aligned
// 32-bit word holding it for 1- and 2-byte types.
template <class T, class F>
__device__ inline void atomic_apply(T* p, F f) {
  if constexpr (sizeof(T) == 8) {
    auto* w = reinterpret_cast<unsigned long long*>(p);
    unsigned long long old = *w, assumed;
    do {
      assumed = old;
      old = atomicCAS(w, assumed, to_bits<unsigned long long>(f(from_bits<T>(assumed))));
    } while (old != assumed);
  } else if constexpr (sizeof(T) == 4) {
    auto* w = reinterpret_cast<unsigned int*>(p);
    unsigned int old = *w, assumed;
    do {
      assumed = old;
      old = atomicCAS(w, assumed, to_bits<unsigned int>(f(from_bits<T>(assumed))));
    } while (old != assumed);
  } else {
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
    auto* w = reinterpret_cast<unsigned int*>(addr & ~uintptr_t(3));
    const unsigned int shift = static_cast<unsigned int>(addr & 3) * 8;
    const unsigned int low = sizeof(T) == 1 ? 0xFFu : 0xFFFFu;
    using U = std::conditional_t<sizeof(T) == 1, uint8_t, uint16_t>;
    unsigned int old = *w, assumed;
    do {
      assumed = old;
      const T cur = from_bits<T>(static_cast<U>((assumed >> shift) & low));
      const unsigned int bits = static_cast<unsigned int>(to_bits<U>(f(cur)));
      old = atomicCAS(w, assumed, (assumed & ~(low << shift)) | (bits << shift));
    } while (old != assumed);
  }
}

template <PutMode M, class T>
__device__ inline void atomic_put(T* p, T v) {
  if constexpr (M == PutMode::kAdd && (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                       std::is_same_v<T, int32_t>)) {
    atomicAdd(p, v);
  } else if constexpr (M == PutMode::kAdd && std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else {
    atomic_apply(p, [v](T cur) { return put_combine<M, T>(cur, v); });
  }
}

__global__ void check_indices_kernel(StridedIndex<3> ix, const char* index, int64_t n, int64_t size,
                                     bool allow_negative, BadIndexRecord* bad) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[3];
    ix.offsets(i, off);
    const int64_t k = load_index(index + off[2]);
    int64_t pos;
    if (!resolve_index(k, size, allow_negative, &pos)) record_bad_index(bad, k);
  }
}

// Writes values at dst + index * step (checked already); nothing when a bad index was found.
template <class T, PutMode M>
__global__ void put_kernel(StridedIndex<3> ix, char* dst, const char* values, const char* index,
                           int64_t n, int64_t step_bytes, int64_t size, const BadIndexRecord* bad) {
  if (bad != nullptr && *static_cast<volatile const unsigned int*>(&bad->found) != 0) return;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[3];
    ix.offsets(i, off);
    int64_t pos;
    resolve_index(load_index(index + off[2]), size, true, &pos);
    T* p = reinterpret_cast<T*>(dst + off[0] + pos * step_bytes);
    const T v = *reinterpret_cast<const T*>(values + off[1]);
    if constexpr (M == PutMode::kAssign)
      *p = v;
    else
      atomic_put<M, T>(p, v);
  }
}

template <class T, PutMode M>
void launch_put(const StridedIndex<3>& ix, const flb_kernel_call* c, int64_t n,
                const flb_index_spec& spec, const BadIndexRecord* bad) {
  put_kernel<T, M><<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(c->stream)>>>(
      ix, static_cast<char*>(c->tensors[0].data), static_cast<const char*>(c->tensors[1].data),
      static_cast<const char*>(c->tensors[2].data), n,
      spec.stride * static_cast<int64_t>(sizeof(T)), spec.size, bad);
}

}  // namespace

flb_status scatter(void*, const flb_kernel_call* c) {
  const auto* spec = struct_arg<flb_index_spec>(c, 0);
  if (spec == nullptr || c->n_ints < 1)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing index spec or mode");
  if (c->ints[0] < 0 || c->ints[0] > static_cast<int64_t>(PutMode::kMin))
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "unknown put mode");
  const auto mode = static_cast<PutMode>(c->ints[0]);
  const flb_tensor& dst = c->tensors[0];
  StridedIndex<3> ix;
  if (flb_status s = three_operand_index(c, itemsize(dst.dtype), &ix); s != FLB_OK) return s;
  if (c->tensors[1].dtype != dst.dtype) return unsupported_dtypes(c);
  const int64_t n = numel(dst);
  if (n == 0) return FLB_OK;
  runtime::DeviceGuard guard(c->device_index);
  BadIndexCheck check;
  if (flb_status s = check.prepare(c, *spec); s != FLB_OK) return s;
  auto stream = static_cast<cudaStream_t>(c->stream);
  if (check.record() != nullptr)
    check_indices_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
        ix, static_cast<const char*>(c->tensors[2].data), n, spec->size, spec->allow_negative != 0,
        check.record());
  const bool ok = dispatch(dst.dtype, [&](auto tag) {
    using T = decltype(tag);
    switch (mode) {
      case PutMode::kAssign:
        return launch_put<T, PutMode::kAssign>(ix, c, n, *spec, check.record());
      case PutMode::kAdd:
        return launch_put<T, PutMode::kAdd>(ix, c, n, *spec, check.record());
      case PutMode::kMultiply:
        return launch_put<T, PutMode::kMultiply>(ix, c, n, *spec, check.record());
      case PutMode::kMax:
        return launch_put<T, PutMode::kMax>(ix, c, n, *spec, check.record());
      case PutMode::kMin:
        return launch_put<T, PutMode::kMin>(ix, c, n, *spec, check.record());
    }
  });
  if (!ok) return unsupported_dtypes(c);
  return check.finish(c->op);
}

// ---- _index_offsets ---------------------------------------------------------

namespace {

__global__ void index_offsets_kernel(StridedIndex<2> ix, char* acc, const char* index, int64_t n,
                                     int64_t stride, int64_t size, bool allow_negative,
                                     BadIndexRecord* bad) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[2];
    ix.offsets(i, off);
    const int64_t k = load_index(index + off[1]);
    int64_t pos;
    if (!resolve_index(k, size, allow_negative, &pos)) {
      record_bad_index(bad, k);
      continue;
    }
    *reinterpret_cast<int64_t*>(acc + off[0]) += pos * stride;
  }
}

}  // namespace

flb_status index_offsets(void*, const flb_kernel_call* c) {
  const auto* spec = struct_arg<flb_index_spec>(c, 0);
  if (spec == nullptr || c->n_tensors < 2)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors or index spec");
  const flb_tensor &acc = c->tensors[0], &index = c->tensors[1];
  if (acc.dtype != FLB_INT64 || index.dtype != FLB_INT64 || index.ndim != acc.ndim)
    return unsupported_dtypes(c);
  const int64_t* strides[2] = {acc.strides, index.strides};
  const int64_t items[2] = {8, 8};
  StridedIndex<2> ix;
  if (!make_index<2>(acc.ndim, acc.sizes, strides, items, &ix))
    return kernel_fail(FLB_NOT_IMPLEMENTED, c->op, "more than 16 non-mergeable dimensions");
  const int64_t n = numel(acc);
  if (n == 0) return FLB_OK;
  runtime::DeviceGuard guard(c->device_index);
  BadIndexCheck check;
  if (flb_status s = check.prepare(c, *spec); s != FLB_OK) return s;
  index_offsets_kernel<<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(c->stream)>>>(
      ix, static_cast<char*>(acc.data), static_cast<const char*>(index.data), n, spec->stride,
      spec->size, spec->allow_negative != 0, check.record());
  return check.finish(c->op);
}

// ---- masked_fill --------------------------------------------------------------

namespace {

template <class T>
__global__ void masked_fill_kernel(StridedIndex<2> ix, char* dst, const char* mask, int64_t n,
                                   T value) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[2];
    ix.offsets(i, off);
    if (*reinterpret_cast<const bool*>(mask + off[1])) *reinterpret_cast<T*>(dst + off[0]) = value;
  }
}

}  // namespace

flb_status masked_fill(void*, const flb_kernel_call* c) {
  if (c->n_tensors < 2 || c->n_scalars < 1)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors or value");
  const flb_tensor &dst = c->tensors[0], &mask = c->tensors[1];
  if (mask.dtype != FLB_BOOL || mask.ndim != dst.ndim) return unsupported_dtypes(c);
  const int64_t* strides[2] = {dst.strides, mask.strides};
  const int64_t items[2] = {itemsize(dst.dtype), 1};
  StridedIndex<2> ix;
  if (!make_index<2>(dst.ndim, dst.sizes, strides, items, &ix))
    return kernel_fail(FLB_NOT_IMPLEMENTED, c->op, "more than 16 non-mergeable dimensions");
  const int64_t n = numel(dst);
  if (n == 0) return FLB_OK;
  runtime::DeviceGuard guard(c->device_index);
  auto stream = static_cast<cudaStream_t>(c->stream);
  const bool ok = dispatch(dst.dtype, [&](auto tag) {
    using T = decltype(tag);
    masked_fill_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
        ix, static_cast<char*>(dst.data), static_cast<const char*>(mask.data), n,
        scalar_as<T>(c->scalars[0]));
  });
  if (!ok) return unsupported_dtypes(c);
  return launch_status(c->op);
}

// ---- embedding ----------------------------------------------------------------

namespace {

template <class W>
__global__ void embedding_kernel(W* out, const W* weight, const int64_t* indices, int64_t n,
                                 int64_t width) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t row = i / width;
    out[i] = weight[indices[row] * width + (i - row * width)];
  }
}

}  // namespace

flb_status embedding(void*, const flb_kernel_call* c) {
  if (c->n_tensors < 3) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "too few tensors");
  const flb_tensor &out = c->tensors[0], &weight = c->tensors[1], &indices = c->tensors[2];
  if (weight.ndim != 2 || indices.dtype != FLB_INT64 || weight.dtype != out.dtype)
    return unsupported_dtypes(c);
  // The frontend passes contiguous weight and indices (checked in range) and a
  // fresh contiguous out.
  const int64_t width = weight.sizes[1], n = numel(indices) * width;
  if (n == 0) return FLB_OK;
  runtime::DeviceGuard guard(c->device_index);
  auto stream = static_cast<cudaStream_t>(c->stream);
  const bool ok = dispatch_width(itemsize(out.dtype), [&](auto tag) {
    using W = decltype(tag);
    embedding_kernel<W><<<blocks_for(n), kThreads, 0, stream>>>(
        static_cast<W*>(out.data), static_cast<const W*>(weight.data),
        static_cast<const int64_t*>(indices.data), n, width);
  });
  if (!ok) return unsupported_dtypes(c);
  return launch_status(c->op);
}

}  // namespace flambeau::cuda::kernels
