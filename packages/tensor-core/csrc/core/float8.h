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

  // Bit arithmetic only (no libm calls): conversions run at memory speed.
  static float decode(uint8_t b) {
    if (kFnuz && b == 0x80) return NAN;
    const uint32_t sign = static_cast<uint32_t>(b & 0x80) << 24;
    const uint32_t e = (b >> ManBits) & kExpMax;
    const uint32_t m = b & kManMask;
    if (K == Fp8Kind::E5M2 && e == kExpMax) return bits_float(sign | 0x7F800000 | (m << 21));
    if (K == Fp8Kind::E4M3FN && e == kExpMax && m == kManMask) return NAN;
    if (e == 0) {  // subnormal: m quanta of 2^(1 - Bias - ManBits), exact in float
      const float v =
          static_cast<float>(m) * bits_float(static_cast<uint32_t>(127 + 1 - Bias - ManBits) << 23);
      return bits_float(sign | float_bits(v));
    }
    return bits_float(sign | ((e - Bias + 127) << 23) | (m << (23 - ManBits)));
  }

  // Round to nearest even on the format's grid, then apply its overflow rule.
  static uint8_t encode(float f) {
    const uint32_t u = float_bits(f);
    const uint8_t sign = static_cast<uint8_t>((u >> 24) & 0x80);
    const uint32_t a = u & 0x7FFFFFFF;
    if (a > 0x7F800000) return kFnuz ? 0x80 : static_cast<uint8_t>(sign | 0x7F);  // NaN
    constexpr uint32_t kMaxCode = kFnuz ? 0x7F : (K == Fp8Kind::E5M2 ? 0x7B : 0x7E);
    uint32_t code;
    if ((a >> 23) >= static_cast<uint32_t>(127 - Bias + 1)) {
      // A normal result: drop mantissa bits with round-half-even (a carry moves into the
      // exponent, as it should), then rebias the exponent.
      constexpr int kDrop = 23 - ManBits;
      const uint32_t rounded = (a + ((1u << (kDrop - 1)) - 1) + ((a >> kDrop) & 1)) >> kDrop;
      code = rounded - (static_cast<uint32_t>(127 - Bias) << ManBits);
    } else {
      // A subnormal (or zero) result: count quanta of 2^(1 - Bias - ManBits), rounded half
      // to even by the float adder (adding 1.5 * 2^23 leaves whole numbers in the mantissa);
      // rounding up to 2^ManBits quanta gives the first normal's code, as it should.
      const float quanta =
          bits_float(a) * bits_float(static_cast<uint32_t>(127 - 1 + Bias + ManBits) << 23);
      code = static_cast<uint32_t>((quanta + 12582912.0f) - 12582912.0f);
    }
    if (code > kMaxCode) {  // overflow, infinity included
      if (K == Fp8Kind::E4M3FN) return sign | 0x7E;
      if (K == Fp8Kind::E5M2) return sign | 0x7C;
      return 0x80;
    }
    if (code == 0) return kFnuz ? 0 : sign;
    return static_cast<uint8_t>(sign | code);
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
