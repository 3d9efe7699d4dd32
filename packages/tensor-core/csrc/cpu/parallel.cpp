#include "cpu/parallel.h"

#include <pthread.h>

#include "core/error.h"

namespace flambeau {

InterpreterLockHooks g_interpreter_lock;

namespace {
int g_threads = 0;  // 0: not yet read from OpenMP
// A child of fork() computes on its calling thread only: GNU OpenMP is not fork-safe
// (the child's first parallel region waits forever for the parent's pool threads), as
// PyTorch's data-loading workers run one thread.
bool g_forked = false;
const bool g_child_handler = (pthread_atfork(nullptr, nullptr, [] { g_forked = true; }), true);
}  // namespace

int get_num_threads() {
  if (g_forked) return 1;
  if (g_threads == 0) g_threads = std::max(1, omp_get_max_threads());
  return g_threads;
}

void set_num_threads(int n) {
  FLB_CHECK_T(ValueError, n > 0, "set_num_threads: expected a positive number of threads, got ", n);
  g_threads = n;
}

}  // namespace flambeau
