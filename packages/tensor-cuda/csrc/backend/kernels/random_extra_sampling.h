// The per-element arithmetic of the samplers beyond uniform_/normal_/random_/
// bernoulli_ (random_extra_ops.cu), reading the core's Philox stream exactly as
// the CPU kernels do (packages/tensor-core/csrc/cpu/random_distributions.cpp and
// random_kernels.cpp), so a seeded program draws the same numbers on both devices:
//   exponential_, geometric_, cauchy_: element i transforms the open uniform at
//       lane i * k (k = 2 for float64: lanes 2i, 2i+1 as one 64-bit draw);
//   poisson: element i has its own Philox counter base + i and reads draw j from
//       word j % 4 of that counter with the high counter word j / 4;
//   multinomial with replacement: sample s of row r reads lane r * n + s;
//       without: category c of row r gets the key -log(u) / p_c, u from lane
//       r * categories + c, and the row's n smallest keys (ties: lower index) win;
//   randperm: step i of the Fisher-Yates shuffle (i from n - 1 down to 1) swaps
//       positions i and j = draw(i) % (i + 1), draw(i) the 64-bit value at lanes
//       2i, 2i+1 (randperm_target).
// Products feeding sums are rounded one at a time (rn_host_device.h), as the CPU
// computes them. Plain C++ with __host__ __device__ marks:
// tests/host_kernels/print_random_extra.cpp compiles it with g++ and the tests compare it with the
// CPU's samples.
#pragma once
#include <cmath>
#include <cstdint>

#include "backend/kernels/random_sampling.h"
#include "backend/kernels/rn_host_device.h"
#include "backend/kernels/strided_index.h"  // FLB_HD

namespace flambeau::cuda::kernels {

// The distributions that transform one uniform per element (log_normal_ draws a
// normal instead and is not here).
enum class DistributionOp { kExponential, kGeometric, kCauchy, kLogNormal };

// Philox-4x32-10 with the high counter words set (random_sampling.h's philox4x32
// leaves them 0): poisson's per-element streams count their blocks there.
FLB_HD inline PhiloxBlock philox4x32_hi(uint64_t key64, uint64_t counter, uint64_t counter_hi) {
  uint32_t k0 = static_cast<uint32_t>(key64), k1 = static_cast<uint32_t>(key64 >> 32);
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
  uint32_t c2 = static_cast<uint32_t>(counter_hi), c3 = static_cast<uint32_t>(counter_hi >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0;
    const uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c0 = n0;
    c1 = static_cast<uint32_t>(p1);
    c2 = n2;
    c3 = static_cast<uint32_t>(p0);
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

// Lane j of a call's stream (word j % 4 of the block at base + j / 4).
FLB_HD inline uint32_t lane_at(uint64_t key, uint64_t base, uint64_t j) {
  return philox4x32(key, base + (j >> 2)).w[j & 3];
}

// A uniform on (0, 1), never 0 or 1, from word q of block b (words q, q + 1 as
// one 64-bit draw when wide, for float64).
FLB_HD inline double open_unit_from(const PhiloxBlock& b, int q, bool wide) {
  if (wide) {
    const uint64_t bits = (static_cast<uint64_t>(b.w[q]) << 32) | b.w[q + 1];
    return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53;
  }
  return (static_cast<double>(b.w[q]) + 0.5) * 0x1.0p-32;
}

// The sample of distribution d from the open uniform u, in double.
FLB_HD inline double distribution_transform(DistributionOp d, double u, double a, double b) {
  constexpr double kPi = 3.141592653589793238462643383279502884;
  switch (d) {
    case DistributionOp::kExponential:
      return -log(u) / a;
    case DistributionOp::kGeometric:
      return ceil(log(u) / log1p(-a));
    case DistributionOp::kCauchy:
      return hd_add_rn(a, hd_mul_rn(b, tan(hd_mul_rn(kPi, u - 0.5))));
    case DistributionOp::kLogNormal:
      break;
  }
  return 0.0;
}

// One poisson element's unbounded stream of uniforms on (0, 1).
struct ElementStream {
  uint64_t key, counter, next = 0;
  PhiloxBlock block{};
  FLB_HD ElementStream(uint64_t k, uint64_t c) : key(k), counter(c) {}
  FLB_HD double uniform() {
    if ((next & 3) == 0) block = philox4x32_hi(key, counter, next >> 2);
    return (static_cast<double>(block.w[next++ & 3]) + 0.5) * 0x1.0p-32;
  }
};

// Small rates: count uniforms until their product drops below exp(-rate).
FLB_HD inline double poisson_by_products(ElementStream& s, double rate) {
  const double limit = exp(-rate);
  double product = s.uniform();
  double k = 0;
  while (product > limit) {
    product *= s.uniform();
    k += 1;
  }
  return k;
}

// Large rates: Hormann's transformed rejection with squeeze (PTRS, 1993).
FLB_HD inline double poisson_by_rejection(ElementStream& s, double rate) {
  const double root = sqrt(rate), log_rate = log(rate);
  const double b = hd_add_rn(0.931, hd_mul_rn(2.53, root));
  const double a = hd_add_rn(-0.059, hd_mul_rn(0.02483, b));
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
  const double v_r = 0.9277 - 3.6224 / (b - 2);
  while (true) {
    const double u = s.uniform() - 0.5, v = s.uniform();
    const double us = 0.5 - fabs(u);
    const double k = floor(hd_add_rn(hd_add_rn(hd_mul_rn(2 * a / us + b, u), rate), 0.43));
    if (us >= 0.07 && v <= v_r) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (log(v) + log(inv_alpha) - log(a / (us * us) + b) <=
        hd_add_rn(-rate, hd_mul_rn(k, log_rate)) - lgamma(k + 1))
      return k;
  }
}

// poisson's element i with rate `rate` (>= 0, finite), from counter base + i.
FLB_HD inline double poisson_sample(uint64_t key, uint64_t base, int64_t i, double rate) {
  if (rate == 0) return 0;
  ElementStream s(key, base + static_cast<uint64_t>(i));
  return rate < 10 ? poisson_by_products(s, rate) : poisson_by_rejection(s, rate);
}

// multinomial with replacement: the category whose cumulative weight first
// exceeds u * total, where cdf holds the row's running sums (cdf[cats - 1] the
// total) and `bits` the sample's lane; a zero-weight category at the top edge
// (rounding) steps down onto the support.
FLB_HD inline int64_t multinomial_pick(const double* row, const double* cdf, int64_t cats,
                                       uint32_t bits) {
  const double x = static_cast<double>(bits) * 0x1.0p-32 * cdf[cats - 1];
  int64_t lo = 0, hi = cats;  // upper_bound: the first c with cdf[c] > x
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (cdf[mid] > x)
      hi = mid;
    else
      lo = mid + 1;
  }
  int64_t c = lo < cats - 1 ? lo : cats - 1;
  while (row[c] == 0 && c > 0) --c;
  return c;
}

// multinomial without replacement: category c's key from its lane's bits and
// weight p (an infinite key for a zero weight, never drawn).
FLB_HD inline double multinomial_key(uint32_t bits, double p) {
  const double e = -log((static_cast<double>(bits) + 0.5) * 0x1.0p-32);
  return p > 0 ? e / p : HUGE_VAL;
}

// randperm: the position step i (1 <= i < n) swaps with, from the block holding
// lanes 2i and 2i + 1 (block (2i) / 4, words (2i) % 4 and the next).
FLB_HD inline int64_t randperm_target(const PhiloxBlock& b, int64_t i) {
  const int q = static_cast<int>((2 * i) & 3);
  const uint64_t draw = (static_cast<uint64_t>(b.w[q]) << 32) | b.w[q + 1];
  return static_cast<int64_t>(draw % static_cast<uint64_t>(i + 1));
}

}  // namespace flambeau::cuda::kernels
