// Unary operators: neg, abs and relu on every real dtype; exp, log, sqrt,
// rsqrt, sin, cos, tanh, sigmoid and reciprocal on the floating dtypes (the
// core promotes integer inputs of those to the default float dtype first).
#include <type_traits>

#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"

namespace flambeau::cuda::kernels {

namespace {

template <class A>
struct Unary {
  UnaryOp op;
  __device__ A operator()(A a) const {
    if constexpr (std::is_floating_point_v<A>) {
      switch (op) {
        case UnaryOp::kNeg:
          return -a;
        case UnaryOp::kAbs:
          return fabs(a);
        case UnaryOp::kRelu:
          return a > A(0) ? a : (a == a ? A(0) : a);  // NaN stays NaN
        case UnaryOp::kExp:
          return exp(a);
        case UnaryOp::kLog:
          return log(a);
        case UnaryOp::kSqrt:
          return sqrt(a);
        case UnaryOp::kRsqrt:
          return rsqrt(a);
        case UnaryOp::kSin:
          return sin(a);
        case UnaryOp::kCos:
          return cos(a);
        case UnaryOp::kTanh:
          return tanh(a);
        case UnaryOp::kSigmoid:
          return A(1) / (A(1) + exp(-a));
        case UnaryOp::kReciprocal:
          return A(1) / a;
      }
      return a;
    } else if constexpr (std::is_same_v<A, bool>) {
      return a;  // abs and relu of a bool are itself
    } else {
      switch (op) {
        case UnaryOp::kNeg:
          return static_cast<A>(-a);
        case UnaryOp::kAbs:
          if constexpr (std::is_signed_v<A>) return static_cast<A>(a < 0 ? -a : a);
          return a;
        case UnaryOp::kRelu:
          return a > A(0) ? a : A(0);
        default:
          return a;  // not registered for integers
      }
    }
  }
};

}  // namespace

bool unary_takes_integers(UnaryOp op) {
  return op == UnaryOp::kNeg || op == UnaryOp::kAbs || op == UnaryOp::kRelu;
}

flb_status unary(void* ctx, const flb_kernel_call* c) {
  if (c->n_tensors != 2 || !all_dtype(c, c->tensors[0].dtype)) return unsupported_dtypes(c);
  const UnaryOp op = *static_cast<const UnaryOp*>(ctx);
  flb_status status = FLB_OK;
  bool known = dispatch(c->tensors[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    if (!std::is_floating_point_v<A> && !unary_takes_integers(op))
      status = unsupported_dtypes(c);
    else if (std::is_same_v<T, bool> && op == UnaryOp::kNeg)
      status = unsupported_dtypes(c);
    else
      status = launch_elementwise<T, 1>(c, Unary<A>{op});
  });
  return known ? status : unsupported_dtypes(c);
}

}  // namespace flambeau::cuda::kernels
