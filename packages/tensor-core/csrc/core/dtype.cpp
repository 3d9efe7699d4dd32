#include "core/dtype.h"

namespace flambeau {

namespace {
ScalarType g_default_dtype = ScalarType::Float32;

int category(ScalarType t) {  // bool < integral < floating < complex
  if (t == ScalarType::Bool) return 0;
  if (is_integral(t, false)) return 1;
  if (is_floating(t)) return 2;
  return 3;
}
}  // namespace

size_t itemsize(ScalarType t) {
  static constexpr size_t sizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
  return sizes[static_cast<int>(t)];
}

const char* dtype_name(ScalarType t) {
  static constexpr const char* names[] = {"bool",    "uint8",   "int8",      "int16",
                                          "int32",   "int64",   "float16",   "bfloat16",
                                          "float32", "float64", "complex64", "complex128"};
  if (t == ScalarType::Undefined) return "undefined";
  return names[static_cast<int>(t)];
}

void fail_dtype(const char* op, ScalarType t) {
  fail(op, ": not implemented for dtype ", dtype_name(t));
}

ScalarType to_complex(ScalarType t) {
  switch (t) {
    case ScalarType::Float64:
    case ScalarType::Complex128:
      return ScalarType::Complex128;
    default:
      return ScalarType::Complex64;
  }
}

ScalarType to_real(ScalarType t) {
  switch (t) {
    case ScalarType::Complex64:
      return ScalarType::Float32;
    case ScalarType::Complex128:
      return ScalarType::Float64;
    default:
      return t;
  }
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  using S = ScalarType;
  if (a == b) return a;
  if (a == S::Undefined) return b;
  if (b == S::Undefined) return a;
  int ca = category(a), cb = category(b);
  if (ca != cb) {
    S hi = ca > cb ? a : b, lo = ca > cb ? b : a;
    // A complex type widens to hold a wider real float (complex64 + float64).
    if (is_complex(hi) && is_floating(lo) && itemsize(lo) == 8) return S::Complex128;
    return hi;
  }
  switch (ca) {
    case 1: {  // integral: uint8 with a signed type needs the next signed width
      if (a == S::UInt8 || b == S::UInt8) {
        S other = a == S::UInt8 ? b : a;
        return other == S::Int8 ? S::Int16 : other;
      }
      return itemsize(a) > itemsize(b) ? a : b;
    }
    case 2:  // floating: float16 and bfloat16 meet at float32
      if (itemsize(a) == itemsize(b)) return S::Float32;
      return itemsize(a) > itemsize(b) ? a : b;
    default:
      return itemsize(a) > itemsize(b) ? a : b;
  }
}

bool can_cast(ScalarType from, ScalarType to) {
  if (is_complex(from) && !is_complex(to)) return false;
  if (is_floating(from) && is_integral(to, true)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

ScalarType default_dtype() { return g_default_dtype; }
void set_default_dtype(ScalarType t) {
  FLB_CHECK_T(TypeError,
              t == ScalarType::Float32 || t == ScalarType::Float64 || t == ScalarType::Float16 ||
                  t == ScalarType::BFloat16,
              "set_default_dtype: only floating-point types are supported as the default "
              "type, got ",
              dtype_name(t));
  g_default_dtype = t;
}
ScalarType default_complex_dtype() {
  return g_default_dtype == ScalarType::Float64 ? ScalarType::Complex128 : ScalarType::Complex64;
}

}  // namespace flambeau
