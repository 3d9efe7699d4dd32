// Unary operators. On every real dtype: neg, abs, relu, sign and the rounding
// functions floor, ceil, trunc and round (the identity on integers). On the
// floating dtypes only (the core promotes integer inputs to the default float
// dtype first): exp, exp2, expm1, log, log1p, log2, log10, sqrt, rsqrt, the
// trigonometric and hyperbolic functions and their inverses, sigmoid, erf, erfc,
// reciprocal and frac. 16-bit floats compute in float, as the CPU does.
#include <type_traits>

#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"

namespace flambeau::cuda::kernels {

namespace {

template <class A>
struct Unary {
  UnaryOp op;
  // round: 10**|decimals| and whether decimals < 0 (a power of ten divides then).
  A scale;
  int64_t decimals;
  __device__ A round_half_even(A a) const {
    if (decimals == 0) return rint(a);
    return decimals < 0 ? A(rint(a / scale) * scale) : A(rint(a * scale) / scale);
  }
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
        case UnaryOp::kExp2:
          return exp2(a);
        case UnaryOp::kExpm1:
          return expm1(a);
        case UnaryOp::kLog1p:
          return log1p(a);
        case UnaryOp::kLog2:
          return log2(a);
        case UnaryOp::kLog10:
          return log10(a);
        case UnaryOp::kTan:
          return tan(a);
        case UnaryOp::kAsin:
          return asin(a);
        case UnaryOp::kAcos:
          return acos(a);
        case UnaryOp::kAtan:
          return atan(a);
        case UnaryOp::kSinh:
          return sinh(a);
        case UnaryOp::kCosh:
          return cosh(a);
        case UnaryOp::kAsinh:
          return asinh(a);
        case UnaryOp::kAcosh:
          return acosh(a);
        case UnaryOp::kAtanh:
          return atanh(a);
        case UnaryOp::kErf:
          return erf(a);
        case UnaryOp::kErfc:
          return erfc(a);
        case UnaryOp::kFrac:
          return a - trunc(a);
        case UnaryOp::kFloor:
          return floor(a);
        case UnaryOp::kCeil:
          return ceil(a);
        case UnaryOp::kTrunc:
          return trunc(a);
        case UnaryOp::kRound:
          return round_half_even(a);
        case UnaryOp::kSign:
          return A((A(0) < a) - (a < A(0)));  // 0 for NaN, as the CPU kernel
      }
      return a;
    } else if constexpr (std::is_same_v<A, bool>) {
      return a;  // abs, relu, sign and rounding of a bool are itself
    } else {
      switch (op) {
        case UnaryOp::kNeg:
          return static_cast<A>(-a);
        case UnaryOp::kAbs:
          if constexpr (std::is_signed_v<A>) return static_cast<A>(a < 0 ? -a : a);
          return a;
        case UnaryOp::kRelu:
          return a > A(0) ? a : A(0);
        case UnaryOp::kSign:
          if constexpr (std::is_signed_v<A>) return static_cast<A>((A(0) < a) - (a < A(0)));
          return static_cast<A>(a != A(0));
        default:
          return a;  // rounding: the identity; the float functions are not registered
      }
    }
  }
};

template <class A>
Unary<A> make_unary(UnaryOp op, const flb_kernel_call* c) {
  Unary<A> u{op, A(1), 0};
  if constexpr (std::is_floating_point_v<A>) {
    if (op == UnaryOp::kRound && c->n_scalars > 0) {
      u.decimals = c->scalars[0].i;
      double scale = 1;  // as the CPU: 10**|decimals| in double, rounded to A once
      for (int64_t d = u.decimals < 0 ? -u.decimals : u.decimals; d > 0; --d) scale *= 10;
      u.scale = static_cast<A>(scale);
    }
  }
  return u;
}

}  // namespace

bool unary_takes_integers(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNeg:
    case UnaryOp::kAbs:
    case UnaryOp::kRelu:
    case UnaryOp::kFloor:
    case UnaryOp::kCeil:
    case UnaryOp::kTrunc:
    case UnaryOp::kRound:
    case UnaryOp::kSign:
      return true;
    default:
      return false;
  }
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
      status = launch_elementwise<T, 1>(c, make_unary<A>(op, c));
  });
  return known ? status : unsupported_dtypes(c);
}

}  // namespace flambeau::cuda::kernels
