// CPU kernels of the min/max family (maximum, minimum, fmax, fmin, clamp*) and
// of the fused and float-only binary operators (lerp, addcmul, addcdiv, hypot,
// atan2, logaddexp, logaddexp2, copysign).
#include <cmath>
#include <limits>

#include "cpu/pointwise_loops.h"
#include "generated/kernels.h"

namespace flambeau {

namespace {

constexpr uint32_t kOrdered = kRealTypes | kBoolTypes;

// NaN-propagating max / min (PyTorch's maximum, minimum and clamp).
template <class C>
inline C max_nan(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a > b ? a : b;
}
template <class C>
inline C min_nan(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a < b ? a : b;
}

#define FLB_BINARY_KERNEL(NAME, MASK, EXPR)                              \
  void NAME##_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) { \
    binary_op<MASK>(out, in, #NAME, [](auto tag) {                       \
      using C = typename decltype(tag)::type;                            \
      return [](C a, C b) -> C { return EXPR; };                         \
    });                                                                  \
  }                                                                      \
  FLB_REGISTER_KERNEL(NAME, kCPU, NAME##_kernel);

FLB_BINARY_KERNEL(maximum, kOrdered, max_nan(a, b))
FLB_BINARY_KERNEL(minimum, kOrdered, min_nan(a, b))
FLB_BINARY_KERNEL(clamp_min, kOrdered, max_nan(a, b))
FLB_BINARY_KERNEL(clamp_max, kOrdered, min_nan(a, b))

template <class C>
inline C fmax_of(C a, C b) {
  if constexpr (std::is_floating_point_v<C>)
    return std::fmax(a, b);
  else
    return a > b ? a : b;
}
template <class C>
inline C fmin_of(C a, C b) {
  if constexpr (std::is_floating_point_v<C>)
    return std::fmin(a, b);
  else
    return a < b ? a : b;
}
FLB_BINARY_KERNEL(fmax, kOrdered, fmax_of(a, b))
FLB_BINARY_KERNEL(fmin, kOrdered, fmin_of(a, b))

FLB_BINARY_KERNEL(hypot, kFloatTypes, std::hypot(a, b))
FLB_BINARY_KERNEL(atan2, kFloatTypes, std::atan2(a, b))
FLB_BINARY_KERNEL(copysign, kFloatTypes, std::copysign(a, b))

template <class C>
inline C logaddexp_of(C a, C b, C log_base, bool base2) {
  if (std::isinf(a) && a == b) return a;
  C m = a > b ? a : b;
  if (a != a || b != b) return a + b;
  C d = -std::fabs(a - b);
  return base2 ? m + std::log1p(std::exp2(d)) / log_base : m + std::log1p(std::exp(d));
}
// Complex: factor out the operand with the larger real part.
template <class C>
inline C logaddexp_complex(C a, C b) {
  const bool a_big = a.real() >= b.real();
  C hi = a_big ? a : b, lo = a_big ? b : a;
  if (std::isinf(hi.real()) && hi == lo) return hi;
  return hi + std::log(C(1) + std::exp(lo - hi));
}

void logaddexp_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  binary_op<kFloatTypes | kComplexTypes>(out, in, "logaddexp", [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C a, C b) -> C {
      if constexpr (is_complex_t<C>::value)
        return logaddexp_complex(a, b);
      else
        return logaddexp_of(a, b, C(1), false);
    };
  });
}
FLB_REGISTER_KERNEL(logaddexp, kCPU, logaddexp_kernel);
FLB_BINARY_KERNEL(logaddexp2, kFloatTypes,
                  logaddexp_of(a, b, C(0.693147180559945309417232121458176568), true))

void clamp_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  nary_op<kOrdered, OutKind::Same, 3>(out, in, "clamp", [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C x, C lo, C hi) -> C { return min_nan(max_nan(x, lo), hi); };
  });
}

void lerp_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  nary_op<kFloatTypes | kComplexTypes, OutKind::Same, 3>(out, in, "lerp", [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C a, C b, C w) -> C {
      bool low;
      if constexpr (is_complex_t<C>::value)
        low = std::abs(w) < 0.5;
      else
        low = w < C(0.5);
      return low ? a + w * (b - a) : b - (b - a) * (C(1) - w);
    };
  });
}

void addcmul_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar> args) {
  nary_op<kRealTypes | kComplexTypes, OutKind::Same, 3>(out, in, "addcmul", [&](auto tag) {
    using C = typename decltype(tag)::type;
    const C v = args[0].to<C>();
    return [v](C x, C a, C b) -> C { return C(x + v * a * b); };
  });
}

void addcdiv_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar> args) {
  nary_op<kFloatTypes | kComplexTypes, OutKind::Same, 3>(out, in, "addcdiv", [&](auto tag) {
    using C = typename decltype(tag)::type;
    const C v = args[0].to<C>();
    return [v](C x, C a, C b) -> C { return x + v * (a / b); };
  });
}

}  // namespace

FLB_REGISTER_KERNEL(clamp, kCPU, clamp_kernel);
FLB_REGISTER_KERNEL(lerp, kCPU, lerp_kernel);
FLB_REGISTER_KERNEL(addcmul, kCPU, addcmul_kernel);
FLB_REGISTER_KERNEL(addcdiv, kCPU, addcdiv_kernel);

}  // namespace flambeau
