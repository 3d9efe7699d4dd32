// Index and ordering arithmetic of the indexing, scan and sort kernels, plain C++
// marked __host__ __device__ so the tests compile and check it with g++
// (tests/host_kernels/check_index_math.cpp): reading an index against its
// IndexSpec, the radix-sort keys of every real dtype (PyTorch's order, NaN above
// everything), and the scan operators' combine steps.
#pragma once
#include <flambeau/backend_kernels.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backend/kernels/strided_index.h"  // FLB_HD

namespace flambeau::cuda::kernels {

// How a scatter-like kernel combines a value with what dst holds (the core's PutMode,
// numbered by the plugin ABI).
enum class PutMode : int64_t {
  kAssign = FLB_PUT_MODE_ASSIGN,
  kAdd = FLB_PUT_MODE_ADD,
  kMultiply = FLB_PUT_MODE_MULTIPLY,
  kMax = FLB_PUT_MODE_MAX,
  kMin = FLB_PUT_MODE_MIN,
};

// Index k of a dim of `size` as a position in [0, size): negative k counts from the
// end when allow_negative. False when k is out of range; size < 0 means the index
// holds offsets the core already checked (k is used as it is).
FLB_HD inline bool resolve_index(int64_t k, int64_t size, bool allow_negative, int64_t* pos) {
  if (size < 0) {
    *pos = k;
    return true;
  }
  if (k >= size || k < (allow_negative ? -size : 0)) return false;
  *pos = k < 0 ? k + size : k;
  return true;
}

// ---- radix-sort keys --------------------------------------------------------

// An unsigned key of the IEEE float with `bits` (sign bit `sign`, exponent mask
// `exp`, mantissa mask `man`) ordered as the numbers: -0.0 equals +0.0 and every
// NaN becomes one key above +inf, as the CPU's comparisons (NaN largest, ties by
// index: the radix sort is stable).
template <class U>
FLB_HD inline U float_order_key(U bits, U sign, U exp, U man) {
  if ((bits & exp) == exp && (bits & man) != 0) return static_cast<U>(~U(0));  // any NaN
  if (bits == sign) bits = 0;                                                  // -0.0
  return (bits & sign) ? static_cast<U>(~bits) : static_cast<U>(bits | sign);
}

// Keys of the signed and unsigned integers (bool as 0/1).
template <class U>
FLB_HD inline U signed_order_key(U bits, U sign) {
  return static_cast<U>(bits ^ sign);
}

// Descending order: the complement of the ascending key (the sort stays stable, so
// equal keys keep index order, as the CPU's descending comparator).
template <class U>
FLB_HD inline U directed_key(U key, bool descending) {
  return descending ? static_cast<U>(~key) : key;
}

// The key of one element given as raw bits, by dtype kind.
enum class KeyKind { kUnsigned, kSigned, kFloat16, kBFloat16, kFloat32, kFloat64 };

template <class U>
FLB_HD inline U order_key(U bits, KeyKind kind) {
  switch (kind) {
    case KeyKind::kSigned:
      return signed_order_key<U>(bits, static_cast<U>(U(1) << (sizeof(U) * 8 - 1)));
    case KeyKind::kFloat16:
      return float_order_key<U>(bits, U(0x8000), U(0x7C00), U(0x03FF));
    case KeyKind::kBFloat16:
      return float_order_key<U>(bits, U(0x8000), U(0x7F80), U(0x007F));
    case KeyKind::kFloat32:
      return float_order_key<U>(bits, U(0x80000000u), U(0x7F800000u), U(0x007FFFFFu));
    case KeyKind::kFloat64:
      return float_order_key<U>(bits, static_cast<U>(0x8000000000000000ull),
                                static_cast<U>(0x7FF0000000000000ull),
                                static_cast<U>(0x000FFFFFFFFFFFFFull));
    default:
      return bits;
  }
}

// ---- scan operators ---------------------------------------------------------

// log(exp(a) + exp(b)) as the CPU's logcumsumexp: NaN wins, an infinite bound
// passes through, else the larger plus log1p of the difference's exp.
FLB_HD inline double log_add_exp(double a, double b) {
  if (a != a || b != b) return a + b;  // NaN
  const double hi = a > b ? a : b, lo = a > b ? b : a;
  if (lo == -INFINITY || hi == INFINITY) return hi;
  return hi + log1p(exp(lo - hi));
}

// cummax/cummin's running state: the best value seen (as its compute type C) and
// its index. One element j is {x_j, j}; combining an earlier state a with the
// state b of the elements after it gives the state of both, so the scan may be
// split anywhere: a NaN, once seen, stays (the latest one); ties move the index
// forward (b wins), as the CPU's loop.
template <class C>
struct Extreme {
  C value;
  int64_t index;
};

template <class C>
FLB_HD inline bool is_nan_value(C v) {
  if constexpr (std::is_floating_point_v<C>)
    return v != v;
  else
    return false;
}

template <class C>
FLB_HD inline Extreme<C> combine_extreme(const Extreme<C>& a, const Extreme<C>& b, bool is_max) {
  if (is_nan_value(b.value)) return b;
  if (is_nan_value(a.value)) return a;
  return (is_max ? !(b.value < a.value) : !(a.value < b.value)) ? b : a;
}

// Integer sums and products wrap as the CPU's int64 accumulator (done in uint64:
// signed overflow is undefined in C++).
FLB_HD inline int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
FLB_HD inline int64_t wrapping_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Rows of a [rows, n] problem per pass of a sort whose element count is an int
// (CUB's segmented sort): at least 1 and at most `limit` elements per pass.
FLB_HD inline int64_t rows_per_pass(int64_t rows, int64_t n, int64_t limit) {
  if (n <= 0) return rows;
  int64_t r = limit / n;
  if (r < 1) r = 1;
  return r < rows ? r : rows;
}

}  // namespace flambeau::cuda::kernels
