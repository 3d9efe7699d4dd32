// Independent tasks on our threads, each thread with state of its own: a scratch
// buffer, partial sums. Convolution's samples, Winograd's tile blocks and attention's
// query blocks split their work here rather than each opening an OpenMP region of its
// own. (parallel_for, in parallel.h, is for loops without per-thread state.)
#pragma once
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "core/interpreter_lock.h"
#include "cpu/blas.h"
#include "cpu/parallel.h"

namespace flambeau {

// How many threads `tasks` tasks get: one inside a parallel region (the caller is
// already one of several), else up to the pool's size and no more than the tasks.
inline int task_threads(int64_t tasks) {
  if (tasks < 2 || omp_in_parallel()) return 1;
  return static_cast<int>(std::min<int64_t>(get_num_threads(), tasks));
}

enum class TaskOrder {
  kContiguous,  // thread `slot` of n takes tasks [tasks * slot / n, tasks * (slot + 1) / n)
  kDynamic,     // threads take the next task as they finish (tasks of uneven cost)
};

// Calls body(slot, lo, hi) for ranges of tasks covering [0, tasks) once, on `threads`
// threads (slot < threads names the thread, for its state; threads from task_threads).
// One thread runs body(0, 0, tasks) inline, where a gemm inside may use the pool
// itself. Tasks that call gemm (`calls_gemm`) run it single-threaded on their thread;
// OpenBLAS's buffers for that many concurrent calls are readied first (blas.h).
template <class F>
void run_tasks(int64_t tasks, int threads, TaskOrder order, bool calls_gemm, const F& body) {
  if (tasks <= 0) return;
  ReleaseInterpreterLock unlocked;
  if (threads <= 1) return body(0, int64_t{0}, tasks);
  if (calls_gemm) prepare_blas_for_threads(threads);
  std::atomic<int64_t> next{0};
#pragma omp parallel num_threads(threads)
  {
    const int slot = omp_get_thread_num(), n = omp_get_num_threads();
    if (order == TaskOrder::kContiguous) {
      body(slot, tasks * slot / n, tasks * (slot + 1) / n);
    } else {
      for (int64_t t = next++; t < tasks; t = next++) body(slot, t, t + 1);
    }
  }
}

}  // namespace flambeau
