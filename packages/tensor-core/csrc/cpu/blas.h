// OpenBLAS (from the scipy-openblas32 wheel) as the CPU GEMM and LAPACK.
//
// One thread pool: OpenBLAS runs single-threaded and `gemm` cuts products into
// blocks on our OpenMP threads. Two pools on the same cores, OpenBLAS's
// pthreads and OpenMP's, starve each other's waiting threads, worst on a
// loaded machine (a 128x512x256 product took 20x longer). LAPACK routines,
// which we cannot cut up, borrow OpenBLAS's threads for the length of a call.
#pragma once
#include <cstdint>

namespace flambeau {

// C[i] = alpha op(A[i]) op(B[i]) + beta C[i] (row-major) for i < batch, where the
// matrices of operand X sit x_batch apart. Each product is cut into row or
// column blocks, one single-threaded OpenBLAS call each, spread over our
// threads; inside a parallel region it runs inline. T: float, double, c64, c128.
template <class T>
void gemm(int64_t batch, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha,
          const T* a, int64_t lda, int64_t a_batch, const T* b, int64_t ldb, int64_t b_batch,
          T beta, T* c, int64_t ldc, int64_t c_batch);

// One product.
template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  gemm<T>(1, trans_a, trans_b, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc, 0);
}

// Readies OpenBLAS for products on `threads` threads at once (see gemm.cpp): gemm
// calls it; code that calls gemm inside a parallel region of its own calls it first,
// outside the region, with the region's thread count. Cheap after the first time.
void prepare_blas_for_threads(int threads);

// OpenBLAS with as many threads as our pool for the scope of a LAPACK call
// (unless already inside a parallel region), single-threaded again after it.
class BlasThreadsForLapack {
 public:
  BlasThreadsForLapack();
  ~BlasThreadsForLapack();
  BlasThreadsForLapack(const BlasThreadsForLapack&) = delete;
  BlasThreadsForLapack& operator=(const BlasThreadsForLapack&) = delete;

 private:
  bool set_ = false;
};

}  // namespace flambeau
