// Element types, PyTorch's type-promotion lattice, and visit_dtype, which turns
// a runtime ScalarType into a C++ type for kernels.
#pragma once
#include <complex>
#include <cstdint>

#include "core/error.h"
#include "core/float8.h"
#include "core/half.h"

namespace flambeau {

enum class ScalarType : int8_t {
  Bool,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Complex64,
  Complex128,
  // PyTorch's dtypes of limited support: stored, viewed, copied and converted (the
  // 8-bit floats and complex32 through float); few operators compute with them.
  UInt16,
  UInt32,
  UInt64,
  Float8_e4m3fn,
  Float8_e5m2,
  Float8_e4m3fnuz,
  Float8_e5m2fnuz,
  Float8_e8m0fnu,
  ComplexHalf,
  // Shell dtypes: a dtype and storage for packed sub-byte data, as in PyTorch, where
  // libraries interpret the bytes; empty, zeros, views and copies only.
  Float4_e2m1fn_x2,
  UInt1,
  UInt2,
  UInt3,
  UInt4,
  UInt5,
  UInt6,
  UInt7,
  Int1,
  Int2,
  Int3,
  Int4,
  Int5,
  Int6,
  Int7,
  Bits1x8,
  Bits2x4,
  Bits4x2,
  Bits8,
  Bits16,
  Undefined,
};
constexpr int kNumScalarTypes = 41;

using c64 = std::complex<float>;
using c128 = std::complex<double>;

size_t itemsize(ScalarType t);
const char* dtype_name(ScalarType t);  // "float32"
// is_complex, is_floating and is_integral describe the types operators compute with
// (complex32, the 8-bit floats and the wide unsigned types are none of them); the
// dtype attributes PyTorch reports (dtype.is_floating_point, ...) are the *_dtype ones.
inline bool is_complex(ScalarType t) {
  return t == ScalarType::Complex64 || t == ScalarType::Complex128;
}
inline bool is_floating(ScalarType t) {
  return t >= ScalarType::Float16 && t <= ScalarType::Float64;
}
bool is_floating_point_dtype(ScalarType t);  // PyTorch's dtype.is_floating_point
bool is_complex_dtype(ScalarType t);         // PyTorch's dtype.is_complex
bool is_signed_dtype(ScalarType t);          // PyTorch's dtype.is_signed
// Shell dtypes have storage but no element values (tolist, printing and conversions fail).
inline bool is_shell(ScalarType t) {
  return t >= ScalarType::Float4_e2m1fn_x2 && t < ScalarType::Undefined;
}
// Integral including bool when include_bool.
inline bool is_integral(ScalarType t, bool include_bool) {
  return (t >= ScalarType::UInt8 && t <= ScalarType::Int64) ||
         (include_bool && t == ScalarType::Bool);
}
inline bool is_signed(ScalarType t) { return t != ScalarType::Bool && t != ScalarType::UInt8; }
ScalarType promote_types(ScalarType a, ScalarType b);
bool can_cast(ScalarType from, ScalarType to);
ScalarType to_complex(ScalarType real);  // float32 -> complex64
ScalarType to_real(ScalarType complex);  // complex64 -> float32

ScalarType default_dtype();
void set_default_dtype(ScalarType t);
ScalarType default_complex_dtype();

// visit_dtype<Mask>(dtype, "op", [&](auto tag) { using T = typename decltype(tag)::type; })
template <class T>
struct Tag {
  using type = T;
};
// Only types some kernel computes with have a bit (the shell types, numbered 21 and up,
// have none): masks are 32 bits.
constexpr uint32_t dtype_bit(ScalarType t) {
  return static_cast<int>(t) < 32 ? 1u << static_cast<int>(t) : 0u;
}
constexpr uint32_t kBoolTypes = dtype_bit(ScalarType::Bool);
constexpr uint32_t kIntTypes = dtype_bit(ScalarType::UInt8) | dtype_bit(ScalarType::Int8) |
                               dtype_bit(ScalarType::Int16) | dtype_bit(ScalarType::Int32) |
                               dtype_bit(ScalarType::Int64);
constexpr uint32_t kFloatTypes = dtype_bit(ScalarType::Float16) | dtype_bit(ScalarType::BFloat16) |
                                 dtype_bit(ScalarType::Float32) | dtype_bit(ScalarType::Float64);
constexpr uint32_t kComplexTypes =
    dtype_bit(ScalarType::Complex64) | dtype_bit(ScalarType::Complex128);
constexpr uint32_t kRealTypes = kIntTypes | kFloatTypes;  // no bool, no complex
constexpr uint32_t kAllTypes = kBoolTypes | kIntTypes | kFloatTypes | kComplexTypes;
constexpr uint32_t kWideUnsignedTypes =
    dtype_bit(ScalarType::UInt16) | dtype_bit(ScalarType::UInt32) | dtype_bit(ScalarType::UInt64);
constexpr uint32_t kFloat8Types =
    dtype_bit(ScalarType::Float8_e4m3fn) | dtype_bit(ScalarType::Float8_e5m2) |
    dtype_bit(ScalarType::Float8_e4m3fnuz) | dtype_bit(ScalarType::Float8_e5m2fnuz) |
    dtype_bit(ScalarType::Float8_e8m0fnu);
// Every type with element values: what copies, fills, tolist and printing handle.
constexpr uint32_t kValueTypes =
    kAllTypes | kWideUnsignedTypes | kFloat8Types | dtype_bit(ScalarType::ComplexHalf);

[[noreturn]] void fail_dtype(const char* op, ScalarType t);

template <uint32_t Mask, class F>
decltype(auto) visit_dtype(ScalarType t, const char* op, F&& f) {
#define FLB_VISIT_CASE(ST, T)                         \
  case ScalarType::ST:                                \
    if constexpr (Mask & dtype_bit(ScalarType::ST)) { \
      return f(Tag<T>{});                             \
    }                                                 \
    break;
  switch (t) {
    FLB_VISIT_CASE(Bool, bool)
    FLB_VISIT_CASE(UInt8, uint8_t)
    FLB_VISIT_CASE(Int8, int8_t)
    FLB_VISIT_CASE(Int16, int16_t)
    FLB_VISIT_CASE(Int32, int32_t)
    FLB_VISIT_CASE(Int64, int64_t)
    FLB_VISIT_CASE(Float16, Half)
    FLB_VISIT_CASE(BFloat16, BFloat16)
    FLB_VISIT_CASE(Float32, float)
    FLB_VISIT_CASE(Float64, double)
    FLB_VISIT_CASE(Complex64, c64)
    FLB_VISIT_CASE(Complex128, c128)
    FLB_VISIT_CASE(UInt16, uint16_t)
    FLB_VISIT_CASE(UInt32, uint32_t)
    FLB_VISIT_CASE(UInt64, uint64_t)
    FLB_VISIT_CASE(Float8_e4m3fn, Float8_e4m3fn)
    FLB_VISIT_CASE(Float8_e5m2, Float8_e5m2)
    FLB_VISIT_CASE(Float8_e4m3fnuz, Float8_e4m3fnuz)
    FLB_VISIT_CASE(Float8_e5m2fnuz, Float8_e5m2fnuz)
    FLB_VISIT_CASE(Float8_e8m0fnu, Float8_e8m0fnu)
    FLB_VISIT_CASE(ComplexHalf, ComplexHalf)
    default:
      break;
  }
#undef FLB_VISIT_CASE
  fail_dtype(op, t);
}

template <class T>
constexpr ScalarType scalar_type_of();
#define FLB_TYPE_MAP(ST, T)                  \
  template <>                                \
  constexpr ScalarType scalar_type_of<T>() { \
    return ScalarType::ST;                   \
  }
FLB_TYPE_MAP(Bool, bool)
FLB_TYPE_MAP(UInt8, uint8_t)
FLB_TYPE_MAP(Int8, int8_t)
FLB_TYPE_MAP(Int16, int16_t)
FLB_TYPE_MAP(Int32, int32_t)
FLB_TYPE_MAP(Int64, int64_t)
FLB_TYPE_MAP(Float16, Half)
FLB_TYPE_MAP(BFloat16, BFloat16)
FLB_TYPE_MAP(Float32, float)
FLB_TYPE_MAP(Float64, double)
FLB_TYPE_MAP(Complex64, c64)
FLB_TYPE_MAP(Complex128, c128)
FLB_TYPE_MAP(UInt16, uint16_t)
FLB_TYPE_MAP(UInt32, uint32_t)
FLB_TYPE_MAP(UInt64, uint64_t)
FLB_TYPE_MAP(Float8_e4m3fn, Float8_e4m3fn)
FLB_TYPE_MAP(Float8_e5m2, Float8_e5m2)
FLB_TYPE_MAP(Float8_e4m3fnuz, Float8_e4m3fnuz)
FLB_TYPE_MAP(Float8_e5m2fnuz, Float8_e5m2fnuz)
FLB_TYPE_MAP(Float8_e8m0fnu, Float8_e8m0fnu)
FLB_TYPE_MAP(ComplexHalf, ComplexHalf)
#undef FLB_TYPE_MAP

// The type arithmetic happens in: float for the 16-bit floats, T otherwise.
template <class T>
struct compute_type {
  using type = T;
};
template <>
struct compute_type<Half> {
  using type = float;
};
template <>
struct compute_type<BFloat16> {
  using type = float;
};
template <int E, int M, int B, Fp8Kind K>
struct compute_type<Float8<E, M, B, K>> {
  using type = float;
};
template <>
struct compute_type<Float8_e8m0fnu> {
  using type = float;
};
template <class T>
using compute_t = typename compute_type<T>::type;

template <class T>
struct is_complex_t : std::false_type {};
template <class T>
struct is_complex_t<std::complex<T>> : std::true_type {};
template <>
struct is_complex_t<ComplexHalf> : std::true_type {};

// Converts between any two element types (complex -> real keeps the real part,
// anything -> bool tests for non-zero), as a cast in PyTorch does.
template <class To, class From>
inline To convert(const From& v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (is_complex_t<From>::value)
      return v.real() != 0 || v.imag() != 0;
    else
      return static_cast<compute_t<From>>(v) != 0;
  } else if constexpr (is_complex_t<From>::value) {
    if constexpr (is_complex_t<To>::value)
      return To(v.real(), v.imag());
    else
      return To(static_cast<compute_t<To>>(v.real()));
  } else if constexpr (is_complex_t<To>::value) {
    return To(static_cast<typename To::value_type>(static_cast<compute_t<From>>(v)), 0);
  } else if constexpr (std::is_integral_v<To> && !std::is_integral_v<compute_t<From>>) {
    // Float to integer: out-of-range and NaN are undefined in C++; saturate through int64
    // the way the hardware conversion PyTorch relies on behaves for in-range values.
    double d = static_cast<double>(static_cast<compute_t<From>>(v));
    if (!(d == d)) return To(0);
    if (d >= 9.2233720368547758e18) return static_cast<To>(INT64_MAX);
    if (d <= -9.2233720368547758e18) return static_cast<To>(INT64_MIN);
    return static_cast<To>(static_cast<int64_t>(d));
  } else {
    return static_cast<To>(static_cast<compute_t<To>>(static_cast<compute_t<From>>(v)));
  }
}

}  // namespace flambeau
