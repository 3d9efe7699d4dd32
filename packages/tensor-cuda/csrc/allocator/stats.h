// Counters of torch.cuda.memory_stats, per device: each Stat has the current
// value, its peak, and the total increase (allocated) and decrease (freed).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace flambeau::cuda {

struct Stat {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;  // sum of increases
  int64_t freed = 0;      // sum of decreases

  void add(int64_t delta) {
    current += delta;
    if (current > peak) peak = current;
    if (delta > 0) allocated += delta;
    if (delta < 0) freed -= delta;
  }
  void reset_peak() { peak = current; }
  void reset_accumulated() { allocated = freed = 0; }
};

// The pools a statistic is split by: "all", "small_pool", "large_pool".
enum StatType : int { kAggregateStat = 0, kSmallPoolStat = 1, kLargePoolStat = 2 };
constexpr int kNumStatTypes = 3;
constexpr const char* kStatTypeNames[kNumStatTypes] = {"all", "small_pool", "large_pool"};

// One statistic split by pool; add() updates the pool's entry and "all".
struct StatArray {
  std::array<Stat, kNumStatTypes> by_type;

  void add(bool small_pool, int64_t delta) {
    by_type[kAggregateStat].add(delta);
    by_type[small_pool ? kSmallPoolStat : kLargePoolStat].add(delta);
  }
  const Stat& all() const { return by_type[kAggregateStat]; }
  void reset_peak() {
    for (Stat& s : by_type) s.reset_peak();
  }
  void reset_accumulated() {
    for (Stat& s : by_type) s.reset_accumulated();
  }
};

struct DeviceStats {
  StatArray allocation;              // live allocations (blocks handed out)
  StatArray segment;                 // device allocations held (cudaMalloc / reserved ranges)
  StatArray active;                  // allocated blocks plus freed ones waiting on events
  StatArray inactive_split;          // free blocks that are part of a split segment
  StatArray allocated_bytes;         // bytes in allocated blocks (rounded sizes)
  StatArray reserved_bytes;          // bytes held from the device (malloc'd or mapped)
  StatArray active_bytes;            // bytes in active blocks
  StatArray inactive_split_bytes;    // bytes in inactive split blocks
  StatArray requested_bytes;         // bytes the callers asked for (before rounding)
  Stat oversize_allocations;         // allocations of max_split_size or more
  Stat oversize_segments;            // segments of max_split_size or more
  int64_t num_alloc_retries = 0;     // allocations that succeeded only after freeing the cache
  int64_t num_ooms = 0;              // OutOfMemoryErrors raised
  int64_t num_sync_all_streams = 0;  // waits for every pending event (empty_cache, OOM)
  int64_t num_device_alloc = 0;      // malloc and map calls
  int64_t num_device_free = 0;       // free and unmap calls
  int64_t max_split_size = 0;        // the setting, for reference (-1: unlimited)

  template <class F>
  void for_each_array(F&& f) {
    f(allocation), f(segment), f(active), f(inactive_split), f(allocated_bytes), f(reserved_bytes),
        f(active_bytes), f(inactive_split_bytes), f(requested_bytes);
  }
  void reset_peak() {
    for_each_array([](StatArray& s) { s.reset_peak(); });
    oversize_allocations.reset_peak();
    oversize_segments.reset_peak();
  }
  void reset_accumulated() {
    for_each_array([](StatArray& s) { s.reset_accumulated(); });
    oversize_allocations.reset_accumulated();
    oversize_segments.reset_accumulated();
    num_alloc_retries = num_ooms = num_sync_all_streams = 0;
    num_device_alloc = num_device_free = 0;
  }
};

}  // namespace flambeau::cuda
