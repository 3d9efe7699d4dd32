// CPU softmax / log_softmax and their backward kernels. Rows along a
// contiguous last dim (inner == 1) of float32/float64 take three vectorized
// passes: max, fused exp(x - max) + sum (libmvec, cpu/vec_math.h), then a
// scale; other layouts and the 16-bit floats walk (n, inner) blocks computing
// in float/double. Work is split over outer rows with parallel_for.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/scratch.h"
#include "cpu/cpu_capability.h"
#include "cpu/parallel.h"
#include "cpu/vec_math.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/nn_kernels.h"

namespace flambeau {

namespace {

// Row helpers for contiguous float32/float64 rows, built for each CPU capability
// (cpu/cpu_capability.h); they call nothing compiled for another target.
#define FLB_ROW_HELPERS(T)                                                                         \
  FLB_MULTIVERSION_BODY T row_max_body(const T* __restrict__ x, int64_t n) {                       \
    T m = -std::numeric_limits<T>::infinity();                                                     \
    _Pragma("omp simd reduction(max : m)") for (int64_t i = 0; i < n; ++i) m =                     \
        x[i] > m ? x[i] : m;                                                                       \
    return m;                                                                                      \
  }                                                                                                \
  FLB_MULTIVERSION(T, row_max, (const T* __restrict__ x, int64_t n), (x, n))                       \
  FLB_MULTIVERSION_BODY void row_scale_body(T* __restrict__ y, int64_t n, T s) {                   \
    for (int64_t i = 0; i < n; ++i) y[i] *= s;                                                     \
  }                                                                                                \
  FLB_MULTIVERSION(void, row_scale, (T* __restrict__ y, int64_t n, T s), (y, n, s))                \
  /* y = (x - m) - s: subtracting the max first keeps precision for large x */                     \
  FLB_MULTIVERSION_BODY void row_shift_body(const T* __restrict__ x, T* __restrict__ y, int64_t n, \
                                            T m, T s) {                                            \
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - s;                                         \
  }                                                                                                \
  FLB_MULTIVERSION(void, row_shift,                                                                \
                   (const T* __restrict__ x, T* __restrict__ y, int64_t n, T m, T s),              \
                   (x, y, n, m, s))                                                                \
  FLB_MULTIVERSION_BODY T row_dot_body(const T* __restrict__ a, const T* __restrict__ b,           \
                                       int64_t n) {                                                \
    T s = 0;                                                                                       \
    _Pragma("omp simd reduction(+ : s)") for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];         \
    return s;                                                                                      \
  }                                                                                                \
  FLB_MULTIVERSION(T, row_dot, (const T* __restrict__ a, const T* __restrict__ b, int64_t n),      \
                   (a, b, n))                                                                      \
  FLB_MULTIVERSION_BODY T row_sum_body(const T* __restrict__ a, int64_t n) {                       \
    T s = 0;                                                                                       \
    _Pragma("omp simd reduction(+ : s)") for (int64_t i = 0; i < n; ++i) s += a[i];                \
    return s;                                                                                      \
  }                                                                                                \
  FLB_MULTIVERSION(T, row_sum, (const T* __restrict__ a, int64_t n), (a, n))                       \
  /* gi = y * (g - dot) */                                                                         \
  FLB_MULTIVERSION_BODY void row_softmax_grad_body(T* __restrict__ gi, const T* __restrict__ g,    \
                                                   const T* __restrict__ y, int64_t n, T dot) {    \
    for (int64_t i = 0; i < n; ++i) gi[i] = y[i] * (g[i] - dot);                                   \
  }                                                                                                \
  FLB_MULTIVERSION(                                                                                \
      void, row_softmax_grad,                                                                      \
      (T* __restrict__ gi, const T* __restrict__ g, const T* __restrict__ y, int64_t n, T dot),    \
      (gi, g, y, n, dot))
FLB_ROW_HELPERS(float)
FLB_ROW_HELPERS(double)
#undef FLB_ROW_HELPERS

float exp_shift_sum(const float* in, float* out, int64_t n, float s) {
  return vec::exp_shift_sum_f32(in, out, n, s);
}
double exp_shift_sum(const double* in, double* out, int64_t n, double s) {
  return vec::exp_shift_sum_f64(in, out, n, s);
}
void exp_into(const float* in, float* out, int64_t n) { vec::exp_f32(in, out, n); }
void exp_into(const double* in, double* out, int64_t n) { vec::exp_f64(in, out, n); }

template <class T>
void softmax_rows(T* out, const T* in, int64_t rows, int64_t n, bool log) {
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t r = lo; r < hi; ++r) {
                   const T* x = in + r * n;
                   T* y = out + r * n;
                   T m = row_max(x, n);
                   if (std::isinf(m)) m = m > 0 ? m : T(0);  // all -inf rows: no inf - inf
                   T s = exp_shift_sum(x, y, n, m);
                   if (log) {
                     row_shift(x, y, n, m, std::log(s));
                   } else {
                     row_scale(y, n, T(1) / s);
                   }
                 }
               });
}

template <class T>
void softmax_backward_rows(T* gi, const T* g, const T* y, int64_t rows, int64_t n, bool log) {
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)),
               [&](int64_t lo, int64_t hi) {
                 Scratch<T> e(log ? n : 0);
                 for (int64_t r = lo; r < hi; ++r) {
                   const int64_t o = r * n;
                   if (log) {
                     // gi = g - exp(y) * sum(g)
                     T s = row_sum(g + o, n);
                     exp_into(y + o, e.data(), n);
                     for (int64_t i = 0; i < n; ++i) gi[o + i] = g[o + i] - e[i] * s;
                   } else {
                     row_softmax_grad(gi + o, g + o, y + o, n, row_dot(g + o, y + o, n));
                   }
                 }
               });
}

// The general layout: blocks of (n, inner) per outer index, computed in A.
template <class T, class A>
void softmax_blocks(T* out, const T* in, int64_t outer, int64_t n, int64_t inner, bool log) {
  parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n * inner, 1)),
               [&](int64_t lo, int64_t hi) {
                 Scratch<A> m(inner), s(inner);
                 for (int64_t o = lo; o < hi; ++o) {
                   const T* x = in + o * n * inner;
                   T* y = out + o * n * inner;
                   std::fill(m.begin(), m.end(), -std::numeric_limits<A>::infinity());
                   std::fill(s.begin(), s.end(), A(0));
                   for (int64_t i = 0; i < n; ++i)
                     for (int64_t j = 0; j < inner; ++j) {
                       A v = static_cast<A>(x[i * inner + j]);
                       m[j] = v > m[j] || std::isnan(v) ? v : m[j];
                     }
                   for (int64_t j = 0; j < inner; ++j)
                     if (std::isinf(m[j]) && m[j] < 0) m[j] = 0;
                   for (int64_t i = 0; i < n; ++i)
                     for (int64_t j = 0; j < inner; ++j)
                       s[j] += std::exp(static_cast<A>(x[i * inner + j]) - m[j]);
                   for (int64_t i = 0; i < n; ++i)
                     for (int64_t j = 0; j < inner; ++j) {
                       A v = static_cast<A>(x[i * inner + j]) - m[j];
                       y[i * inner + j] =
                           static_cast<T>(log ? v - std::log(s[j]) : std::exp(v) / s[j]);
                     }
                 }
               });
}

template <class T, class A>
void softmax_backward_blocks(T* gi, const T* g, const T* y, int64_t outer, int64_t n, int64_t inner,
                             bool log) {
  parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n * inner, 1)),
               [&](int64_t lo, int64_t hi) {
                 Scratch<A> s(inner);
                 for (int64_t o = lo; o < hi; ++o) {
                   const int64_t base = o * n * inner;
                   std::fill(s.begin(), s.end(), A(0));
                   for (int64_t i = 0; i < n; ++i)
                     for (int64_t j = 0; j < inner; ++j) {
                       const int64_t k = base + i * inner + j;
                       s[j] +=
                           log ? static_cast<A>(g[k]) : static_cast<A>(g[k]) * static_cast<A>(y[k]);
                     }
                   for (int64_t i = 0; i < n; ++i)
                     for (int64_t j = 0; j < inner; ++j) {
                       const int64_t k = base + i * inner + j;
                       A gv = static_cast<A>(g[k]), yv = static_cast<A>(y[k]);
                       gi[k] = static_cast<T>(log ? gv - std::exp(yv) * s[j] : yv * (gv - s[j]));
                     }
                 }
               });
}

void softmax_kernel(const Tensor& out, const Tensor& in, int64_t outer, int64_t n, int64_t inner,
                    bool log) {
  visit_dtype<kFloatTypes>(in->dtype(), log ? "log_softmax" : "softmax", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = compute_t<T>;
    const T* x = in->data_as<const T>();
    T* y = out->data_as<T>();
    if constexpr (std::is_same_v<T, A>) {
      if (inner == 1) return softmax_rows<T>(y, x, outer, n, log);
    }
    softmax_blocks<T, A>(y, x, outer, n, inner, log);
  });
}
FLB_REGISTER_KERNEL(softmax, kCPU, softmax_kernel);

void softmax_backward_kernel(const Tensor& grad_input, const Tensor& grad_output,
                             const Tensor& output, int64_t outer, int64_t n, int64_t inner,
                             bool log) {
  visit_dtype<kFloatTypes>(output->dtype(), "_softmax_backward_data", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = compute_t<T>;
    T* gi = grad_input->data_as<T>();
    const T* g = grad_output->data_as<const T>();
    const T* y = output->data_as<const T>();
    if constexpr (std::is_same_v<T, A>) {
      if (inner == 1) return softmax_backward_rows<T>(gi, g, y, outer, n, log);
    }
    softmax_backward_blocks<T, A>(gi, g, y, outer, n, inner, log);
  });
}
FLB_REGISTER_KERNEL(_softmax_backward_data, kCPU, softmax_backward_kernel);

}  // namespace

}  // namespace flambeau
