// Binary and unary math in the compute type, as the CPU kernels
// (cpu/minmax_kernels.cpp, binary_kernels.cpp, pointwise_numeric_kernels.cpp,
// special_kernels.cpp, unary_kernels.cpp, complex_kernels.cpp, compare_kernels.cpp):
// - floating dtypes: atan2, copysign, hypot, logaddexp, logaddexp2, xlogy,
//   special_xlog1py, ldexp, nextafter (one step of the 16-bit types' bit pattern),
//   angle, deg2rad, rad2deg, sinc; frexp (mantissa and int32 exponent);
// - integer and floating dtypes: fmod, remainder (an integer zero divisor gives 0:
//   the CPU raises ZeroDivisionError, a kernel cannot);
// - integer dtypes: gcd, lcm;
// - every real dtype and bool: heaviside, conj_physical and sgn of real inputs (a
//   copy, sign), nan_to_num, and signbit and isreal into bool.
// 16-bit floats compute in float, as the CPU does.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"

namespace flambeau::cuda::kernels {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kLn2 = 0.693147180559945309417232121458176568;

// |x| as the unsigned type of T's width (defined for the most negative value).
template <class T>
__device__ inline std::make_unsigned_t<T> magnitude(T x) {
  using U = std::make_unsigned_t<T>;
  if constexpr (std::is_signed_v<T>)
    return x < 0 ? static_cast<U>(U(0) - static_cast<U>(x)) : static_cast<U>(x);
  else
    return x;
}

// gcd(|a|, |b|) by Euclid's algorithm, wrapping to T as the CPU's.
template <class T>
__device__ inline T gcd_of(T a, T b) {
  auto x = magnitude(a), y = magnitude(b);
  while (x != 0) {
    const auto r = static_cast<decltype(x)>(y % x);
    y = x;
    x = r;
  }
  return static_cast<T>(y);
}

template <class A>
__device__ inline A logaddexp_of(A a, A b, bool base2) {
  if (isinf(a) && a == b) return a;
  const A m = a > b ? a : b;
  if (a != a || b != b) return a + b;
  const A d = -fabs(a - b);
  return base2 ? m + log1p(exp2(d)) / A(kLn2) : m + log1p(exp(d));
}

// The bit pattern of a 16-bit float held exactly in a float, and back.
template <class T>
__device__ inline uint16_t bits_of(float f) {
  if constexpr (std::is_same_v<T, __half>)
    return __half_as_ushort(__float2half_rn(f));
  else
    return __bfloat16_as_ushort(__float2bfloat16_rn(f));
}
template <class T>
__device__ inline float from_bits(uint16_t b) {
  if constexpr (std::is_same_v<T, __half>)
    return __half2float(__ushort_as_half(b));
  else
    return __bfloat162float(__ushort_as_bfloat16(b));
}

// The next T after f toward t, for the 16-bit types (one step of the sign and
// magnitude pattern; from zero the smallest subnormal with t's sign).
template <class T>
__device__ inline float nextafter_16bit(float f, float t) {
  if (f != f || t != t) return f + t;
  if (f == t) return t;
  if (f == 0.0f) return from_bits<T>(static_cast<uint16_t>((bits_of<T>(t) & 0x8000) | 1));
  const bool away_from_zero = (t > f) == (f > 0.0f);
  const uint16_t b = bits_of<T>(f);
  return from_bits<T>(static_cast<uint16_t>(away_from_zero ? b + 1 : b - 1));
}

// One functor for every MathOp over element type T, computing in A.
template <class T>
struct MathFn {
  using A = acc_t<T>;
  MathOp op;
  A nan, posinf, neginf;  // nan_to_num's replacements

  __device__ A operator()(A a, A b) const {
    if constexpr (std::is_floating_point_v<A>) {
      switch (op) {
        case MathOp::kAtan2:
          return atan2(a, b);
        case MathOp::kCopysign:
          return copysign(a, b);
        case MathOp::kHypot:
          return hypot(a, b);
        case MathOp::kLogaddexp:
          return logaddexp_of(a, b, false);
        case MathOp::kLogaddexp2:
          return logaddexp_of(a, b, true);
        case MathOp::kXlogy:
        case MathOp::kXlog1py:  // 0 where a == 0 unless b is NaN
          if (b != b) return b;
          if (a == A(0)) return A(0);
          return a * (op == MathOp::kXlogy ? log(b) : log1p(b));
        case MathOp::kLdexp:  // integral exponents exactly, even past 2**e's range
          if (b == trunc(b) && fabs(b) < A(1 << 20)) return ldexp(a, static_cast<int>(b));
          return a * exp2(b);
        case MathOp::kNextafter:
          if constexpr (is_16bit_float<T>)
            return nextafter_16bit<T>(a, b);
          else
            return nextafter(a, b);
        case MathOp::kFmod:
          return fmod(a, b);
        case MathOp::kRemainder: {
          A m = fmod(a, b);
          if (m != A(0) && ((b < A(0)) != (m < A(0)))) m += b;
          return m;
        }
        case MathOp::kHeaviside:
          return a == A(0) ? b : static_cast<A>(a > A(0));
        default:
          return a;
      }
    } else if constexpr (std::is_same_v<A, bool>) {
      return a == false ? b : a;  // heaviside: the only binary MathOp on bool
    } else {
      switch (op) {
        case MathOp::kFmod:
        case MathOp::kRemainder: {
          if (b == 0) return 0;  // the CPU raises ZeroDivisionError
          if constexpr (std::is_signed_v<A>) {
            if (b == -1) return 0;  // no INT_MIN % -1 overflow
          }
          A r = static_cast<A>(a % b);
          if constexpr (std::is_signed_v<A>) {
            if (op == MathOp::kRemainder && r != 0 && ((r < 0) != (b < 0)))
              r = static_cast<A>(r + b);
          }
          return r;
        }
        case MathOp::kGcd:
          return gcd_of(a, b);
        case MathOp::kLcm: {  // |a / gcd * b| in int64, wrapped to A; 0 when either is 0
          const int64_t g = static_cast<int64_t>(gcd_of(a, b));
          if (g == 0) return 0;
          const int64_t m = static_cast<int64_t>(a) / g * static_cast<int64_t>(b);
          return static_cast<A>(static_cast<int64_t>(magnitude(m)));
        }
        case MathOp::kHeaviside:
          return a == A(0) ? b : static_cast<A>(a > A(0));
        default:
          return a;
      }
    }
  }

  __device__ A operator()(A x) const {
    if constexpr (std::is_floating_point_v<A>) {
      switch (op) {
        case MathOp::kAngle:  // pi for negative values, 0 otherwise; NaN stays NaN
          return x != x ? x : (x < A(0) ? A(kPi) : A(0));
        case MathOp::kSgn:
          return A((A(0) < x) - (x < A(0)));
        case MathOp::kDeg2rad:
          return x * static_cast<A>(kPi / 180.0);
        case MathOp::kRad2deg:
          return x * static_cast<A>(1.0 / (kPi / 180.0));
        case MathOp::kSinc: {
          if (x == A(0)) return A(1);
          const A px = x * A(kPi);
          return sin(px) / px;
        }
        case MathOp::kNanToNum:
          return x != x ? nan : (isinf(x) ? (x > A(0) ? posinf : neginf) : x);
        default:
          return x;  // conj_physical
      }
    } else if constexpr (std::is_same_v<A, bool>) {
      return x;  // conj_physical, sgn and nan_to_num of a bool are itself
    } else {
      if (op != MathOp::kSgn) return x;  // conj_physical, nan_to_num
      if constexpr (std::is_signed_v<A>)
        return static_cast<A>((A(0) < x) - (x < A(0)));
      else
        return static_cast<A>(x != A(0));
    }
  }
};

// signbit and isreal: bool out.
template <class A>
struct BoolTest {
  bool signbit;
  __device__ bool operator()(A x) const {
    if (!signbit) return true;  // isreal: every real number is
    if constexpr (std::is_floating_point_v<A>)
      return ::signbit(x);  // -0.0 and negative NaN included
    else if constexpr (std::is_signed_v<A>)
      return x < 0;
    else
      return false;
  }
};

enum class Takes { kFloat, kRealNoBool, kInteger, kAny };

Takes dtypes_of(MathOp op) {
  switch (op) {
    case MathOp::kFmod:
    case MathOp::kRemainder:
      return Takes::kRealNoBool;
    case MathOp::kGcd:
    case MathOp::kLcm:
      return Takes::kInteger;
    case MathOp::kHeaviside:
    case MathOp::kConjPhysical:
    case MathOp::kSgn:
    case MathOp::kNanToNum:
    case MathOp::kSignbit:
    case MathOp::kIsreal:
      return Takes::kAny;
    default:
      return Takes::kFloat;
  }
}

int inputs_of(MathOp op) { return op <= MathOp::kHeaviside ? 2 : 1; }

template <class T>
bool takes(Takes t) {
  using A = acc_t<T>;
  switch (t) {
    case Takes::kFloat:
      return std::is_floating_point_v<A>;
    case Takes::kRealNoBool:
      return !std::is_same_v<T, bool>;
    case Takes::kInteger:
      return std::is_integral_v<T> && !std::is_same_v<T, bool>;
    case Takes::kAny:
      return true;
  }
  return false;
}

// The largest finite value of T, in its compute type (nan_to_num's default).
template <class T>
acc_t<T> largest() {
  if constexpr (std::is_same_v<T, __half>)
    return 65504.0f;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return 3.38953138925153547590e38f;  // 0x7f7f
  else
    return std::numeric_limits<T>::max();
}

template <class T>
MathFn<T> make_math(MathOp op, const flb_kernel_call* c) {
  using A = acc_t<T>;
  MathFn<T> f{op, A(0), A(0), A(0)};
  if constexpr (std::is_floating_point_v<A>) {
    if (op == MathOp::kNanToNum) {
      // A bool scalar means "not given": the largest and lowest finite T.
      auto given = [&](int i) { return c->n_scalars > i && c->scalars[i].kind != FLB_SCALAR_BOOL; };
      f.nan = given(0) ? scalar_as<A>(c->scalars[0]) : A(0);
      f.posinf = given(1) ? scalar_as<A>(c->scalars[1]) : largest<T>();
      f.neginf = given(2) ? scalar_as<A>(c->scalars[2]) : A(-largest<T>());
    }
  }
  return f;
}

template <class T, class Index>
__global__ void frexp_loop(StridedIndex<3> ix, char* mantissa, char* exponent, const char* in,
                           Index n) {
  const Index step = static_cast<Index>(blockDim.x) * gridDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    Index off[3];
    ix.offsets(i, off);
    const acc_t<T> x = convert<acc_t<T>>(*reinterpret_cast<const T*>(in + off[2]));
    int e = 0;
    const acc_t<T> m = ::frexp(x, &e);
    *reinterpret_cast<T*>(mantissa + off[0]) = convert<T>(m);
    // Infinities and NaN have exponent 0, as PyTorch's.
    *reinterpret_cast<int32_t*>(exponent + off[1]) = isfinite(x) ? e : 0;
  }
}

}  // namespace

flb_status math(void* ctx, const flb_kernel_call* c) {
  const MathOp op = *static_cast<const MathOp*>(ctx);
  const int nin = inputs_of(op);
  const bool bool_out = op == MathOp::kSignbit || op == MathOp::kIsreal;
  if (c->n_tensors != nin + 1 || !inputs_dtype(c, c->tensors[1].dtype) ||
      (bool_out ? c->tensors[0].dtype != FLB_BOOL : c->tensors[0].dtype != c->tensors[1].dtype))
    return unsupported_dtypes(c);
  flb_status status = FLB_OK;
  const bool known = dispatch(c->tensors[1].dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    if (!takes<T>(dtypes_of(op)))
      status = unsupported_dtypes(c);
    else if (bool_out)
      status = launch_elementwise_to<bool, T, 1>(c, BoolTest<A>{op == MathOp::kSignbit});
    else if (nin == 2)
      status = launch_elementwise<T, 2>(c, make_math<T>(op, c));
    else
      status = launch_elementwise<T, 1>(c, make_math<T>(op, c));
  });
  return known ? status : unsupported_dtypes(c);
}

flb_status frexp_kernel(void*, const flb_kernel_call* c) {
  if (c->n_tensors != 3 || c->tensors[1].dtype != FLB_INT32 ||
      c->tensors[0].dtype != c->tensors[2].dtype)
    return unsupported_dtypes(c);
  const flb_tensor& out = c->tensors[0];
  for (int k = 1; k < 3; ++k)
    if (c->tensors[k].ndim != out.ndim)
      return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "ranks differ");
  const int64_t n = numel(out);
  return with_float_dtype(c, out.dtype, [&](auto tag) -> flb_status {
    using T = decltype(tag);
    if (n == 0) return FLB_OK;
    const int64_t* strides[3] = {out.strides, c->tensors[1].strides, c->tensors[2].strides};
    const int64_t item[3] = {sizeof(T), sizeof(int32_t), sizeof(T)};
    StridedIndex<3> ix;
    if (!make_index<3>(out.ndim, out.sizes, strides, item, &ix))
      return kernel_fail(FLB_NOT_IMPLEMENTED, c->op, "more than 16 non-mergeable dimensions");
    runtime::DeviceGuard guard(c->device_index);
    auto stream = static_cast<cudaStream_t>(c->stream);
    char* m = static_cast<char*>(out.data);
    char* e = static_cast<char*>(c->tensors[1].data);
    const char* in = static_cast<const char*>(c->tensors[2].data);
    constexpr int64_t widest = sizeof(T) > 4 ? sizeof(T) : 4;
    if (fits_32bit_index(ix, n, widest))
      frexp_loop<T, int32_t>
          <<<blocks_for(n), kThreads, 0, stream>>>(ix, m, e, in, static_cast<int32_t>(n));
    else
      frexp_loop<T, int64_t><<<blocks_for(n), kThreads, 0, stream>>>(ix, m, e, in, n);
    return launch_status(c->op);
  });
}

}  // namespace flambeau::cuda::kernels
