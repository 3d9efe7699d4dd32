// Reductions over dims through the helper of reduce.cuh: sum, mean, prod, amax,
// amin (tensors [out, in], ints [dims...]; out has in's dtype, as the core casts
// the input first) and argmax/argmin (tensors [values or absent, indices, in],
// ints [dim]: the first position of the max/min, NaN winning as on the CPU).
// Sums and products accumulate in double for float64, float for the other
// floats and int64 for integers. Every order is fixed: deterministic.
#include <cuda/std/limits>
#include <type_traits>

#include "backend/kernels/kernels.h"
#include "backend/kernels/reduce.cuh"

namespace flambeau::cuda::kernels {

namespace {

template <class T>
using sum_acc_t = std::conditional_t<std::is_same_v<T, double>, double,
                                     std::conditional_t<std::is_integral_v<T>, int64_t, float>>;

// sum, mean (kind kMean: divided by the slice's length) and prod.
template <class T>
struct SumLike {
  using acc = sum_acc_t<T>;
  ReduceOp kind;
  int64_t count;
  __device__ acc identity() const { return kind == ReduceOp::kProd ? acc(1) : acc(0); }
  template <class V>
  __device__ acc element(V v, int64_t) const {
    return static_cast<acc>(v);
  }
  __device__ acc combine(acc a, acc b) const { return kind == ReduceOp::kProd ? a * b : a + b; }
  __device__ void store(acc a, char* const* outs, const int64_t* off) const {
    if constexpr (std::is_floating_point_v<acc>) {
      if (kind == ReduceOp::kMean) a = a / static_cast<acc>(count);
    }
    *reinterpret_cast<T*>(outs[0] + off[0]) = convert<T>(a);
  }
};

template <class A>
__device__ inline bool nan(A a) {
  if constexpr (std::is_floating_point_v<A>)
    return a != a;
  else
    return false;
}

// amax / amin: NaN propagates.
template <class T, bool IsMax>
struct Extreme {
  using acc = acc_t<T>;
  __device__ acc identity() const {
    if constexpr (std::is_same_v<acc, bool>)
      return !IsMax;
    else if constexpr (std::is_floating_point_v<acc>)
      return IsMax ? -::cuda::std::numeric_limits<acc>::infinity()
                   : ::cuda::std::numeric_limits<acc>::infinity();
    else
      return IsMax ? ::cuda::std::numeric_limits<acc>::lowest()
                   : ::cuda::std::numeric_limits<acc>::max();
  }
  __device__ acc element(acc v, int64_t) const { return v; }
  __device__ acc combine(acc a, acc b) const {
    if (nan(a)) return a;
    if (nan(b)) return b;
    if constexpr (IsMax)
      return b > a ? b : a;
    else
      return b < a ? b : a;
  }
  __device__ void store(acc a, char* const* outs, const int64_t* off) const {
    *reinterpret_cast<T*>(outs[0] + off[0]) = convert<T>(a);
  }
};

template <class A>
struct ValueIndex {
  A value;
  int64_t index;  // -1: nothing seen yet
};

// argmax / argmin: values (may be absent) and indices. b beats a when it is
// larger (smaller), or NaN where a is not, or equal (both NaN) at a lower index.
template <class T, bool IsMax>
struct ArgExtreme {
  using A = acc_t<T>;
  using acc = ValueIndex<A>;
  __device__ acc identity() const { return acc{A(0), -1}; }
  __device__ acc element(A v, int64_t r) const { return acc{v, r}; }
  __device__ static bool beats(const acc& b, const acc& a) {
    if (a.index < 0) return b.index >= 0;
    if (b.index < 0) return false;
    const bool an = nan(a.value), bn = nan(b.value);
    if (an || bn) return bn && (!an || b.index < a.index);
    if (b.value == a.value) return b.index < a.index;
    return IsMax ? b.value > a.value : b.value < a.value;
  }
  __device__ acc combine(acc a, acc b) const { return beats(b, a) ? b : a; }
  __device__ void store(acc a, char* const* outs, const int64_t* off) const {
    if (outs[0] != nullptr) *reinterpret_cast<T*>(outs[0] + off[0]) = convert<T>(a.value);
    *reinterpret_cast<int64_t*>(outs[1] + off[1]) = a.index;
  }
};

template <class T>
flb_status run_reduce(ReduceOp op, const flb_kernel_call* c, const bool* reduced) {
  const flb_tensor &out = c->tensors[0], &in = c->tensors[1];
  const flb_tensor* outs[1] = {&out};
  const int64_t item[1] = {sizeof(T)};
  int64_t count = 1;
  for (int d = 0; d < in.ndim; ++d)
    if (reduced[d]) count *= in.sizes[d];
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMean:
    case ReduceOp::kProd:
      if constexpr (std::is_same_v<T, bool>) {
        return unsupported_dtypes(c);  // the core sums and multiplies bool as int64
      } else {
        if (op == ReduceOp::kMean && !std::is_floating_point_v<acc_t<T>>)
          return unsupported_dtypes(c);
        return launch_reduce<T, 1>(c, in, outs, item, reduced, SumLike<T>{op, count});
      }
    case ReduceOp::kAmax:
      return launch_reduce<T, 1>(c, in, outs, item, reduced, Extreme<T, true>{});
    case ReduceOp::kAmin:
      return launch_reduce<T, 1>(c, in, outs, item, reduced, Extreme<T, false>{});
  }
  return unsupported_dtypes(c);
}

}  // namespace

flb_status reduce(void* ctx, const flb_kernel_call* c) {
  const ReduceOp op = *static_cast<const ReduceOp*>(ctx);
  if (c->n_tensors != 2) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected two tensors");
  const flb_tensor &out = c->tensors[0], &in = c->tensors[1];
  if (out.ndim != in.ndim || in.ndim > 64)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "out must have in's rank");
  if (out.dtype != in.dtype) return unsupported_dtypes(c);
  bool reduced[64] = {};
  for (int i = 0; i < c->n_ints; ++i) {
    const int64_t d = c->ints[i];
    if (d < 0 || d >= in.ndim) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "bad dim");
    reduced[d] = true;
  }
  flb_status status = FLB_OK;
  bool known =
      dispatch(in.dtype, [&](auto tag) { status = run_reduce<decltype(tag)>(op, c, reduced); });
  return known ? status : unsupported_dtypes(c);
}

flb_status arg_reduce(void* ctx, const flb_kernel_call* c) {
  const bool is_max = *static_cast<const ReduceOp*>(ctx) == ReduceOp::kAmax;
  if (c->n_tensors != 3 || c->n_ints != 1)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected three tensors and a dim");
  const flb_tensor &values = c->tensors[0], &indices = c->tensors[1], &in = c->tensors[2];
  const bool has_values = values.ndim >= 0 && values.data != nullptr;
  if (indices.dtype != FLB_INT64 || (has_values && values.dtype != in.dtype))
    return unsupported_dtypes(c);
  if (indices.ndim != in.ndim || (has_values && values.ndim != in.ndim) || in.ndim > 64)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "outputs must have in's rank");
  const int64_t dim = c->ints[0];
  if (dim < 0 || dim >= in.ndim) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "bad dim");
  bool reduced[64] = {};
  reduced[dim] = true;
  // An absent values tensor walks with the indices' strides and is never written.
  flb_tensor values_or_indices = has_values ? values : indices;
  if (!has_values) values_or_indices.data = nullptr;
  const flb_tensor* outs[2] = {&values_or_indices, &indices};
  flb_status status = FLB_OK;
  bool known = dispatch(in.dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t item[2] = {has_values ? int64_t(sizeof(T)) : int64_t(8), 8};
    status = is_max ? launch_reduce<T, 2>(c, in, outs, item, reduced, ArgExtreme<T, true>{})
                    : launch_reduce<T, 2>(c, in, outs, item, reduced, ArgExtreme<T, false>{});
  });
  return known ? status : unsupported_dtypes(c);
}

}  // namespace flambeau::cuda::kernels
