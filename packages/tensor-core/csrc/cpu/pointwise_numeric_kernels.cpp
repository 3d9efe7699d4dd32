// CPU kernels of the number-theoretic and floating-point-representation
// operators: gcd, lcm, heaviside, nextafter, signbit, ldexp, frexp, deg2rad and
// rad2deg.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "cpu/pointwise_loops.h"
#include "generated/kernels.h"
#include "ops/frexp_kernel.h"

namespace flambeau {

namespace {

// |x| as the unsigned type of T's width (defined for the most negative value).
template <class T>
std::make_unsigned_t<T> magnitude(T x) {
  using U = std::make_unsigned_t<T>;
  return x < 0 ? static_cast<U>(U(0) - static_cast<U>(x)) : static_cast<U>(x);
}

// gcd(|a|, |b|) by Euclid's algorithm; gcd(0, 0) = 0. The result wraps like
// PyTorch's where |a| does not fit (gcd(INT64_MIN, 0)).
template <class T>
T gcd_of(T a, T b) {
  auto x = magnitude(a), y = magnitude(b);
  while (x != 0) {
    const auto r = static_cast<decltype(x)>(y % x);
    y = x;
    x = r;
  }
  return static_cast<T>(y);
}

void gcd_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  binary_op<kIntTypes>(out, in, "gcd", [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C a, C b) -> C { return gcd_of(a, b); };
  });
}
FLB_REGISTER_KERNEL(gcd, kCPU, gcd_kernel);

// |a / gcd * b| computed in int64 and wrapped to the type, as PyTorch's; 0 when
// either is 0.
void lcm_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  binary_op<kIntTypes>(out, in, "lcm", [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C a, C b) -> C {
      const int64_t g = static_cast<int64_t>(gcd_of(a, b));
      if (g == 0) return C(0);
      const int64_t m = static_cast<int64_t>(a) / g * static_cast<int64_t>(b);
      return static_cast<C>(static_cast<int64_t>(magnitude(m)));
    };
  });
}
FLB_REGISTER_KERNEL(lcm, kCPU, lcm_kernel);

// 0 for x < 0, values where x == 0, 1 for x > 0 (and 0 for NaN, as PyTorch).
void heaviside_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  binary_op<kRealTypes | kBoolTypes>(out, in, "heaviside", [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C x, C values) -> C { return x == C(0) ? values : static_cast<C>(x > C(0)); };
  });
}
FLB_REGISTER_KERNEL(heaviside, kCPU, heaviside_kernel);

// The next representable value after `from` toward `to`, for the 16-bit types
// (whose steps a float computation cannot see): one step of the bit pattern,
// which is sign and magnitude.
template <class T>
T nextafter_16bit(T from, T to) {
  const float f = from, t = to;
  if (std::isnan(f) || std::isnan(t)) return T(f + t);
  if (f == t) return to;
  T r;
  if (f == 0) {  // the smallest subnormal, with to's sign
    r.bits = static_cast<uint16_t>((to.bits & 0x8000) | 1);
    return r;
  }
  r = from;
  const bool away_from_zero = (t > f) == (f > 0);
  r.bits = static_cast<uint16_t>(away_from_zero ? r.bits + 1 : r.bits - 1);
  return r;
}

void nextafter_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  Tensor ops[] = {out, in[0], in[1]};
  auto it = TensorIterator::build(Span<Tensor>(ops, 3));
  visit_dtype<kFloatTypes>(in[0]->dtype(), "nextafter", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, compute_t<T>>) {
      cpu_kernel<T, T, 2>(it, [](T a, T b) { return std::nextafter(a, b); });
    } else {
      cpu_kernel<T, T, 2>(it, [](T a, T b) { return nextafter_16bit(a, b); });
    }
  });
}
FLB_REGISTER_KERNEL(nextafter, kCPU, nextafter_kernel);

// Whether the sign bit is set: -0.0 and negative NaN included; never for
// unsigned types and bool.
void signbit_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  unary_op<kRealTypes | kBoolTypes, OutKind::Bool>(out, in[0], "signbit", [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C x) -> bool {
      if constexpr (std::is_floating_point_v<C>) {
        // Not std::signbit: GCC 12 fails to compile its vectorized form (an internal
        // compiler error); copysign reads the same bit.
        return std::copysign(C(1), x) < 0;
      } else if constexpr (std::is_signed_v<C>) {
        return x < 0;
      } else {
        return false;
      }
    };
  });
}
FLB_REGISTER_KERNEL(signbit, kCPU, signbit_kernel);

// x * 2^e. An integral e goes through std::ldexp, exact even where 2^e alone would
// overflow or underflow (ldexp(1e-300, 1030) is finite).
void ldexp_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  binary_op<kFloatTypes | kComplexTypes>(out, in, "ldexp", [](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (is_complex_t<C>::value) {
      return [](C x, C e) -> C { return x * std::pow(C(2), e); };
    } else {
      return [](C x, C e) -> C {
        if (e == std::trunc(e) && std::fabs(e) < C(1 << 20))
          return std::ldexp(x, static_cast<int>(e));
        return x * std::exp2(e);
      };
    }
  });
}
FLB_REGISTER_KERNEL(ldexp, kCPU, ldexp_kernel);

void frexp_kernel(const Tensor& mantissa, const Tensor& exponent, const Tensor& input) {
  Tensor ops[] = {mantissa, exponent, input};
  auto it = TensorIterator::build(Span<Tensor>(ops, 3));
  visit_dtype<kFloatTypes>(input->dtype(), "frexp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    it.for_each([](char** d, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        const auto x = static_cast<compute_t<T>>(*reinterpret_cast<const T*>(d[2] + i * s[2]));
        int e = 0;
        const auto m = std::frexp(x, &e);
        *reinterpret_cast<T*>(d[0] + i * s[0]) = T(m);
        // Infinities and NaN have exponent 0, as PyTorch's.
        *reinterpret_cast<int32_t*>(d[1] + i * s[1]) = std::isfinite(x) ? e : 0;
      }
    });
  });
}
FLB_REGISTER_KERNEL(frexp, kCPU, frexp_kernel);

// Degrees and radians: a multiplication by the constant, in the compute type.
template <int Direction>
void angle_kernel(const Tensor& out, Span<Tensor> in, const char* name) {
  unary_op<kFloatTypes>(out, in[0], name, [](auto tag) {
    using C = typename decltype(tag)::type;
    constexpr double kRadiansPerDegree = 3.14159265358979323846 / 180.0;
    const C factor = static_cast<C>(Direction > 0 ? kRadiansPerDegree : 1.0 / kRadiansPerDegree);
    return [factor](C x) -> C { return x * factor; };
  });
}
void deg2rad_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  angle_kernel<1>(out, in, "deg2rad");
}
void rad2deg_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  angle_kernel<-1>(out, in, "rad2deg");
}
FLB_REGISTER_KERNEL(deg2rad, kCPU, deg2rad_kernel);
FLB_REGISTER_KERNEL(rad2deg, kCPU, rad2deg_kernel);

}  // namespace

}  // namespace flambeau
