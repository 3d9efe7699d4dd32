// Reading a sampling call's Philox lanes on the CPU (see ops/random_kernels.h).
#pragma once
#include <array>
#include <cstdint>
#include <type_traits>

#include "core/generator.h"
#include "core/half.h"

namespace flambeau {

constexpr double kTwoPi = 6.283185307179586476925286766559;

// Reads lanes of the stream, computing each Philox block once.
class Lanes {
 public:
  Lanes(uint64_t key, uint64_t base) : key_(key), base_(base) {}
  uint32_t at(uint64_t j) {
    uint64_t b = j >> 2;
    if (b != cached_) {
      block_ = philox4x32(key_, base_ + b);
      cached_ = b;
    }
    return block_[j & 3];
  }
  uint64_t at64(uint64_t j) { return (static_cast<uint64_t>(at(j)) << 32) | at(j + 1); }

 private:
  uint64_t key_, base_;
  uint64_t cached_ = ~uint64_t(0);
  std::array<uint32_t, 4> block_{};
};

inline uint64_t blocks_for(uint64_t lanes) { return (lanes + 3) / 4; }

// Lanes one element of T uses for a uniform draw: two for float64.
template <class T>
constexpr int lanes_per_uniform() {
  return std::is_same_v<T, double> ? 2 : 1;
}

// A uniform on [0, 1) holding exactly as many random bits as T's mantissa, so
// rounding to T can never reach 1.
template <class T>
double unit(Lanes& l, uint64_t j) {
  if constexpr (std::is_same_v<T, double>)
    return (l.at64(j) >> 11) * 0x1.0p-53;
  else if constexpr (std::is_same_v<T, Half>)
    return (l.at(j) >> 21) * 0x1.0p-11;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return (l.at(j) >> 24) * 0x1.0p-8;
  else
    return (l.at(j) >> 8) * 0x1.0p-24;
}

}  // namespace flambeau
