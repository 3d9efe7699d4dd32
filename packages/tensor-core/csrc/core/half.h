// 16-bit floating types stored as raw bits; arithmetic happens in float.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace flambeau {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) {  // NOLINT: behaves like a numeric type
    uint32_t u = float_bits(f);
    if (std::isnan(f)) {
      bits = 0x7FC0;
    } else {  // round to nearest even
      u += 0x7FFF + ((u >> 16) & 1);
      bits = static_cast<uint16_t>(u >> 16);
    }
  }
  operator float() const { return bits_float(static_cast<uint32_t>(bits) << 16); }  // NOLINT
};

struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f) { bits = from_float(f); }            // NOLINT
  operator float() const { return to_float(bits); }  // NOLINT

  static float to_float(uint16_t h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1F;
    uint32_t man = h & 0x3FF;
    if (exp == 0x1F) return bits_float(sign | 0x7F800000 | (man << 13));
    if (exp == 0) {
      if (man == 0) return bits_float(sign);
      float v = std::ldexp(static_cast<float>(man), -24);  // subnormal
      return sign ? -v : v;
    }
    return bits_float(sign | ((exp + 112) << 23) | (man << 13));
  }
  static uint16_t from_float(float f) {
    uint32_t u = float_bits(f);
    uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
    uint32_t abs = u & 0x7FFFFFFF;
    if (abs >= 0x7F800000) return sign | 0x7C00 | (abs > 0x7F800000 ? 0x200 : 0);
    if (abs >= 0x477FF000) return sign | 0x7C00;  // rounds to inf
    if (abs < 0x38800000) {                       // subnormal half (or zero)
      float a = bits_float(abs);
      float scaled = a * 16777216.0f;  // 2^24: units of the smallest subnormal
      return sign | static_cast<uint16_t>(std::nearbyint(scaled));
    }
    uint32_t mant_odd = (abs >> 13) & 1;
    abs += 0xC8000FFF + mant_odd;  // rebias exponent (-112 << 23) and round to even
    return sign | static_cast<uint16_t>(abs >> 13);
  }
};

}  // namespace flambeau

namespace std {
template <>
class numeric_limits<flambeau::Half> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static flambeau::Half lowest() { return flambeau::Half(-65504.0f); }
  static flambeau::Half max() { return flambeau::Half(65504.0f); }
  static flambeau::Half infinity() { return flambeau::Half(INFINITY); }
  static flambeau::Half quiet_NaN() { return flambeau::Half(NAN); }
};
template <>
class numeric_limits<flambeau::BFloat16> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static flambeau::BFloat16 lowest() { return flambeau::BFloat16(-3.38953139e38f); }
  static flambeau::BFloat16 max() { return flambeau::BFloat16(3.38953139e38f); }
  static flambeau::BFloat16 infinity() { return flambeau::BFloat16(INFINITY); }
  static flambeau::BFloat16 quiet_NaN() { return flambeau::BFloat16(NAN); }
};
}  // namespace std
