// LAPACK from OpenBLAS (the scipy-openblas32 wheel, whose symbols carry a
// `scipy_` prefix). Fortran conventions: arguments by pointer, matrices
// column-major, 32-bit integers, and one hidden length argument per character
// argument at the end (gfortran's ABI).
#pragma once
#include <complex>
#include <cstddef>

extern "C" {

using lapack_int = int;
using fchar_len = size_t;

#define FLB_LAPACK_COMMON(P, T, R)                                                              \
  void scipy_##P##getrf_(const lapack_int* m, const lapack_int* n, T* a, const lapack_int* lda, \
                         lapack_int* ipiv, lapack_int* info);                                   \
  void scipy_##P##getrs_(const char* trans, const lapack_int* n, const lapack_int* nrhs,        \
                         const T* a, const lapack_int* lda, const lapack_int* ipiv, T* b,       \
                         const lapack_int* ldb, lapack_int* info, fchar_len);                   \
  void scipy_##P##potrf_(const char* uplo, const lapack_int* n, T* a, const lapack_int* lda,    \
                         lapack_int* info, fchar_len);                                          \
  void scipy_##P##geqrf_(const lapack_int* m, const lapack_int* n, T* a, const lapack_int* lda, \
                         T* tau, T* work, const lapack_int* lwork, lapack_int* info);           \
  void scipy_##P##sytrf_(const char* uplo, const lapack_int* n, T* a, const lapack_int* lda,    \
                         lapack_int* ipiv, T* work, const lapack_int* lwork, lapack_int* info,  \
                         fchar_len);                                                            \
  void scipy_##P##sytrs_(const char* uplo, const lapack_int* n, const lapack_int* nrhs,         \
                         const T* a, const lapack_int* lda, const lapack_int* ipiv, T* b,       \
                         const lapack_int* ldb, lapack_int* info, fchar_len);

FLB_LAPACK_COMMON(s, float, float)
FLB_LAPACK_COMMON(d, double, double)
FLB_LAPACK_COMMON(c, std::complex<float>, float)
FLB_LAPACK_COMMON(z, std::complex<double>, double)
#undef FLB_LAPACK_COMMON

// Real-only routines (orthogonal Q, symmetric eigenproblems, real SVD/eig/lstsq).
#define FLB_LAPACK_REAL(P, T)                                                                      \
  void scipy_##P##orgqr_(const lapack_int* m, const lapack_int* n, const lapack_int* k, T* a,      \
                         const lapack_int* lda, const T* tau, T* work, const lapack_int* lwork,    \
                         lapack_int* info);                                                        \
  void scipy_##P##syevd_(const char* jobz, const char* uplo, const lapack_int* n, T* a,            \
                         const lapack_int* lda, T* w, T* work, const lapack_int* lwork,            \
                         lapack_int* iwork, const lapack_int* liwork, lapack_int* info, fchar_len, \
                         fchar_len);                                                               \
  void scipy_##P##gesdd_(const char* jobz, const lapack_int* m, const lapack_int* n, T* a,         \
                         const lapack_int* lda, T* s, T* u, const lapack_int* ldu, T* vt,          \
                         const lapack_int* ldvt, T* work, const lapack_int* lwork,                 \
                         lapack_int* iwork, lapack_int* info, fchar_len);                          \
  void scipy_##P##geev_(const char* jobvl, const char* jobvr, const lapack_int* n, T* a,           \
                        const lapack_int* lda, T* wr, T* wi, T* vl, const lapack_int* ldvl, T* vr, \
                        const lapack_int* ldvr, T* work, const lapack_int* lwork,                  \
                        lapack_int* info, fchar_len, fchar_len);                                   \
  void scipy_##P##gelsd_(const lapack_int* m, const lapack_int* n, const lapack_int* nrhs, T* a,   \
                         const lapack_int* lda, T* b, const lapack_int* ldb, T* s, const T* rcond, \
                         lapack_int* rank, T* work, const lapack_int* lwork, lapack_int* iwork,    \
                         lapack_int* info);

FLB_LAPACK_REAL(s, float)
FLB_LAPACK_REAL(d, double)
#undef FLB_LAPACK_REAL

// Complex-only routines (unitary Q, Hermitian eigenproblems, complex SVD/eig/lstsq).
#define FLB_LAPACK_COMPLEX(P, T, R)                                                                \
  void scipy_##P##ungqr_(const lapack_int* m, const lapack_int* n, const lapack_int* k, T* a,      \
                         const lapack_int* lda, const T* tau, T* work, const lapack_int* lwork,    \
                         lapack_int* info);                                                        \
  void scipy_##P##heevd_(const char* jobz, const char* uplo, const lapack_int* n, T* a,            \
                         const lapack_int* lda, R* w, T* work, const lapack_int* lwork, R* rwork,  \
                         const lapack_int* lrwork, lapack_int* iwork, const lapack_int* liwork,    \
                         lapack_int* info, fchar_len, fchar_len);                                  \
  void scipy_##P##gesdd_(const char* jobz, const lapack_int* m, const lapack_int* n, T* a,         \
                         const lapack_int* lda, R* s, T* u, const lapack_int* ldu, T* vt,          \
                         const lapack_int* ldvt, T* work, const lapack_int* lwork, R* rwork,       \
                         lapack_int* iwork, lapack_int* info, fchar_len);                          \
  void scipy_##P##geev_(const char* jobvl, const char* jobvr, const lapack_int* n, T* a,           \
                        const lapack_int* lda, T* w, T* vl, const lapack_int* ldvl, T* vr,         \
                        const lapack_int* ldvr, T* work, const lapack_int* lwork, R* rwork,        \
                        lapack_int* info, fchar_len, fchar_len);                                   \
  void scipy_##P##gelsd_(const lapack_int* m, const lapack_int* n, const lapack_int* nrhs, T* a,   \
                         const lapack_int* lda, T* b, const lapack_int* ldb, R* s, const R* rcond, \
                         lapack_int* rank, T* work, const lapack_int* lwork, R* rwork,             \
                         lapack_int* iwork, lapack_int* info);                                     \
  void scipy_##P##hetrf_(const char* uplo, const lapack_int* n, T* a, const lapack_int* lda,       \
                         lapack_int* ipiv, T* work, const lapack_int* lwork, lapack_int* info,     \
                         fchar_len);                                                               \
  void scipy_##P##hetrs_(const char* uplo, const lapack_int* n, const lapack_int* nrhs,            \
                         const T* a, const lapack_int* lda, const lapack_int* ipiv, T* b,          \
                         const lapack_int* ldb, lapack_int* info, fchar_len);

FLB_LAPACK_COMPLEX(c, std::complex<float>, float)
FLB_LAPACK_COMPLEX(z, std::complex<double>, double)
#undef FLB_LAPACK_COMPLEX

}  // extern "C"
