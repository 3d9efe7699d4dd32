#include "cpu/parallel.h"

#include "core/error.h"

namespace flambeau {

InterpreterLockHooks g_interpreter_lock;

namespace {
int g_threads = 0;  // 0: not yet read from OpenMP
}

int get_num_threads() {
  if (g_threads == 0) g_threads = std::max(1, omp_get_max_threads());
  return g_threads;
}

void set_num_threads(int n) {
  FLB_CHECK_T(ValueError, n > 0, "set_num_threads: expected a positive number of threads, got ", n);
  g_threads = n;
}

}  // namespace flambeau
