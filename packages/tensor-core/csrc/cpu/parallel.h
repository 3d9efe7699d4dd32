// parallel_for over [begin, end) in chunks of at least `grain` elements, on
// OpenMP threads. Work below one grain runs inline on the calling thread; work
// above it also releases Python's interpreter lock while it runs.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "core/interpreter_lock.h"

namespace flambeau {

constexpr int64_t kGrainSize = 32768;

int get_num_threads();
void set_num_threads(int n);

template <class F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  int64_t n = end - begin;
  if (n <= 0) return;
  if (n <= grain || omp_in_parallel()) {
    f(begin, end);
    return;
  }
  ReleaseInterpreterLock unlocked;
  int threads = get_num_threads();
  if (threads <= 1) {
    f(begin, end);
    return;
  }
  int64_t chunks = std::min<int64_t>(threads, (n + grain - 1) / grain);
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t lo = begin + n * c / chunks;
    int64_t hi = begin + n * (c + 1) / chunks;
    f(lo, hi);
  }
}

}  // namespace flambeau
