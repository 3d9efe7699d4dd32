// Bitwise operators, as the CPU kernels (cpu/bitwise_kernels.cpp): bitwise_and,
// bitwise_or, bitwise_xor and bitwise_not on the integer dtypes and bool;
// bitwise_left_shift and bitwise_right_shift on the integer dtypes, a shift by a
// negative amount or by the width or more giving 0 (left, and unsigned right) or
// the sign fill (signed right), as PyTorch.
#include <type_traits>

#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"

namespace flambeau::cuda::kernels {

namespace {

// Whether b is a shift amount outside [0, width of A).
template <class A>
__device__ inline bool out_of_range_shift(A b) {
  constexpr int64_t bits = sizeof(A) * 8;
  if constexpr (std::is_signed_v<A>)
    return b < 0 || static_cast<int64_t>(b) >= bits;
  else
    return static_cast<int64_t>(b) >= bits;
}

template <class A>
__device__ inline A shift_left(A a, A b) {
  using U = std::make_unsigned_t<A>;
  if (out_of_range_shift(b)) return 0;
  return static_cast<A>(static_cast<U>(a) << b);
}

template <class A>
__device__ inline A shift_right(A a, A b) {
  if (out_of_range_shift(b)) {
    if constexpr (std::is_signed_v<A>)
      return a < 0 ? A(-1) : A(0);
    else
      return 0;
  }
  return static_cast<A>(a >> b);
}

template <class A>
struct Bitwise {
  BitwiseOp op;
  __device__ A operator()(A a, A b) const {
    switch (op) {
      case BitwiseOp::kAnd:
        return static_cast<A>(a & b);
      case BitwiseOp::kOr:
        return static_cast<A>(a | b);
      case BitwiseOp::kXor:
        return static_cast<A>(a ^ b);
      case BitwiseOp::kLeftShift:
        if constexpr (!std::is_same_v<A, bool>) return shift_left(a, b);
        break;
      case BitwiseOp::kRightShift:
        if constexpr (!std::is_same_v<A, bool>) return shift_right(a, b);
        break;
      default:
        break;
    }
    return a;
  }
  __device__ A operator()(A x) const {  // bitwise_not
    if constexpr (std::is_same_v<A, bool>)
      return !x;
    else
      return static_cast<A>(~x);
  }
};

}  // namespace

flb_status bitwise(void* ctx, const flb_kernel_call* c) {
  const BitwiseOp op = *static_cast<const BitwiseOp*>(ctx);
  const bool unary = op == BitwiseOp::kNot;
  const bool shift = op == BitwiseOp::kLeftShift || op == BitwiseOp::kRightShift;
  if (c->n_tensors != (unary ? 2 : 3) || !all_dtype(c, c->tensors[0].dtype))
    return unsupported_dtypes(c);
  flb_status status = FLB_OK;
  const bool known = dispatch(c->tensors[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_integral_v<T>) {
      status = unsupported_dtypes(c);  // floating dtypes
    } else {
      if (shift && std::is_same_v<T, bool>)
        status = unsupported_dtypes(c);
      else if (unary)
        status = launch_elementwise<T, 1>(c, Bitwise<T>{op});
      else
        status = launch_elementwise<T, 2>(c, Bitwise<T>{op});
    }
  });
  return known ? status : unsupported_dtypes(c);
}

}  // namespace flambeau::cuda::kernels
