// The elementwise min/max family on every real dtype and bool: maximum, minimum,
// max.other, min.other, clamp_min and clamp_max propagate NaN (as PyTorch's);
// fmax and fmin prefer the number; clamp(x, lo, hi) = min(max(x, lo), hi).
#include <type_traits>

#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"

namespace flambeau::cuda::kernels {

namespace {

template <class A>
__device__ inline bool is_nan(A a) {
  if constexpr (std::is_floating_point_v<A>)
    return a != a;
  else
    return false;
}

template <class A>
__device__ inline A max_nan(A a, A b) {
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  return a > b ? a : b;
}

template <class A>
__device__ inline A min_nan(A a, A b) {
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  return a < b ? a : b;
}

template <class A>
struct MinMax {
  MinMaxOp op;
  __device__ A operator()(A a, A b) const {
    switch (op) {
      case MinMaxOp::kMax:
        return max_nan(a, b);
      case MinMaxOp::kMin:
        return min_nan(a, b);
      case MinMaxOp::kFmax:
        return is_nan(a) ? b : (is_nan(b) ? a : (a > b ? a : b));
      case MinMaxOp::kFmin:
        return is_nan(a) ? b : (is_nan(b) ? a : (a < b ? a : b));
      case MinMaxOp::kClamp:
        break;
    }
    return a;
  }
};

template <class A>
struct Clamp {
  __device__ A operator()(A x, A lo, A hi) const { return min_nan(max_nan(x, lo), hi); }
};

}  // namespace

flb_status minmax(void* ctx, const flb_kernel_call* c) {
  const MinMaxOp op = *static_cast<const MinMaxOp*>(ctx);
  const int nin = op == MinMaxOp::kClamp ? 3 : 2;
  if (c->n_tensors != nin + 1 || !all_dtype(c, c->tensors[0].dtype)) return unsupported_dtypes(c);
  flb_status status = FLB_OK;
  bool known = dispatch(c->tensors[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    if (op == MinMaxOp::kClamp)
      status = launch_elementwise<T, 3>(c, Clamp<A>{});
    else
      status = launch_elementwise<T, 2>(c, MinMax<A>{op});
  });
  return known ? status : unsupported_dtypes(c);
}

}  // namespace flambeau::cuda::kernels
