// Size classes of the caching allocator (PyTorch's CUDA caching allocator's
// constants, so that memory_stats and OOM behaviour read the same).
#pragma once
#include <cstddef>
#include <cstdint>

namespace flambeau::cuda {

constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kMinBlockSize = 512;         // every block is a multiple of this
constexpr size_t kSmallSize = 1 * kMiB;       // requests up to this use the small pool
constexpr size_t kSmallBuffer = 2 * kMiB;     // a small-pool segment
constexpr size_t kMinLargeAlloc = 10 * kMiB;  // below this a large request carves kLargeBuffer
constexpr size_t kLargeBuffer = 20 * kMiB;    // a large-pool segment for mid-sized requests
constexpr size_t kRoundLarge = 2 * kMiB;      // larger requests get a segment of their own size
// roundup_power2_divisions has one setting per power-of-two interval: (0, 1 MiB],
// (1, 2 MiB], ..., (8 GiB, 16 GiB] and one for everything above.
constexpr int kRoundupIntervals = 16;

constexpr size_t round_up(size_t n, size_t step) { return (n + step - 1) / step * step; }
constexpr size_t round_down(size_t n, size_t step) { return n / step * step; }

inline int floor_log2(size_t n) { return 63 - __builtin_clzll(n); }

// The interval of `size` in roundup_power2_divisions: 0 for sizes up to 1 MiB,
// k for (2^(k-1) MiB, 2^k MiB], the last one for everything larger.
inline int roundup_interval(size_t size) {
  if (size <= kMiB) return 0;
  int k = floor_log2((size - 1) / kMiB) + 1;
  return k < kRoundupIntervals ? k : kRoundupIntervals - 1;
}

// Rounds `size` up to the next of `divisions` equal steps between the powers of
// two around it: with 4 divisions 1200 MiB becomes 1280 MiB (steps of 256 MiB
// between 1 GiB and 2 GiB). Powers of two stay as they are.
inline size_t round_to_power2_division(size_t size, size_t divisions) {
  size_t floor_pow2 = size_t(1) << floor_log2(size);
  if (floor_pow2 == size) return size;
  size_t step = floor_pow2 / divisions;
  if (step == 0) return floor_pow2 << 1;
  return round_up(size, step);
}

}  // namespace flambeau::cuda
