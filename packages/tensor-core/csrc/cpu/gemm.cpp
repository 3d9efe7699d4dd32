// GEMM on our thread pool, over single-threaded OpenBLAS (see blas.h).
#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>

#include "core/dtype.h"
#include "core/interpreter_lock.h"
#include "core/scratch.h"
#include "cpu/blas.h"
#include "cpu/parallel.h"

namespace flambeau {

namespace {

// OpenBLAS starts with one thread per core; ours is the only pool.
const bool g_blas_single_threaded = (scipy_openblas_set_num_threads(1), true);

template <class T>
void blas_call(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
               const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  const auto op_a = ta ? CblasTrans : CblasNoTrans, op_b = tb ? CblasTrans : CblasNoTrans;
  const int im = static_cast<int>(m), in = static_cast<int>(n), ik = static_cast<int>(k);
  const int ia = static_cast<int>(lda), ib = static_cast<int>(ldb), ic = static_cast<int>(ldc);
  if constexpr (std::is_same_v<T, float>) {
    scipy_cblas_sgemm(CblasRowMajor, op_a, op_b, im, in, ik, alpha, a, ia, b, ib, beta, c, ic);
  } else if constexpr (std::is_same_v<T, double>) {
    scipy_cblas_dgemm(CblasRowMajor, op_a, op_b, im, in, ik, alpha, a, ia, b, ib, beta, c, ic);
  } else {
    if constexpr (std::is_same_v<T, c64>)
      scipy_cblas_cgemm(CblasRowMajor, op_a, op_b, im, in, ik, &alpha, a, ia, b, ib, &beta, c, ic);
    else
      scipy_cblas_zgemm(CblasRowMajor, op_a, op_b, im, in, ik, &alpha, a, ia, b, ib, &beta, c, ic);
  }
}

constexpr int64_t kMinBlockWork = int64_t{1} << 18;  // multiply-adds worth a thread

// One single-precision product that writes the start of the work buffer of the call
// (128 x 1024 x 320: its packed panels fill ~0.5 MB), about 3 ms.
void write_blas_buffer() {
  constexpr int m = 128, n = 1024, k = 320;
  Scratch<float> a(m * k), b(k * n), c(m * n);
  scipy_cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(),
                    n, 0.0f, c.data(), n);
}

}  // namespace

// OpenBLAS gives each concurrent call a 32 MB work buffer from a pool that grows on
// demand, and the wheel's build (NO_WARMUP) leaves a new buffer's pages unfaulted.
// Its sgemm kernels prefetch ahead of the packed panels, into pages that a product
// of that size never writes; a software prefetch of an unfaulted page costs a failed
// page walk every time (dearest under a hypervisor's nested paging), so until some
// larger product had written those pages, mid-size products ran at a third of their
// speed for the life of the process (64x192x3136 and 256^3: 10 GFLOP/s against 33 on
// one Zen core). One product per buffer that writes its start fixes that. The pool
// hands each of several concurrent callers a buffer of its own, so `threads` threads
// run that product at the same time, once per new high-water mark of threads.
void prepare_blas_for_threads(int threads) {
  static std::atomic<int> prepared{0};
  if (prepared.load(std::memory_order_acquire) >= threads) return;
  static std::mutex lock;
  std::lock_guard<std::mutex> guard(lock);
  if (prepared.load(std::memory_order_relaxed) >= threads) return;
  // Callers are outside parallel regions. One thread needs no region (nor may a forked
  // child open one: see parallel.cpp).
  if (threads <= 1) {
    write_blas_buffer();
  } else {
#pragma omp parallel num_threads(threads)
    {
#pragma omp barrier
      write_blas_buffer();
    }
  }
  prepared.store(threads, std::memory_order_release);
}

template <class T>
void gemm(int64_t batch, bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, int64_t a_batch, const T* b, int64_t ldb, int64_t b_batch, T beta, T* c,
          int64_t ldc, int64_t c_batch) {
  if (batch <= 0 || m <= 0 || n <= 0) return;
  if (k == 0) {  // C = beta C; BLAS would reject the zero leading dimensions
    for (int64_t i = 0; i < batch; ++i)
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < n; ++j) {
          T& x = c[i * c_batch + r * ldc + j];
          x = beta == T(0) ? T(0) : beta * x;
        }
    return;
  }
  const int threads = get_num_threads();
  if (!omp_in_parallel()) prepare_blas_for_threads(threads);
  const bool big = batch * m * n * std::max<int64_t>(k, 1) >= kMinBlockWork;
  // Blocks per product: enough to give every thread work when the batch does
  // not, each still worth a thread and at least 8 rows or columns wide.
  int64_t parts = 1;
  if (big && threads > 1 && batch < threads && !omp_in_parallel()) {
    const int64_t wanted = (threads + batch - 1) / batch;
    const int64_t by_work = std::max<int64_t>(1, m * n * k / kMinBlockWork);
    parts = std::min({wanted, by_work, std::max(m, n) / 8 + 1});
  }
  const bool split_rows = m >= n;
  const int64_t side = split_rows ? m : n;
  auto block = [&](int64_t task) {
    const int64_t i = task / parts, part = task % parts;
    const int64_t lo = side * part / parts, hi = side * (part + 1) / parts;
    const T* pa = a + i * a_batch;
    const T* pb = b + i * b_batch;
    T* pc = c + i * c_batch;
    int64_t rows = m, cols = n;
    if (split_rows) {
      pa += ta ? lo : lo * lda;
      pc += lo * ldc;
      rows = hi - lo;
    } else {
      pb += tb ? lo * ldb : lo;
      pc += lo;
      cols = hi - lo;
    }
    if (rows > 0) blas_call<T>(ta, tb, rows, cols, k, alpha, pa, lda, pb, ldb, beta, pc, ldc);
  };
  const int64_t tasks = batch * parts;
  if (!big || tasks == 1) {
    std::optional<ReleaseInterpreterLock> unlocked;
    if (big) unlocked.emplace();
    for (int64_t t = 0; t < tasks; ++t) block(t);
    return;
  }
  parallel_for(0, tasks, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) block(t);
  });
}

#define FLB_INSTANTIATE_GEMM(T)                                                               \
  template void gemm<T>(int64_t, bool, bool, int64_t, int64_t, int64_t, T, const T*, int64_t, \
                        int64_t, const T*, int64_t, int64_t, T, T*, int64_t, int64_t);
FLB_INSTANTIATE_GEMM(float)
FLB_INSTANTIATE_GEMM(double)
FLB_INSTANTIATE_GEMM(c64)
FLB_INSTANTIATE_GEMM(c128)
#undef FLB_INSTANTIATE_GEMM

BlasThreadsForLapack::BlasThreadsForLapack() {
  if (get_num_threads() > 1 && !omp_in_parallel()) {
    scipy_openblas_set_num_threads(get_num_threads());
    set_ = true;
  }
}

BlasThreadsForLapack::~BlasThreadsForLapack() {
  if (set_) scipy_openblas_set_num_threads(1);
}

}  // namespace flambeau
