// Checks the indexing, sort and scan arithmetic of the CUDA kernels
// (csrc/backend/kernels/index_math.h, __host__ __device__ code) on the host:
// - resolve_index accepts exactly [0, size) (and [-size, 0) when negative indices
//   count from the end) and wraps negatives;
// - sorting the radix keys of random values (NaN, +-0, +-inf, subnormals, ties)
//   stably gives the permutation of a stable sort with the CPU's comparator (NaN
//   above all, -0.0 == +0.0), ascending and descending, for float64, float32,
//   float16, bfloat16 and the integers;
// - the cummax/cummin combine, applied as a block scan does (a tree over tiles
//   with a running prefix from the identity), gives the CPU loop's values and
//   indices; logcumsumexp's log_add_exp agrees with the sequential sum.
// Prints "ok <cases>" or the first failure.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "backend/kernels/index_math.h"

using namespace flambeau::cuda::kernels;

namespace {

int cases = 0;

bool fail(const char* what, long long a, long long b) {
  std::printf("FAIL %s: %lld vs %lld\n", what, a, b);
  return false;
}

bool check_resolve() {
  for (int64_t size = 0; size < 6; ++size) {
    for (int neg = 0; neg < 2; ++neg) {
      for (int64_t k = -8; k < 8; ++k) {
        int64_t pos = -99;
        const bool ok = resolve_index(k, size, neg != 0, &pos);
        const bool want = k < size && (k >= 0 || (neg && k >= -size));
        if (ok != want) return fail("resolve_index range", k, size);
        if (ok && pos != (k < 0 ? k + size : k)) return fail("resolve_index value", k, pos);
        ++cases;
      }
    }
  }
  int64_t pos = 0;
  if (!resolve_index(-5, -1, false, &pos) || pos != -5) return fail("checked offsets", pos, -5);
  return true;
}

// float16 / bfloat16 bits as a float (no rounding needed: both widen exactly).
float half_to_float(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(man), -24);
  else if (exp == 31)
    v = man ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else
    v = std::ldexp(static_cast<float>(man | 0x400), exp - 25);
  return sign ? -v : v;
}

float bfloat_to_float(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

// The CPU's order: a < b with NaN largest; stable sort breaks ties by index.
bool cpu_less(double a, double b) { return a < b || (std::isnan(b) && !std::isnan(a)); }

template <class U>
bool check_keys(const char* name, const std::vector<U>& bits, const std::vector<double>& values,
                KeyKind kind) {
  const size_t n = bits.size();
  for (int desc = 0; desc < 2; ++desc) {
    std::vector<size_t> want(n), got(n);
    std::iota(want.begin(), want.end(), 0);
    std::iota(got.begin(), got.end(), 0);
    std::stable_sort(want.begin(), want.end(), [&](size_t i, size_t j) {
      return desc ? cpu_less(values[j], values[i]) : cpu_less(values[i], values[j]);
    });
    std::vector<U> keys(n);
    for (size_t i = 0; i < n; ++i) keys[i] = directed_key<U>(order_key<U>(bits[i], kind), desc);
    std::stable_sort(got.begin(), got.end(), [&](size_t i, size_t j) { return keys[i] < keys[j]; });
    for (size_t i = 0; i < n; ++i) {
      if (got[i] != want[i]) {
        std::printf("FAIL keys %s desc=%d at %zu: value %g vs %g\n", name, desc, i, values[got[i]],
                    values[want[i]]);
        return false;
      }
    }
    ++cases;
  }
  return true;
}

template <class F, class U>
void special_floats(std::vector<U>& bits) {
  const F specials[] = {F(0),
                        -F(0),
                        std::numeric_limits<F>::infinity(),
                        -std::numeric_limits<F>::infinity(),
                        std::numeric_limits<F>::quiet_NaN(),
                        -std::numeric_limits<F>::quiet_NaN(),
                        std::numeric_limits<F>::denorm_min(),
                        -std::numeric_limits<F>::denorm_min(),
                        std::numeric_limits<F>::max(),
                        std::numeric_limits<F>::lowest(),
                        F(1),
                        F(-1)};
  for (F f : specials) {
    U u;
    std::memcpy(&u, &f, sizeof(F));
    bits.push_back(u);
    bits.push_back(u);  // ties
  }
}

template <class F, class U>
bool check_float_keys(const char* name, KeyKind kind, std::mt19937_64& rng) {
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<U> bits;
    special_floats<F, U>(bits);
    std::normal_distribution<F> normal(0, 100);
    for (int i = 0; i < 200; ++i) {
      F f = trial % 2 ? normal(rng) : std::round(normal(rng) / 50);  // many ties
      if (i % 37 == 0) f = std::nan("");
      U u;
      std::memcpy(&u, &f, sizeof(F));
      if (i % 11 == 0) u = static_cast<U>(rng());  // any pattern, NaN payloads included
      bits.push_back(u);
    }
    std::shuffle(bits.begin(), bits.end(), rng);
    std::vector<double> values;
    for (U u : bits) {
      F f;
      std::memcpy(&f, &u, sizeof(F));
      values.push_back(static_cast<double>(f));
    }
    if (!check_keys<U>(name, bits, values, kind)) return false;
  }
  return true;
}

template <class Decode>
bool check_half_keys(const char* name, KeyKind kind, Decode decode, std::mt19937_64& rng) {
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<uint16_t> bits;
    for (uint16_t s : {0x0000, 0x8000, 0x0001, 0x8001}) bits.push_back(s);
    for (int i = 0; i < 300; ++i)
      bits.push_back(static_cast<uint16_t>(trial % 2 ? rng() : (rng() & 0x80FF) | 0x3C00));
    std::vector<double> values;
    for (uint16_t u : bits) values.push_back(decode(u));
    if (!check_keys<uint16_t>(name, bits, values, kind)) return false;
  }
  return true;
}

template <class I>
bool check_int_keys(const char* name, std::mt19937_64& rng) {
  using U = std::make_unsigned_t<I>;
  const KeyKind kind = std::is_signed_v<I> ? KeyKind::kSigned : KeyKind::kUnsigned;
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<U> bits;
    std::vector<double> values;
    for (int i = 0; i < 300; ++i) {
      I v = static_cast<I>(trial % 2 ? rng() : rng() % 7);
      if (i == 0) v = std::numeric_limits<I>::min();
      if (i == 1) v = std::numeric_limits<I>::max();
      bits.push_back(static_cast<U>(v));
      // int64 values beyond 2**53 would tie in double: compare their high bits only.
      values.push_back(sizeof(I) == 8 ? static_cast<double>(v >> 12) : static_cast<double>(v));
      if (sizeof(I) == 8) bits.back() = static_cast<U>(v & ~I(0xFFF));
    }
    if (!check_keys<U>(name, bits, values, kind)) return false;
  }
  return true;
}

// The CPU's cummax/cummin loop.
std::vector<Extreme<double>> cpu_extreme(const std::vector<double>& x, bool is_max) {
  std::vector<Extreme<double>> out;
  double best = x[0];
  int64_t at = 0;
  for (size_t j = 0; j < x.size(); ++j) {
    const double k = x[j];
    if (std::isnan(k) || (!std::isnan(best) && (is_max ? k >= best : k <= best))) {
      best = k;
      at = static_cast<int64_t>(j);
    }
    out.push_back({best, at});
  }
  return out;
}

// An inclusive scan as the block kernel runs it: tiles of `tile` elements, each
// scanned as a Hillis-Steele tree, prefixed by the combination of earlier tiles
// (starting from the identity); the last tile padded with the identity.
template <class S, class Op>
std::vector<S> block_scan(const std::vector<S>& x, size_t tile, S identity, Op op) {
  std::vector<S> out;
  S running = identity;
  for (size_t base = 0; base < x.size(); base += tile) {
    std::vector<S> t(tile, identity);
    for (size_t i = 0; i < tile && base + i < x.size(); ++i) t[i] = x[base + i];
    for (size_t d = 1; d < tile; d *= 2) {
      std::vector<S> next = t;
      for (size_t i = d; i < tile; ++i) next[i] = op(t[i - d], t[i]);
      t = next;
    }
    for (size_t i = 0; i < tile && base + i < x.size(); ++i) out.push_back(op(running, t[i]));
    running = op(running, t[tile - 1]);
  }
  return out;
}

bool check_extreme(std::mt19937_64& rng) {
  for (int trial = 0; trial < 400; ++trial) {
    const size_t n = 1 + rng() % 70;
    std::vector<double> x(n);
    for (double& v : x) v = static_cast<double>(rng() % 5);  // ties
    if (trial % 3 == 0) x[rng() % n] = std::nan("");
    if (trial % 5 == 0) x[rng() % n] = -INFINITY;
    for (int is_max = 0; is_max < 2; ++is_max) {
      std::vector<Extreme<double>> elems;
      for (size_t j = 0; j < n; ++j) elems.push_back({x[j], static_cast<int64_t>(j)});
      const Extreme<double> identity{is_max ? -INFINITY : INFINITY, -1};
      auto op = [&](const Extreme<double>& a, const Extreme<double>& b) {
        return combine_extreme(a, b, is_max != 0);
      };
      const auto want = cpu_extreme(x, is_max != 0);
      for (size_t tile : {1, 4, 8, 32}) {
        const auto got = block_scan(elems, tile, identity, op);
        for (size_t j = 0; j < n; ++j) {
          const bool same_value = (std::isnan(got[j].value) && std::isnan(want[j].value)) ||
                                  got[j].value == want[j].value;
          if (!same_value || got[j].index != want[j].index)
            return fail("cummax index", got[j].index, want[j].index);
        }
        ++cases;
      }
    }
  }
  return true;
}

bool check_logcumsumexp(std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0, 5);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 1 + rng() % 100;
    std::vector<double> x(n);
    for (double& v : x) v = normal(rng);
    if (trial % 4 == 0) x[rng() % n] = -INFINITY;
    if (trial % 7 == 0) x[rng() % n] = INFINITY;
    if (trial % 11 == 0) x[rng() % n] = std::nan("");
    auto op = [](double a, double b) { return log_add_exp(a, b); };
    const auto got = block_scan(x, 16, -double(INFINITY), op);
    double acc = -INFINITY;
    for (size_t j = 0; j < n; ++j) {
      acc = log_add_exp(acc, x[j]);
      const bool ok = (std::isnan(acc) && std::isnan(got[j])) || acc == got[j] ||
                      std::fabs(acc - got[j]) <= 1e-12 * std::fabs(acc);
      if (!ok) {
        std::printf("FAIL logcumsumexp at %zu: %.17g vs %.17g\n", j, got[j], acc);
        return false;
      }
    }
    ++cases;
  }
  return true;
}

bool check_wrapping_and_passes() {
  if (wrapping_add(INT64_MAX, 1) != INT64_MIN) return fail("wrapping_add", 0, 0);
  if (wrapping_mul(INT64_MAX, 2) != -2) return fail("wrapping_mul", 0, 0);
  if (rows_per_pass(10, 3, 7) != 2) return fail("rows_per_pass", rows_per_pass(10, 3, 7), 2);
  if (rows_per_pass(10, 100, 7) != 1) return fail("rows_per_pass long rows", 0, 1);
  if (rows_per_pass(3, 1, 100) != 3) return fail("rows_per_pass all rows", 0, 3);
  cases += 5;
  return true;
}

}  // namespace

int main() {
  std::mt19937_64 rng(20261129);
  const bool ok = check_resolve() &&
                  check_float_keys<double, uint64_t>("float64", KeyKind::kFloat64, rng) &&
                  check_float_keys<float, uint32_t>("float32", KeyKind::kFloat32, rng) &&
                  check_half_keys("float16", KeyKind::kFloat16, half_to_float, rng) &&
                  check_half_keys("bfloat16", KeyKind::kBFloat16, bfloat_to_float, rng) &&
                  check_int_keys<int8_t>("int8", rng) && check_int_keys<uint8_t>("uint8", rng) &&
                  check_int_keys<int16_t>("int16", rng) && check_int_keys<int32_t>("int32", rng) &&
                  check_int_keys<int64_t>("int64", rng) && check_extreme(rng) &&
                  check_logcumsumexp(rng) && check_wrapping_and_passes();
  if (!ok) return 1;
  std::printf("ok %d\n", cases);
  return 0;
}
