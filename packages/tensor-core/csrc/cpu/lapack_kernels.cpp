// CPU kernels of the LAPACK-backed operators: thin loops over the batch that
// call OpenBLAS's LAPACK on column-major workspaces (see cpu/lapack_kernels.h).
#include "cpu/lapack_kernels.h"

#include <cblas.h>

#include <algorithm>
#include <complex>
#include <optional>
#include <vector>

#include "core/interpreter_lock.h"
#include "cpu/blas.h"
#include "cpu/lapack.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/common.h"

namespace flambeau::lapack {

namespace {

using I = lapack_int;

template <class T>
struct RealOf {
  using type = T;
};
template <class R>
struct RealOf<std::complex<R>> {
  using type = R;
};
template <class T>
using real_t = typename RealOf<T>::type;
template <class T>
constexpr bool kIsComplex = !std::is_same_v<T, real_t<T>>;

// Overloads that pick the s/d/c/z routine from the element type.
#define FLB_COMMON(P, T)                                                                           \
  inline void getrf(I m, I n, T* a, I lda, I* piv, I* info) {                                      \
    scipy_##P##getrf_(&m, &n, a, &lda, piv, info);                                                 \
  }                                                                                                \
  inline void getrs(char tr, I n, I nrhs, const T* a, I lda, const I* piv, T* b, I ldb, I* info) { \
    scipy_##P##getrs_(&tr, &n, &nrhs, a, &lda, piv, b, &ldb, info, 1);                             \
  }                                                                                                \
  inline void potrf(char uplo, I n, T* a, I lda, I* info) {                                        \
    scipy_##P##potrf_(&uplo, &n, a, &lda, info, 1);                                                \
  }                                                                                                \
  inline void geqrf(I m, I n, T* a, I lda, T* tau, T* work, I lwork, I* info) {                    \
    scipy_##P##geqrf_(&m, &n, a, &lda, tau, work, &lwork, info);                                   \
  }                                                                                                \
  inline void sytrf(char uplo, I n, T* a, I lda, I* piv, T* work, I lwork, I* info) {              \
    scipy_##P##sytrf_(&uplo, &n, a, &lda, piv, work, &lwork, info, 1);                             \
  }                                                                                                \
  inline void sytrs(char uplo, I n, I nrhs, const T* a, I lda, const I* piv, T* b, I ldb,          \
                    I* info) {                                                                     \
    scipy_##P##sytrs_(&uplo, &n, &nrhs, a, &lda, piv, b, &ldb, info, 1);                           \
  }
FLB_COMMON(s, float)
FLB_COMMON(d, double)
FLB_COMMON(c, c64)
FLB_COMMON(z, c128)
#undef FLB_COMMON

#define FLB_REAL(P, T)                                                                           \
  inline void orgqr(I m, I n, I k, T* a, I lda, const T* tau, T* work, I lwork, I* info) {       \
    scipy_##P##orgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);                             \
  }                                                                                              \
  inline void gesdd(char jobz, I m, I n, T* a, I lda, T* s, T* u, I ldu, T* vt, I ldvt, T* work, \
                    I lwork, T*, I* iwork, I* info) {                                            \
    scipy_##P##gesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info,  \
                      1);                                                                        \
  }                                                                                              \
  inline void gelsd(I m, I n, I nrhs, T* a, I lda, T* b, I ldb, T* s, T rcond, I* rank, T* work, \
                    I lwork, T*, I* iwork, I* info) {                                            \
    scipy_##P##gelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, iwork,     \
                      info);                                                                     \
  }
FLB_REAL(s, float)
FLB_REAL(d, double)
#undef FLB_REAL

#define FLB_COMPLEX(P, T, R)                                                                     \
  inline void orgqr(I m, I n, I k, T* a, I lda, const T* tau, T* work, I lwork, I* info) {       \
    scipy_##P##ungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);                             \
  }                                                                                              \
  inline void gesdd(char jobz, I m, I n, T* a, I lda, R* s, T* u, I ldu, T* vt, I ldvt, T* work, \
                    I lwork, R* rwork, I* iwork, I* info) {                                      \
    scipy_##P##gesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, \
                      info, 1);                                                                  \
  }                                                                                              \
  inline void gelsd(I m, I n, I nrhs, T* a, I lda, T* b, I ldb, R* s, R rcond, I* rank, T* work, \
                    I lwork, R* rwork, I* iwork, I* info) {                                      \
    scipy_##P##gelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, rwork,     \
                      iwork, info);                                                              \
  }
FLB_COMPLEX(c, c64, float)
FLB_COMPLEX(z, c128, double)
#undef FLB_COMPLEX

// The Hermitian LDL^H routines (complex only).
#define FLB_HERMITIAN(P, T)                                                               \
  inline void hetrf(char uplo, I n, T* a, I lda, I* piv, T* work, I lwork, I* info) {     \
    scipy_##P##hetrf_(&uplo, &n, a, &lda, piv, work, &lwork, info, 1);                    \
  }                                                                                       \
  inline void hetrs(char uplo, I n, I nrhs, const T* a, I lda, const I* piv, T* b, I ldb, \
                    I* info) {                                                            \
    scipy_##P##hetrs_(&uplo, &n, &nrhs, a, &lda, piv, b, &ldb, info, 1);                  \
  }
FLB_HERMITIAN(c, c64)
FLB_HERMITIAN(z, c128)
#undef FLB_HERMITIAN

// The workspace size a query (lwork = -1) returned in work[0].
template <class T>
I lwork_of(T w) {
  return std::max<I>(1, static_cast<I>(std::real(w)));
}

I ld(int64_t rows) { return static_cast<I>(std::max<int64_t>(rows, 1)); }

// Runs f(T) for the LAPACK type of t (float32/64, complex64/128).
template <class F>
void visit_lapack(ScalarType dt, const char* op, F&& f) {
  visit_dtype<dtype_bit(ScalarType::Float32) | dtype_bit(ScalarType::Float64) | kComplexTypes>(
      dt, op, std::forward<F>(f));
}

// Long factorizations let other Python threads run, and use OpenBLAS's threads.
struct LongCall {
  std::optional<ReleaseInterpreterLock> lock;
  std::optional<BlasThreadsForLapack> threads;
  explicit LongCall(const Tensor& a) {
    if (a->numel() > 4096) {
      lock.emplace();
      threads.emplace();
    }
  }
};

void getrf_kernel(const Tensor& a, const Tensor& pivots, const Tensor& info) {
  LongCall u(a);
  visit_lapack(a->dtype(), "lu_factor", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t batch = a->sizes()[0], n = a->sizes()[1], m = a->sizes()[2];
    const int64_t k = std::min(m, n);
    for (int64_t b = 0; b < batch; ++b)
      getrf(static_cast<I>(m), static_cast<I>(n), a->data_as<T>() + b * m * n, ld(m),
            pivots->data_as<I>() + b * k, info->data_as<I>() + b);
  });
}

void getrs_kernel(const Tensor& lu, const Tensor& pivots, const Tensor& rhs, char trans) {
  LongCall u(rhs);
  visit_lapack(lu->dtype(), "lu_solve", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t batch = lu->sizes()[0], n = lu->sizes()[1], nrhs = rhs->sizes()[1];
    I info = 0;
    for (int64_t b = 0; b < batch; ++b)
      getrs(trans, static_cast<I>(n), static_cast<I>(nrhs), lu->data_as<T>() + b * n * n, ld(n),
            pivots->data_as<I>() + b * n, rhs->data_as<T>() + b * n * nrhs, ld(n), &info);
  });
}

void potrf_kernel(const Tensor& a, bool upper, const Tensor& info) {
  LongCall u(a);
  visit_lapack(a->dtype(), "cholesky", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t batch = a->sizes()[0], n = a->sizes()[1];
    for (int64_t b = 0; b < batch; ++b)
      potrf(upper ? 'U' : 'L', static_cast<I>(n), a->data_as<T>() + b * n * n, ld(n),
            info->data_as<I>() + b);
  });
}

// sytrf, or hetrf for a complex Hermitian factorization (the same for real types).
template <class T>
void ldl_factor_one(bool hermitian, I n, T* a, I* piv, T* work, I lwork, I* info) {
  if constexpr (kIsComplex<T>) {
    if (hermitian) return hetrf('L', n, a, ld(n), piv, work, lwork, info);
  }
  sytrf('L', n, a, ld(n), piv, work, lwork, info);
}

void sytrf_kernel(const Tensor& a, const Tensor& pivots, bool hermitian, const Tensor& info) {
  LongCall u(a);
  visit_lapack(a->dtype(), "ldl_factor", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t batch = a->sizes()[0], n = a->sizes()[1];
    T query;
    I qinfo = 0;
    ldl_factor_one<T>(hermitian, static_cast<I>(n), nullptr, nullptr, &query, -1, &qinfo);
    const I lwork = lwork_of(query);
    std::vector<T> work(static_cast<size_t>(lwork));
    for (int64_t b = 0; b < batch; ++b)
      ldl_factor_one<T>(hermitian, static_cast<I>(n), a->data_as<T>() + b * n * n,
                        pivots->data_as<I>() + b * n, work.data(), lwork, info->data_as<I>() + b);
  });
}

void sytrs_kernel(const Tensor& ldt, const Tensor& pivots, const Tensor& rhs, bool hermitian) {
  LongCall u(rhs);
  visit_lapack(ldt->dtype(), "ldl_solve", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t batch = ldt->sizes()[0], n = ldt->sizes()[1], nrhs = rhs->sizes()[1];
    I info = 0;
    for (int64_t b = 0; b < batch; ++b) {
      const T* pa = ldt->data_as<T>() + b * n * n;
      const I* piv = pivots->data_as<I>() + b * n;
      T* pb = rhs->data_as<T>() + b * n * nrhs;
      if constexpr (kIsComplex<T>) {
        if (hermitian) {
          hetrs('L', static_cast<I>(n), static_cast<I>(nrhs), pa, ld(n), piv, pb, ld(n), &info);
          continue;
        }
      }
      sytrs('L', static_cast<I>(n), static_cast<I>(nrhs), pa, ld(n), piv, pb, ld(n), &info);
    }
  });
}

void qr_kernel(const Tensor& a, const Tensor& q) {
  LongCall u(a);
  visit_lapack(a->dtype(), "qr", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t batch = a->sizes()[0], n = a->sizes()[1], m = a->sizes()[2];
    const int64_t k = std::min(m, n), qc = q->numel() ? q->sizes()[1] : 0;
    std::vector<T> tau(static_cast<size_t>(std::max<int64_t>(k, 1)));
    I info = 0;
    T query;
    geqrf(static_cast<I>(m), static_cast<I>(n), nullptr, ld(m), nullptr, &query, -1, &info);
    I lwork = lwork_of(query);
    if (qc > 0) {
      orgqr(static_cast<I>(m), static_cast<I>(qc), static_cast<I>(k), nullptr, ld(m), nullptr,
            &query, -1, &info);
      lwork = std::max(lwork, lwork_of(query));
    }
    std::vector<T> work(static_cast<size_t>(lwork));
    for (int64_t b = 0; b < batch; ++b) {
      T* pa = a->data_as<T>() + b * m * n;
      geqrf(static_cast<I>(m), static_cast<I>(n), pa, ld(m), tau.data(), work.data(), lwork, &info);
      if (qc == 0) continue;
      // Q is formed from the reflectors in the first k columns.
      T* pq = q->data_as<T>() + b * m * qc;
      std::copy(pa, pa + m * std::min(n, qc), pq);
      orgqr(static_cast<I>(m), static_cast<I>(qc), static_cast<I>(k), pq, ld(m), tau.data(),
            work.data(), lwork, &info);
    }
  });
}

void svd_kernel(const Tensor& a, const Tensor& u, const Tensor& s, const Tensor& vh, char jobz,
                const Tensor& info) {
  LongCall unlocked(a);
  visit_lapack(a->dtype(), "svd", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = real_t<T>;
    const int64_t batch = a->sizes()[0], n = a->sizes()[1], m = a->sizes()[2];
    const int64_t k = std::min(m, n), mx = std::max(m, n);
    const bool vecs = jobz != 'N';
    const int64_t ucols = vecs ? u->sizes()[1] : 0, vrows = vecs ? vh->sizes()[2] : 0;
    // gesdd wants valid (if unused) U/VT pointers and leading dimensions.
    T dummy[1];
    std::vector<I> iwork(static_cast<size_t>(8 * std::max<int64_t>(k, 1)));
    std::vector<R> rwork;
    if constexpr (kIsComplex<T>)
      rwork.resize(static_cast<size_t>(
          std::max<int64_t>(1, vecs ? k * std::max(5 * k + 7, 2 * mx + 2 * k + 1) : 7 * k)));
    I ldu = ld(m), ldvt = ld(vecs ? vrows : 1), linfo = 0;
    T query;
    gesdd(jobz, static_cast<I>(m), static_cast<I>(n), nullptr, ld(m), nullptr, dummy, ldu, dummy,
          ldvt, &query, -1, rwork.data(), iwork.data(), &linfo);
    I lwork = lwork_of(query);
    std::vector<T> work(static_cast<size_t>(lwork));
    for (int64_t b = 0; b < batch; ++b) {
      T* pu = vecs ? u->data_as<T>() + b * m * ucols : dummy;
      T* pv = vecs ? vh->data_as<T>() + b * n * vrows : dummy;
      gesdd(jobz, static_cast<I>(m), static_cast<I>(n), a->data_as<T>() + b * m * n, ld(m),
            s->data_as<R>() + b * k, pu, ldu, pv, ldvt, work.data(), lwork, rwork.data(),
            iwork.data(), info->data_as<I>() + b);
    }
  });
}

template <class T>
void eigh_one(char jobz, char uplo, I n, T* a, real_t<T>* w, I* info) {
  using R = real_t<T>;
  I lwork = -1, liwork = -1, lrwork = -1, iq = 0;
  T wq;
  R rq = 0;
  if constexpr (std::is_same_v<T, float>) {
    scipy_ssyevd_(&jobz, &uplo, &n, a, &n, w, &wq, &lwork, &iq, &liwork, info, 1, 1);
  } else if constexpr (std::is_same_v<T, double>) {
    scipy_dsyevd_(&jobz, &uplo, &n, a, &n, w, &wq, &lwork, &iq, &liwork, info, 1, 1);
  } else if constexpr (std::is_same_v<T, c64>) {
    scipy_cheevd_(&jobz, &uplo, &n, a, &n, w, &wq, &lwork, &rq, &lrwork, &iq, &liwork, info, 1, 1);
  } else {
    scipy_zheevd_(&jobz, &uplo, &n, a, &n, w, &wq, &lwork, &rq, &lrwork, &iq, &liwork, info, 1, 1);
  }
  lwork = lwork_of(wq);
  liwork = std::max<I>(1, iq);
  lrwork = std::max<I>(1, static_cast<I>(rq));
  std::vector<T> work(static_cast<size_t>(lwork));
  std::vector<I> iwork(static_cast<size_t>(liwork));
  std::vector<R> rwork(static_cast<size_t>(lrwork));
  if constexpr (std::is_same_v<T, float>) {
    scipy_ssyevd_(&jobz, &uplo, &n, a, &n, w, work.data(), &lwork, iwork.data(), &liwork, info, 1,
                  1);
  } else if constexpr (std::is_same_v<T, double>) {
    scipy_dsyevd_(&jobz, &uplo, &n, a, &n, w, work.data(), &lwork, iwork.data(), &liwork, info, 1,
                  1);
  } else if constexpr (std::is_same_v<T, c64>) {
    scipy_cheevd_(&jobz, &uplo, &n, a, &n, w, work.data(), &lwork, rwork.data(), &lrwork,
                  iwork.data(), &liwork, info, 1, 1);
  } else {
    scipy_zheevd_(&jobz, &uplo, &n, a, &n, w, work.data(), &lwork, rwork.data(), &lrwork,
                  iwork.data(), &liwork, info, 1, 1);
  }
}

void eigh_kernel(const Tensor& a, const Tensor& w, bool upper, bool compute_v, const Tensor& info) {
  LongCall u(a);
  visit_lapack(a->dtype(), "eigh", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t batch = a->sizes()[0], n = a->sizes()[1];
    for (int64_t b = 0; b < batch; ++b)
      eigh_one<T>(compute_v ? 'V' : 'N', upper ? 'U' : 'L', ld(n), a->data_as<T>() + b * n * n,
                  w->data_as<real_t<T>>() + b * n, info->data_as<I>() + b);
  });
}

// Real geev returns conjugate pairs packed as (re, im) columns; unpack them.
template <class R>
void eig_real(I n, R* a, std::complex<R>* w, std::complex<R>* v, I* info) {
  const char jobvr = v ? 'V' : 'N', jobvl = 'N';
  std::vector<R> wr(static_cast<size_t>(n)), wi(static_cast<size_t>(n));
  std::vector<R> vr(v ? static_cast<size_t>(n) * n : 1);
  I one = 1, ldvr = v ? n : 1, lwork = -1;
  R q, dummy;
  auto call = [&](R* work, I lw) {
    if constexpr (std::is_same_v<R, float>)
      scipy_sgeev_(&jobvl, &jobvr, &n, a, &n, wr.data(), wi.data(), &dummy, &one, vr.data(), &ldvr,
                   work, &lw, info, 1, 1);
    else
      scipy_dgeev_(&jobvl, &jobvr, &n, a, &n, wr.data(), wi.data(), &dummy, &one, vr.data(), &ldvr,
                   work, &lw, info, 1, 1);
  };
  call(&q, lwork);
  lwork = lwork_of(q);
  std::vector<R> work(static_cast<size_t>(lwork));
  call(work.data(), lwork);
  for (I j = 0; j < n; ++j) w[j] = {wr[j], wi[j]};
  if (!v) return;
  for (I j = 0; j < n; ++j) {
    const R* col = vr.data() + static_cast<int64_t>(j) * n;
    if (wi[j] != 0 && j + 1 < n) {  // columns j, j+1 hold re and im of a conjugate pair
      const R* next = col + n;
      for (I i = 0; i < n; ++i) {
        v[j * n + i] = {col[i], next[i]};
        v[(j + 1) * n + i] = {col[i], -next[i]};
      }
      ++j;
    } else {
      for (I i = 0; i < n; ++i) v[j * n + i] = {col[i], R(0)};
    }
  }
}

template <class R>
void eig_complex(I n, std::complex<R>* a, std::complex<R>* w, std::complex<R>* v, I* info) {
  using T = std::complex<R>;
  const char jobvr = v ? 'V' : 'N', jobvl = 'N';
  std::vector<R> rwork(static_cast<size_t>(std::max<I>(1, 2 * n)));
  I one = 1, ldvr = v ? n : 1, lwork = -1;
  T q, dummy[1];
  auto call = [&](T* work, I lw) {
    if constexpr (std::is_same_v<R, float>)
      scipy_cgeev_(&jobvl, &jobvr, &n, a, &n, w, dummy, &one, v ? v : dummy, &ldvr, work, &lw,
                   rwork.data(), info, 1, 1);
    else
      scipy_zgeev_(&jobvl, &jobvr, &n, a, &n, w, dummy, &one, v ? v : dummy, &ldvr, work, &lw,
                   rwork.data(), info, 1, 1);
  };
  call(&q, lwork);
  lwork = lwork_of(q);
  std::vector<T> work(static_cast<size_t>(lwork));
  call(work.data(), lwork);
}

void eig_kernel(const Tensor& a, const Tensor& w, const Tensor& v, const Tensor& info) {
  LongCall u(a);
  visit_lapack(a->dtype(), "eig", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = std::complex<real_t<T>>;
    const int64_t batch = a->sizes()[0], n = a->sizes()[1];
    for (int64_t b = 0; b < batch; ++b) {
      C* pv = v->numel() ? v->data_as<C>() + b * n * n : nullptr;
      C* pw = w->data_as<C>() + b * n;
      if constexpr (kIsComplex<T>)
        eig_complex(ld(n), a->data_as<T>() + b * n * n, pw, pv, info->data_as<I>() + b);
      else
        eig_real(ld(n), a->data_as<T>() + b * n * n, pw, pv, info->data_as<I>() + b);
    }
  });
}

void gelsd_kernel(const Tensor& a, const Tensor& rhs, const Tensor& s, const Tensor& rank,
                  double rcond, const Tensor& info) {
  LongCall u(a);
  visit_lapack(a->dtype(), "lstsq", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = real_t<T>;
    const int64_t batch = a->sizes()[0], n = a->sizes()[1], m = a->sizes()[2];
    const int64_t nrhs = rhs->sizes()[1], ldb = rhs->sizes()[2], k = std::min(m, n);
    std::vector<R> sv(static_cast<size_t>(std::max<int64_t>(k, 1)));
    I qinfo = 0, r = 0, iq = 0;
    T q;
    R rq = 0;
    gelsd(static_cast<I>(m), static_cast<I>(n), static_cast<I>(nrhs), nullptr, ld(m), nullptr,
          ld(ldb), sv.data(), static_cast<R>(rcond), &r, &q, -1, &rq, &iq, &qinfo);
    I lwork = lwork_of(q);
    std::vector<T> work(static_cast<size_t>(lwork));
    std::vector<I> iwork(static_cast<size_t>(std::max<I>(1, iq)));
    std::vector<R> rwork(static_cast<size_t>(std::max<I>(1, static_cast<I>(rq))));
    for (int64_t b = 0; b < batch; ++b) {
      gelsd(static_cast<I>(m), static_cast<I>(n), static_cast<I>(nrhs), a->data_as<T>() + b * m * n,
            ld(m), rhs->data_as<T>() + b * nrhs * ldb, ld(ldb), sv.data(), static_cast<R>(rcond),
            &r, work.data(), lwork, rwork.data(), iwork.data(), info->data_as<I>() + b);
      rank->data_as<int64_t>()[b] = r;
      if (s->numel()) std::copy(sv.begin(), sv.begin() + k, s->data_as<R>() + b * k);
    }
  });
}

void trsm_kernel(const Tensor& a, const Tensor& rhs, bool left, bool upper, bool unit) {
  LongCall u(rhs);
  visit_lapack(a->dtype(), "solve_triangular", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t batch = a->sizes()[0], n = a->sizes()[1];
    const int64_t rows = rhs->sizes()[1], cols = rhs->sizes()[2];
    const auto side = left ? CblasLeft : CblasRight;
    const auto uplo = upper ? CblasUpper : CblasLower;
    const auto diag = unit ? CblasUnit : CblasNonUnit;
    const int r = static_cast<int>(rows), c = static_cast<int>(cols), lda = ld(n), ldb = ld(cols);
    for (int64_t b = 0; b < batch; ++b) {
      const T* pa = a->data_as<T>() + b * n * n;
      T* pb = rhs->data_as<T>() + b * rows * cols;
      if constexpr (std::is_same_v<T, float>) {
        scipy_cblas_strsm(CblasRowMajor, side, uplo, CblasNoTrans, diag, r, c, 1.0f, pa, lda, pb,
                          ldb);
      } else if constexpr (std::is_same_v<T, double>) {
        scipy_cblas_dtrsm(CblasRowMajor, side, uplo, CblasNoTrans, diag, r, c, 1.0, pa, lda, pb,
                          ldb);
      } else {
        const T one(1);
        if constexpr (std::is_same_v<T, c64>)
          scipy_cblas_ctrsm(CblasRowMajor, side, uplo, CblasNoTrans, diag, r, c, &one, pa, lda, pb,
                            ldb);
        else
          scipy_cblas_ztrsm(CblasRowMajor, side, uplo, CblasNoTrans, diag, r, c, &one, pa, lda, pb,
                            ldb);
      }
    }
  });
}

}  // namespace

FLB_REGISTER_KERNEL(linalg_getrf, kCPU, getrf_kernel);
FLB_REGISTER_KERNEL(linalg_getrs, kCPU, getrs_kernel);
FLB_REGISTER_KERNEL(linalg_potrf, kCPU, potrf_kernel);
FLB_REGISTER_KERNEL(linalg_sytrf, kCPU, sytrf_kernel);
FLB_REGISTER_KERNEL(linalg_sytrs, kCPU, sytrs_kernel);
FLB_REGISTER_KERNEL(linalg_geqrf, kCPU, qr_kernel);
FLB_REGISTER_KERNEL(linalg_gesdd, kCPU, svd_kernel);
FLB_REGISTER_KERNEL(linalg_syevd, kCPU, eigh_kernel);
FLB_REGISTER_KERNEL(linalg_geev, kCPU, eig_kernel);
FLB_REGISTER_KERNEL(linalg_gelsd, kCPU, gelsd_kernel);
FLB_REGISTER_KERNEL(linalg_trsm, kCPU, trsm_kernel);

}  // namespace flambeau::lapack
