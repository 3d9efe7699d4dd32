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

struct DTypeInfo {
  const char* name;
  const char* torch_name;  // PyTorch's C++ name, which its error messages use
  size_t itemsize;
  bool floating_point, complex, is_signed;  // as PyTorch's dtype attributes report them
};
// In ScalarType order.
constexpr DTypeInfo kInfo[kNumScalarTypes] = {
    {"bool", "Bool", 1, false, false, false},
    {"uint8", "Byte", 1, false, false, false},
    {"int8", "Char", 1, false, false, true},
    {"int16", "Short", 2, false, false, true},
    {"int32", "Int", 4, false, false, true},
    {"int64", "Long", 8, false, false, true},
    {"float16", "Half", 2, true, false, true},
    {"bfloat16", "BFloat16", 2, true, false, true},
    {"float32", "Float", 4, true, false, true},
    {"float64", "Double", 8, true, false, true},
    {"complex64", "ComplexFloat", 8, false, true, true},
    {"complex128", "ComplexDouble", 16, false, true, true},
    {"uint16", "UInt16", 2, false, false, false},
    {"uint32", "UInt32", 4, false, false, false},
    {"uint64", "UInt64", 8, false, false, false},
    {"float8_e4m3fn", "Float8_e4m3fn", 1, true, false, true},
    {"float8_e5m2", "Float8_e5m2", 1, true, false, true},
    {"float8_e4m3fnuz", "Float8_e4m3fnuz", 1, true, false, true},
    {"float8_e5m2fnuz", "Float8_e5m2fnuz", 1, true, false, true},
    {"float8_e8m0fnu", "Float8_e8m0fnu", 1, true, false, false},
    {"complex32", "ComplexHalf", 4, false, true, true},
    {"float4_e2m1fn_x2", "Float4_e2m1fn_x2", 1, true, false, true},
    {"uint1", "UInt1", 1, false, false, false},
    {"uint2", "UInt2", 1, false, false, false},
    {"uint3", "UInt3", 1, false, false, false},
    {"uint4", "UInt4", 1, false, false, false},
    {"uint5", "UInt5", 1, false, false, false},
    {"uint6", "UInt6", 1, false, false, false},
    {"uint7", "UInt7", 1, false, false, false},
    {"int1", "Int1", 1, false, false, true},
    {"int2", "Int2", 1, false, false, true},
    {"int3", "Int3", 1, false, false, true},
    {"int4", "Int4", 1, false, false, true},
    {"int5", "Int5", 1, false, false, true},
    {"int6", "Int6", 1, false, false, true},
    {"int7", "Int7", 1, false, false, true},
    {"bits1x8", "Bits1x8", 1, false, false, false},
    {"bits2x4", "Bits2x4", 1, false, false, false},
    {"bits4x2", "Bits4x2", 1, false, false, false},
    {"bits8", "Bits8", 1, false, false, false},
    {"bits16", "Bits16", 2, false, false, false},
};

// The dtypes PyTorch's promotion refuses (it promotes complex32 like complex-of-float16).
bool promotes(ScalarType t) { return t <= ScalarType::Complex128 || t == ScalarType::ComplexHalf; }
}  // namespace

size_t itemsize(ScalarType t) { return kInfo[static_cast<int>(t)].itemsize; }

const char* dtype_name(ScalarType t) {
  if (t == ScalarType::Undefined) return "undefined";
  return kInfo[static_cast<int>(t)].name;
}

const char* torch_type_name(ScalarType t) {
  if (t == ScalarType::Undefined) return "Undefined";
  return kInfo[static_cast<int>(t)].torch_name;
}

bool is_floating_point_dtype(ScalarType t) {
  return t != ScalarType::Undefined && kInfo[static_cast<int>(t)].floating_point;
}
bool is_complex_dtype(ScalarType t) {
  return t != ScalarType::Undefined && kInfo[static_cast<int>(t)].complex;
}
bool is_signed_dtype(ScalarType t) {
  return t != ScalarType::Undefined && kInfo[static_cast<int>(t)].is_signed;
}

void fail_dtype(const char* op, ScalarType t) {
  fail<NotImplementedError>(op, ": not implemented for dtype ", dtype_name(t));
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
    case ScalarType::ComplexHalf:
      return ScalarType::Float16;
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
  if (!promotes(a) || !promotes(b)) {
    fail("Promotion for ", dtype_name(a), " and ", dtype_name(b),
         " is not supported: the 8-bit floats, uint16, uint32, uint64 and the shell dtypes "
         "promote with no other dtype; convert one operand first");
  }
  if (a == S::ComplexHalf || b == S::ComplexHalf) {
    // complex32 is complex-of-float16: the complex type of the promoted parts.
    S ra = to_real(a), rb = to_real(b);
    S parts = promote_types(is_floating(ra) ? ra : S::Float16, is_floating(rb) ? rb : S::Float16);
    return parts == S::Float16 ? S::ComplexHalf : to_complex(parts);
  }
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
  if (is_complex_dtype(from) && !is_complex_dtype(to)) return false;
  if (is_floating_point_dtype(from) && !is_floating_point_dtype(to) && !is_complex_dtype(to))
    return false;
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
