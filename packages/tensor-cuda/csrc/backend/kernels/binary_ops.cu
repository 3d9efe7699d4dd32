// add, sub (out = a + alpha * b, a - alpha * b), mul, div (true, trunc and
// floor rounding) and pow on every real dtype (pow on bool too).
#include <type_traits>

#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"

namespace flambeau::cuda::kernels {

namespace {

template <class A>
struct AddOp {
  A alpha;
  __device__ A operator()(A a, A b) const { return static_cast<A>(a + alpha * b); }
};

template <class A>
struct SubOp {
  A alpha;
  __device__ A operator()(A a, A b) const { return static_cast<A>(a - alpha * b); }
};

template <class A>
struct MulOp {
  __device__ A operator()(A a, A b) const { return static_cast<A>(a * b); }
};

// The rounding modes of the core's div kernel (its one scalar argument).
enum DivMode : int64_t { kTrue = 0, kTrunc = 1, kFloor = 2 };

template <class A>
struct DivOp {
  int64_t mode;
  __device__ A operator()(A a, A b) const {
    if constexpr (std::is_floating_point_v<A>) {
      A q = a / b;
      if (mode == kTrunc) return trunc(q);
      if (mode == kFloor) return b == A(0) ? q : floor(q);
      return q;
    } else {
      if (b == A(0)) return static_cast<A>(-1);  // as the hardware answers; the CPU raises
      A q = static_cast<A>(a / b);
      if constexpr (std::is_signed_v<A>) {
        if (mode == kFloor && (a % b != 0) && ((a < 0) != (b < 0))) q = static_cast<A>(q - 1);
      }
      return q;
    }
  }
};

// Integer powers by squaring, wrapping as the CPU's; a negative exponent gives
// 1 / base**e truncated: 1 for base 1, +-1 for base -1, else 0.
template <class A>
__device__ A int_pow(A base, A exp) {
  if constexpr (std::is_signed_v<A>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == A(-1)) return (exp & 1) ? A(-1) : A(1);
      return 0;
    }
  }
  using U = std::make_unsigned_t<A>;
  U result = 1, b = static_cast<U>(base);
  for (U e = static_cast<U>(exp); e; e >>= 1) {
    if (e & 1) result = static_cast<U>(result * b);
    b = static_cast<U>(b * b);
  }
  return static_cast<A>(result);
}

template <class A>
struct PowOp {
  __device__ A operator()(A a, A b) const {
    if constexpr (std::is_same_v<A, bool>)
      return a || !b;
    else if constexpr (std::is_integral_v<A>)
      return int_pow(a, b);
    else
      return pow(a, b);
  }
};

template <class T>
flb_status run(BinaryOp op, const flb_kernel_call* c) {
  using A = acc_t<T>;
  switch (op) {
    case BinaryOp::kAdd:
      return launch_elementwise<T, 2>(
          c, AddOp<A>{c->n_scalars > 0 ? scalar_as<A>(c->scalars[0]) : A(1)});
    case BinaryOp::kSub:
      if constexpr (std::is_same_v<T, bool>)
        return unsupported_dtypes(c);
      else
        return launch_elementwise<T, 2>(
            c, SubOp<A>{c->n_scalars > 0 ? scalar_as<A>(c->scalars[0]) : A(1)});
    case BinaryOp::kMul:
      return launch_elementwise<T, 2>(c, MulOp<A>{});
    case BinaryOp::kDiv:
      if constexpr (std::is_same_v<T, bool>)
        return unsupported_dtypes(c);
      else
        return launch_elementwise<T, 2>(
            c, DivOp<A>{c->n_scalars > 0 ? c->scalars[0].i : int64_t(kTrue)});
    case BinaryOp::kPow:
      return launch_elementwise<T, 2>(c, PowOp<A>{});
  }
  return unsupported_dtypes(c);
}

}  // namespace

flb_status binary(void* ctx, const flb_kernel_call* c) {
  if (c->n_tensors != 3 || !all_dtype(c, c->tensors[0].dtype)) return unsupported_dtypes(c);
  const BinaryOp op = *static_cast<const BinaryOp*>(ctx);
  flb_status status = FLB_OK;
  if (!dispatch(c->tensors[0].dtype, [&](auto tag) { status = run<decltype(tag)>(op, c); }))
    return unsupported_dtypes(c);
  return status;
}

}  // namespace flambeau::cuda::kernels
