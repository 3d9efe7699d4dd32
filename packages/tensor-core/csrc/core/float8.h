// PyTorch's 8-bit floats and complex32, stored as raw bits; arithmetic (and
// every conversion) goes through float.
//
// The formats (OCP 8-bit floating point, and the AMD "fnuz" variants):
//   e4m3fn    bias 7,  no infinities, NaN = S.1111.111, max 448; overflow saturates to
//             +-448 as PyTorch's conversion does, NaN stays NaN
//   e5m2      bias 15, IEEE-like (infinities, NaNs), max 57344; overflow rounds to inf
//   e4m3fnuz  bias 8,  one NaN (0x80), no negative zero, max 240; overflow -> NaN
//   e5m2fnuz  bias 16, one NaN (0x80), no negative zero, max 57344; overflow -> NaN
//   e8m0fnu   unsigned powers of two 2^(e-127), 0xFF = NaN; rounds to the nearest power
//             (ties up), ignores the sign, as PyTorch's conversion does
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/half.h"

namespace flambeau {

enum class Fp8Kind { E4M3FN, E5M2, E4M3FNUZ, E5M2FNUZ };

template <int ExpBits, int ManBits, int Bias, Fp8Kind K>
struct Float8 {
  uint8_t bits = 0;
  Float8() = default;
  Float8(float f) : bits(encode(f)) {}             // NOLINT: behaves like a numeric type
  operator float() const { return decode(bits); }  // NOLINT

  static constexpr bool kFnuz = K == Fp8Kind::E4M3FNUZ || K == Fp8Kind::E5M2FNUZ;
  static constexpr int kExpMax = (1 << ExpBits) - 1;
  static constexpr int kManMask = (1 << ManBits) - 1;

  static float decode(uint8_t b) {
    if (kFnuz && b == 0x80) return NAN;
    const bool neg = b & 0x80;
    const int e = (b >> ManBits) & kExpMax;
    const int m = b & kManMask;
    float v;
    if (K == Fp8Kind::E5M2 && e == kExpMax) {
      v = m == 0 ? INFINITY : NAN;
    } else if (K == Fp8Kind::E4M3FN && e == kExpMax && m == kManMask) {
      v = NAN;
    } else if (e == 0) {
      v = std::ldexp(static_cast<float>(m), 1 - Bias - ManBits);  // subnormal
    } else {
      v = std::ldexp(static_cast<float>(m + (1 << ManBits)), e - Bias - ManBits);
    }
    return neg ? -v : v;
  }

  // Round to nearest even on the format's grid, then apply its overflow rule.
  static uint8_t encode(float f) {
    const uint8_t nan = kFnuz ? 0x80 : static_cast<uint8_t>(0x7F | (std::signbit(f) ? 0x80 : 0));
    if (std::isnan(f)) return nan;
    const uint8_t sign = std::signbit(f) ? 0x80 : 0;
    const float a = std::fabs(f);
    const float max_finite = decode(kFnuz ? 0x7F : (K == Fp8Kind::E5M2 ? 0x7B : 0x7E));
    uint8_t code;
    if (std::isinf(a)) {
      code = 0xFF;  // overflow below
    } else {
      int exp;
      std::frexp(a, &exp);  // a = frac * 2^exp, frac in [0.5, 1)
      // The exponent of a's leading bit, clamped to the subnormal range.
      int e = std::max(exp - 1, 1 - Bias);
      const float quantum = std::ldexp(1.0f, e - ManBits);
      const float q = std::nearbyint(a / quantum);  // ties to even (default rounding)
      const float r = q * quantum;
      if (r > max_finite) {
        code = 0xFF;
      } else if (r == 0) {
        return kFnuz ? 0 : sign;
      } else {
        int re;
        std::frexp(r, &re);
        const int be = re - 1 + Bias;  // biased exponent; <= 0 means subnormal
        if (be <= 0) {
          code = static_cast<uint8_t>(std::ldexp(r, Bias - 1 + ManBits));
        } else {
          const int man = static_cast<int>(std::ldexp(r, ManBits - (re - 1))) - (1 << ManBits);
          code = static_cast<uint8_t>((be << ManBits) | man);
        }
        return sign | code;
      }
    }
    // Overflow (or infinity).
    if (K == Fp8Kind::E4M3FN) return sign | 0x7E;
    if (K == Fp8Kind::E5M2) return sign | 0x7C;
    return nan;
  }
};

using Float8_e4m3fn = Float8<4, 3, 7, Fp8Kind::E4M3FN>;
using Float8_e5m2 = Float8<5, 2, 15, Fp8Kind::E5M2>;
using Float8_e4m3fnuz = Float8<4, 3, 8, Fp8Kind::E4M3FNUZ>;
using Float8_e5m2fnuz = Float8<5, 2, 16, Fp8Kind::E5M2FNUZ>;

struct Float8_e8m0fnu {
  uint8_t bits = 0;
  Float8_e8m0fnu() = default;
  Float8_e8m0fnu(float f) : bits(encode(f)) {}                                          // NOLINT
  operator float() const { return bits == 0xFF ? NAN : std::ldexp(1.0f, bits - 127); }  // NOLINT

  static uint8_t encode(float f) {
    if (std::isnan(f) || std::isinf(f)) return 0xFF;
    const uint32_t u = float_bits(f) & 0x7FFFFFFF;
    const uint32_t exp = u >> 23;
    if (exp == 0) return 0;               // zero and float subnormals: the smallest power, 2^-127
    const bool up = (u & 0x400000) != 0;  // mantissa >= 0.5: nearer (or tied) to the next power
    return static_cast<uint8_t>(std::min<uint32_t>(exp + (up ? 1 : 0), 0xFF));
  }
};

// complex32: two float16s; computes as complex64.
struct ComplexHalf {
  using value_type = Half;
  Half re, im;
  ComplexHalf() = default;
  ComplexHalf(Half r, Half i) : re(r), im(i) {}
  Half real() const { return re; }
  Half imag() const { return im; }
};

}  // namespace flambeau
