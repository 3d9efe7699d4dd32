// CPU kernels of the sorting family's row scans (cummax/cummin, logcumsumexp)
// and of value_selecting_reduction_backward (adds gradients back at indices).
#include <cmath>
#include <limits>

#include "core/scratch.h"
#include "cpu/parallel.h"
#include "cpu/sort_keys.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/sorting_kernels.h"

namespace flambeau {

namespace {

int64_t row_grain(int64_t n) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)); }

// A NaN, once seen, stays (its latest index); ties move the index forward.
void cum_extreme_kernel(const Tensor& values, const Tensor& indices, const Tensor& in,
                        bool is_max) {
  const int64_t rows = in->sizes()[0], n = in->sizes()[1];
  visit_dtype<kRealTypes | kBoolTypes>(in->dtype(), is_max ? "cummax" : "cummin", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using K = sort_key_t<T>;
    const T* src = in->data_as<T>();
    T* vout = values->data_as<T>();
    int64_t* iout = indices->data_as<int64_t>();
    parallel_for(0, rows, row_grain(n), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* x = src + r * n;
        K best = static_cast<K>(x[0]);
        int64_t at = 0;
        for (int64_t j = 0; j < n; ++j) {
          const K k = static_cast<K>(x[j]);
          if (key_isnan(k) || (!key_isnan(best) && (is_max ? k >= best : k <= best))) {
            best = k;
            at = j;
          }
          vout[r * n + j] = x[at];
          iout[r * n + j] = at;
        }
      }
    });
  });
}

double log_add_exp(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  const double hi = std::max(a, b), lo = std::min(a, b);
  if (lo == -INFINITY || hi == INFINITY) return hi;
  return hi + std::log1p(std::exp(lo - hi));
}

void logcumsumexp_kernel(const Tensor& out, const Tensor& in) {
  const int64_t rows = in->sizes()[0], n = in->sizes()[1];
  visit_dtype<kFloatTypes>(in->dtype(), "logcumsumexp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = in->data_as<T>();
    T* dst = out->data_as<T>();
    parallel_for(0, rows, row_grain(n), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        double acc = -INFINITY;
        for (int64_t j = 0; j < n; ++j) {
          acc = log_add_exp(acc, static_cast<double>(static_cast<compute_t<T>>(src[r * n + j])));
          dst[r * n + j] = static_cast<T>(static_cast<compute_t<T>>(acc));
        }
      }
    });
  });
}

void scatter_add_rows_kernel(const Tensor& out, const Tensor& grad, const Tensor& indices) {
  const int64_t rows = out->sizes()[0], n = out->sizes()[1], k = grad->sizes()[1];
  const int64_t* idx = indices->data_as<int64_t>();
  for (int64_t i = 0; i < rows * k; ++i) {  // checked before the parallel loop may not throw
    FLB_CHECK_T(IndexError, idx[i] >= 0 && idx[i] < n,
                "value_selecting_reduction_backward(): index ", idx[i],
                " is out of bounds for dim of size ", n);
  }
  visit_dtype<kFloatTypes>(out->dtype(), "value_selecting_reduction_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* g = grad->data_as<T>();
    T* dst = out->data_as<T>();
    parallel_for(0, rows, row_grain(n + k), [&](int64_t r0, int64_t r1) {
      Scratch<C> acc(static_cast<size_t>(n));
      for (int64_t r = r0; r < r1; ++r) {
        std::fill(acc.begin(), acc.end(), C(0));
        for (int64_t j = 0; j < k; ++j) acc[idx[r * k + j]] += static_cast<C>(g[r * k + j]);
        for (int64_t j = 0; j < n; ++j) dst[r * n + j] = static_cast<T>(acc[j]);
      }
    });
  });
}

}  // namespace

FLB_REGISTER_KERNEL(cummax, kCPU, cum_extreme_kernel);
FLB_REGISTER_KERNEL(logcumsumexp, kCPU, logcumsumexp_kernel);
FLB_REGISTER_KERNEL(value_selecting_reduction_backward, kCPU, scatter_add_rows_kernel);

}  // namespace flambeau
