// CPU layer-norm kernels (group norm reuses them for its per-group rows).
// Rows are normalised in parallel; float32/float64 rows run vectorized
// two-pass statistics (mean, then the mean of squared deviations: no
// cancellation), 16-bit floats go through a float row buffer.
#include <cmath>
#include <vector>

#include "core/scratch.h"
#include "cpu/cpu_capability.h"
#include "cpu/parallel.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/nn_kernels.h"

namespace flambeau {

namespace {

// Row loops, once per type, built for each CPU capability (cpu/cpu_capability.h).
#define FLB_NORM_ROWS(T)                                                                           \
  FLB_MULTIVERSION_BODY void row_stats_body(const T* __restrict__ x, int64_t n, T* mean, T* var) { \
    T s = 0;                                                                                       \
    _Pragma("omp simd reduction(+ : s)") for (int64_t i = 0; i < n; ++i) s += x[i];                \
    const T m = s / static_cast<T>(n);                                                             \
    T q = 0;                                                                                       \
    _Pragma("omp simd reduction(+ : q)") for (int64_t i = 0; i < n; ++i) q +=                      \
        (x[i] - m) * (x[i] - m);                                                                   \
    *mean = m;                                                                                     \
    *var = q / static_cast<T>(n);                                                                  \
  }                                                                                                \
  FLB_MULTIVERSION_BODY void row_normalize_body(const T* __restrict__ x, T* __restrict__ y,        \
                                                int64_t n, T m, T r, const T* __restrict__ w,      \
                                                const T* __restrict__ b) {                         \
    if (w && b) {                                                                                  \
      for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) * r * w[i] + b[i];                         \
    } else if (w) {                                                                                \
      for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) * r * w[i];                                \
    } else if (b) {                                                                                \
      for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) * r + b[i];                                \
    } else {                                                                                       \
      for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) * r;                                       \
    }                                                                                              \
  }                                                                                                \
  /* gi = r * (dxh - mean(dxh) - xh * mean(dxh * xh)), dxh = dy * w, xh = (x - m) * r */           \
  FLB_MULTIVERSION_BODY void row_backward_body(const T* __restrict__ dy, const T* __restrict__ x,  \
                                               T* __restrict__ gi, int64_t n, T m, T r,            \
                                               const T* __restrict__ w) {                          \
    T a = 0, c = 0;                                                                                \
    _Pragma("omp simd reduction(+ : a, c)") for (int64_t i = 0; i < n; ++i) {                      \
      T d = w ? dy[i] * w[i] : dy[i];                                                              \
      a += d;                                                                                      \
      c += d * (x[i] - m);                                                                         \
    }                                                                                              \
    const T inv_n = T(1) / static_cast<T>(n);                                                      \
    const T ma = a * inv_n, mc = c * inv_n * r * r;                                                \
    for (int64_t i = 0; i < n; ++i) {                                                              \
      T d = w ? dy[i] * w[i] : dy[i];                                                              \
      gi[i] = r * (d - ma - (x[i] - m) * mc);                                                      \
    }                                                                                              \
  }                                                                                                \
  FLB_MULTIVERSION(void, row_stats, (const T* __restrict__ x, int64_t n, T* mean, T* var),         \
                   (x, n, mean, var))                                                              \
  FLB_MULTIVERSION(void, row_normalize,                                                            \
                   (const T* __restrict__ x, T* __restrict__ y, int64_t n, T m, T r,               \
                    const T* __restrict__ w, const T* __restrict__ b),                             \
                   (x, y, n, m, r, w, b))                                                          \
  FLB_MULTIVERSION(void, row_backward,                                                             \
                   (const T* __restrict__ dy, const T* __restrict__ x, T* __restrict__ gi,         \
                    int64_t n, T m, T r, const T* __restrict__ w),                                 \
                   (dy, x, gi, n, m, r, w))
FLB_NORM_ROWS(float)
FLB_NORM_ROWS(double)
#undef FLB_NORM_ROWS

template <class T>
const T* ptr_or_null(const Tensor& t) {
  return t ? t->data_as<const T>() : nullptr;
}

// Copies n elements of T to A (or points at them when T is A).
template <class T, class A>
const A* as_acc(const T* p, int64_t n, std::vector<A>& buf) {
  if constexpr (std::is_same_v<T, A>) {
    return p;
  } else {
    if (!p) return nullptr;
    buf.resize(n);
    for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<A>(p[i]);
    return buf.data();
  }
}

void layer_norm_kernel(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& x,
                       const Tensor& weight, const Tensor& bias, int64_t rows, int64_t n,
                       double eps) {
  visit_dtype<kFloatTypes>(x->dtype(), "native_layer_norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = compute_t<T>;
    std::vector<A> wbuf, bbuf;
    const A* w = as_acc<T, A>(ptr_or_null<T>(weight), n, wbuf);
    const A* b = as_acc<T, A>(ptr_or_null<T>(bias), n, bbuf);
    const T* px = x->data_as<const T>();
    T* py = out->data_as<T>();
    T* pm = mean->data_as<T>();
    T* pr = rstd->data_as<T>();
    parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)),
                 [&](int64_t lo, int64_t hi) {
                   std::vector<A> xin, yout(std::is_same_v<T, A> ? 0 : n);
                   for (int64_t r = lo; r < hi; ++r) {
                     const A* xr = as_acc<T, A>(px + r * n, n, xin);
                     A m, v;
                     row_stats(xr, n, &m, &v);
                     const A rs = A(1) / std::sqrt(v + static_cast<A>(eps));
                     if constexpr (std::is_same_v<T, A>) {
                       row_normalize(xr, py + r * n, n, m, rs, w, b);
                     } else {
                       row_normalize(xr, yout.data(), n, m, rs, w, b);
                       for (int64_t i = 0; i < n; ++i) py[r * n + i] = static_cast<T>(yout[i]);
                     }
                     pm[r] = static_cast<T>(m);
                     pr[r] = static_cast<T>(rs);
                   }
                 });
  });
}
FLB_REGISTER_KERNEL(native_layer_norm, kCPU, layer_norm_kernel);

void layer_norm_backward_kernel(const Tensor& grad_input, const Tensor& grad_weight,
                                const Tensor& grad_bias, const Tensor& grad_out, const Tensor& x,
                                const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                int64_t rows, int64_t n) {
  visit_dtype<kFloatTypes>(x->dtype(), "native_layer_norm_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = compute_t<T>;
    std::vector<A> wbuf;
    const A* w = as_acc<T, A>(ptr_or_null<T>(weight), n, wbuf);
    const T* px = x->data_as<const T>();
    const T* pg = grad_out->data_as<const T>();
    const T* pm = mean->data_as<const T>();
    const T* pr = rstd->data_as<const T>();
    if (grad_input) {
      T* pgi = grad_input->data_as<T>();
      parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)),
                   [&](int64_t lo, int64_t hi) {
                     std::vector<A> xb, gb, out(std::is_same_v<T, A> ? 0 : n);
                     for (int64_t r = lo; r < hi; ++r) {
                       const A* xr = as_acc<T, A>(px + r * n, n, xb);
                       const A* gr = as_acc<T, A>(pg + r * n, n, gb);
                       const A m = static_cast<A>(pm[r]), rs = static_cast<A>(pr[r]);
                       if constexpr (std::is_same_v<T, A>) {
                         row_backward(gr, xr, pgi + r * n, n, m, rs, w);
                       } else {
                         row_backward(gr, xr, out.data(), n, m, rs, w);
                         for (int64_t i = 0; i < n; ++i) pgi[r * n + i] = static_cast<T>(out[i]);
                       }
                     }
                   });
    }
    if (grad_weight || grad_bias) {
      // Column sums over rows, parallel over column blocks.
      T* pgw = grad_weight ? grad_weight->data_as<T>() : nullptr;
      T* pgb = grad_bias ? grad_bias->data_as<T>() : nullptr;
      parallel_for(0, n, std::max<int64_t>(16, kGrainSize / std::max<int64_t>(rows, 1)),
                   [&](int64_t lo, int64_t hi) {
                     Scratch<A> sw(hi - lo, A(0)), sb(hi - lo, A(0));
                     for (int64_t r = 0; r < rows; ++r) {
                       const A m = static_cast<A>(pm[r]), rs = static_cast<A>(pr[r]);
                       const T* xr = px + r * n;
                       const T* gr = pg + r * n;
                       for (int64_t j = lo; j < hi; ++j) {
                         const A g = static_cast<A>(gr[j]);
                         sw[j - lo] += g * (static_cast<A>(xr[j]) - m) * rs;
                         sb[j - lo] += g;
                       }
                     }
                     for (int64_t j = lo; j < hi; ++j) {
                       if (pgw) pgw[j] = static_cast<T>(sw[j - lo]);
                       if (pgb) pgb[j] = static_cast<T>(sb[j - lo]);
                     }
                   });
    }
  });
}
FLB_REGISTER_KERNEL(native_layer_norm_backward, kCPU, layer_norm_backward_kernel);

}  // namespace

}  // namespace flambeau
