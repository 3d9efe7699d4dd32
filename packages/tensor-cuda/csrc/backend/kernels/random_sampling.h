// The core's Philox stream as its CPU samplers read it (packages/tensor-core/
// csrc/core/generator.h, cpu/philox_lanes.h, cpu/random_kernels.cpp), so that a
// seeded program draws the same numbers on CUDA as on the CPU. Lane j of a call
// is word j % 4 of Philox-4x32-10 at counter (base + j / 4) under the key (the
// generator's seed); base comes from core->generator_reserve. Element i reads
// lanes that depend on i alone:
//   uniform_: lanes i*k .. i*k+k-1 (k = 2 for float64, else 1);
//   normal_:  pair p = i / 2 reads lanes 2p, 2p+1 (float64: 4p..4p+3), Box-Muller,
//             cos for even i and sin for odd i;
//   random_:  lane i (range > 2**32: lanes 2i, 2i+1);
//   bernoulli_: lane i.
// In every case the lanes of element i lie in block i / (4 / k), so one thread per
// Philox block computes the block once and writes its 4 / k elements. Plain C++
// with __host__ __device__ marks: the tests compile it with g++ and compare it
// with the CPU's numbers (tests/host_kernels/).
#pragma once
#include <cmath>
#include <cstdint>

#include "backend/kernels/strided_index.h"  // FLB_HD

namespace flambeau::cuda::kernels {

struct PhiloxBlock {
  uint32_t w[4];
};

FLB_HD inline PhiloxBlock philox4x32(uint64_t key64, uint64_t counter) {
  uint32_t k0 = static_cast<uint32_t>(key64), k1 = static_cast<uint32_t>(key64 >> 32);
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
  uint32_t c2 = 0, c3 = 0;
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

// The sampled element types: the bits a uniform holds follow the mantissa.
enum class UnitKind { kFloat64, kFloat32, kFloat16, kBFloat16 };

FLB_HD inline int lanes_per_uniform(UnitKind kind) { return kind == UnitKind::kFloat64 ? 2 : 1; }

// Blocks a call reserves for n lanes.
FLB_HD inline uint64_t blocks_for_lanes(uint64_t lanes) { return (lanes + 3) / 4; }

// A uniform on [0, 1) from the lanes at word q of block b (two words for float64).
FLB_HD inline double unit_from(const PhiloxBlock& b, int q, UnitKind kind) {
  switch (kind) {
    case UnitKind::kFloat64: {
      const uint64_t bits = (static_cast<uint64_t>(b.w[q]) << 32) | b.w[q + 1];
      return static_cast<double>(bits >> 11) * 0x1.0p-53;
    }
    case UnitKind::kFloat16:
      return static_cast<double>(b.w[q] >> 21) * 0x1.0p-11;
    case UnitKind::kBFloat16:
      return static_cast<double>(b.w[q] >> 24) * 0x1.0p-8;
    default:
      return static_cast<double>(b.w[q] >> 8) * 0x1.0p-24;
  }
}

// normal_'s value (before mean and std) for element i, from its pair's block.
// k = lanes_per_uniform; the pair's first lane is word q0 of the block.
FLB_HD inline double normal_from(const PhiloxBlock& b, int64_t i, int k) {
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  double u1, u2;  // u1 in (0, 1] keeps the log finite
  if (k == 2) {
    const uint64_t hi = (static_cast<uint64_t>(b.w[0]) << 32) | b.w[1];
    const uint64_t lo = (static_cast<uint64_t>(b.w[2]) << 32) | b.w[3];
    u1 = 1.0 - static_cast<double>(hi >> 11) * 0x1.0p-53;
    u2 = static_cast<double>(lo >> 11) * 0x1.0p-53;
  } else {
    const int q0 = static_cast<int>(((i / 2) * 2) & 3);
    u1 = 1.0 - static_cast<double>(b.w[q0] >> 8) * 0x1.0p-24;
    u2 = static_cast<double>(b.w[q0 + 1] >> 8) * 0x1.0p-24;
  }
  const double r = sqrt(-2.0 * log(u1));
  return (i & 1) ? r * sin(kTwoPi * u2) : r * cos(kTwoPi * u2);
}

// random_'s integer for element i: from + bits % range, wrapping as uint64.
FLB_HD inline int64_t random_from(const PhiloxBlock& b, int q, int k, int64_t from,
                                  uint64_t range) {
  const uint64_t bits =
      k == 2 ? (static_cast<uint64_t>(b.w[q]) << 32) | b.w[q + 1] : static_cast<uint64_t>(b.w[q]);
  return static_cast<int64_t>(static_cast<uint64_t>(from) + bits % range);
}

// bernoulli_'s uniform for the lane at word q: 32 bits on [0, 1).
FLB_HD inline double bernoulli_unit(const PhiloxBlock& b, int q) {
  return static_cast<double>(b.w[q]) * 0x1.0p-32;
}

}  // namespace flambeau::cuda::kernels
