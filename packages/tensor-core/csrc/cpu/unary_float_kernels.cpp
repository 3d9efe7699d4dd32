// CPU kernels of the floating-point unary functions (exp, log, sin, ...). Inputs
// arrive already promoted to a float or complex type. Contiguous float32 and
// float64 runs go to the vectorized loops of cpu/vec_math.cpp.
#include <math.h>

#include <cmath>
#include <complex>

#include "cpu/pointwise_loops.h"
#include "cpu/special_math.h"
#include "cpu/vec_math.h"
#include "generated/kernels.h"

namespace flambeau {

namespace {

constexpr uint32_t kFC = kFloatTypes | kComplexTypes;

template <class C>
C rsqrt_of(C x) {
  return C(1) / std::sqrt(x);
}
template <class C>
C sigmoid_of(C x) {
  return C(1) / (C(1) + std::exp(-x));
}
template <class C>
C log2_of(C x) {
  if constexpr (is_complex_t<C>::value) {
    return std::log(x) / typename C::value_type(0.693147180559945309417232121458176568);
  } else {
    return std::log2(x);
  }
}
// exp(z) - 1 keeping precision for small |z|: expm1(a) cos(b) - 2 sin^2(b / 2) is the real
// part without cancellation.
template <class C>
C expm1_complex(C z) {
  using R = typename C::value_type;
  R a = z.real(), b = z.imag(), s = std::sin(b / 2);
  return C(std::expm1(a) * std::cos(b) - 2 * s * s, std::exp(a) * std::sin(b));
}
template <class C>
C lgamma_of(C x) {
  int sign;
  return static_cast<C>(lgamma_r(static_cast<double>(x), &sign));
}

// NAME: operator; MASK: compute types; REAL / CPLX: expressions in x.
#define FLB_FLOAT_UNARY_IMPL(NAME, MASK, REAL, CPLX, V32, V64)           \
  void NAME##_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) { \
    unary_op<MASK>(                                                      \
        out, in[0], #NAME,                                               \
        [](auto tag) {                                                   \
          using C = typename decltype(tag)::type;                        \
          if constexpr (is_complex_t<C>::value) {                        \
            return [](C x) -> C { return CPLX; };                        \
          } else {                                                       \
            return [](C x) -> C { return REAL; };                        \
          }                                                              \
        },                                                               \
        V32, V64);                                                       \
  }                                                                      \
  FLB_REGISTER_KERNEL(NAME, kCPU, NAME##_kernel);
#define FLB_FLOAT_UNARY(NAME, MASK, REAL, CPLX) \
  FLB_FLOAT_UNARY_IMPL(NAME, MASK, REAL, CPLX, vec::NAME##_f32, vec::NAME##_f64)
#define FLB_FLOAT_UNARY_NOVEC(NAME, MASK, REAL) \
  FLB_FLOAT_UNARY_IMPL(NAME, MASK, REAL, x, nullptr, nullptr)

FLB_FLOAT_UNARY(exp, kFC, std::exp(x), std::exp(x))
FLB_FLOAT_UNARY(exp2, kFC, std::exp2(x), std::pow(C(2), x))
FLB_FLOAT_UNARY(expm1, kFC, std::expm1(x), expm1_complex(x))
FLB_FLOAT_UNARY(log, kFC, std::log(x), std::log(x))
FLB_FLOAT_UNARY(log1p, kFC, std::log1p(x), std::log(C(1) + x))
FLB_FLOAT_UNARY(log2, kFC, log2_of(x), log2_of(x))
FLB_FLOAT_UNARY(log10, kFC, std::log10(x), std::log10(x))
FLB_FLOAT_UNARY(sqrt, kFC, std::sqrt(x), std::sqrt(x))
FLB_FLOAT_UNARY(rsqrt, kFC, rsqrt_of(x), rsqrt_of(x))
FLB_FLOAT_UNARY(sin, kFC, std::sin(x), std::sin(x))
FLB_FLOAT_UNARY(cos, kFC, std::cos(x), std::cos(x))
FLB_FLOAT_UNARY(tan, kFC, std::tan(x), std::tan(x))
FLB_FLOAT_UNARY(asin, kFC, std::asin(x), std::asin(x))
FLB_FLOAT_UNARY(acos, kFC, std::acos(x), std::acos(x))
FLB_FLOAT_UNARY(atan, kFC, std::atan(x), std::atan(x))
FLB_FLOAT_UNARY(sinh, kFC, std::sinh(x), std::sinh(x))
FLB_FLOAT_UNARY(cosh, kFC, std::cosh(x), std::cosh(x))
FLB_FLOAT_UNARY(tanh, kFC, std::tanh(x), std::tanh(x))
FLB_FLOAT_UNARY(asinh, kFC, std::asinh(x), std::asinh(x))
FLB_FLOAT_UNARY(acosh, kFC, std::acosh(x), std::acosh(x))
FLB_FLOAT_UNARY(atanh, kFC, std::atanh(x), std::atanh(x))
FLB_FLOAT_UNARY(sigmoid, kFC, sigmoid_of(x), sigmoid_of(x))
FLB_FLOAT_UNARY(erf, kFloatTypes, std::erf(x), x)
FLB_FLOAT_UNARY(erfc, kFloatTypes, std::erfc(x), x)
FLB_FLOAT_UNARY(reciprocal, kFC, C(1) / x, C(1) / x)
FLB_FLOAT_UNARY_NOVEC(erfinv, kFloatTypes, C(special::erfinv(static_cast<double>(x))))
FLB_FLOAT_UNARY_NOVEC(lgamma, kFloatTypes, lgamma_of(x))
FLB_FLOAT_UNARY_NOVEC(digamma, kFloatTypes, C(special::digamma(static_cast<double>(x))))

// logit(x) = log(x / (1 - x)); args[0] is eps, negative when not given.
void logit_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar> args) {
  const double eps = args[0].to_double();
  unary_op<kFloatTypes>(out, in[0], "logit", [eps](auto tag) {
    using C = typename decltype(tag)::type;
    const C lo = static_cast<C>(eps), hi = static_cast<C>(1.0 - eps);
    const bool clamp = eps >= 0;
    return [lo, hi, clamp](C x) -> C {
      if (clamp) x = x < lo ? lo : (x > hi ? hi : x);
      return std::log(x / (C(1) - x));
    };
  });
}
FLB_REGISTER_KERNEL(logit, kCPU, logit_kernel);

}  // namespace

}  // namespace flambeau
