// CPU kernels of the samplers beyond uniform and normal: distributions that
// transform one uniform per element, Poisson, and multinomial. Like the basic
// samplers, every element reads lanes fixed by its index alone, so results do
// not depend on the number of threads.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/scratch.h"
#include "cpu/parallel.h"
#include "cpu/philox_lanes.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/random_kernels.h"

namespace flambeau {

namespace {

constexpr double kPi = 3.141592653589793238462643383279502884;

template <class F>
void for_rows(int64_t n, int64_t cost_per_row, const F& f) {
  parallel_for(0, n, std::max<int64_t>(1, kGrainSize / 4 / std::max<int64_t>(cost_per_row, 1)), f);
}

// A uniform on (0, 1): never 0 or 1, so logs and tangents stay finite.
template <class T>
double open_unit(Lanes& l, uint64_t j) {
  if constexpr (std::is_same_v<T, double>) return ((l.at64(j) >> 11) + 0.5) * 0x1.0p-53;
  return (l.at(j) + 0.5) * 0x1.0p-32;
}

template <class T>
double transform(Distribution d, double u, double a, double b) {
  switch (d) {
    case Distribution::kExponential:
      return -std::log(u) / a;
    case Distribution::kGeometric:
      return std::ceil(std::log(u) / std::log1p(-a));
    case Distribution::kCauchy:
      return a + b * std::tan(kPi * (u - 0.5));
    case Distribution::kLogNormal:
      break;
  }
  return 0.0;
}

void distribution_kernel(const Tensor& out, Generator& gen, Distribution d, double a, double b) {
  if (d == Distribution::kLogNormal) {
    // exp of a normal: draw the normal with the normal sampler's stream, then map.
    kernel<kernels::normal_>(out->device())(out, gen, a, b);
    visit_dtype<kFloatTypes>(out->dtype(), "log_normal_", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* data = out->data_as<T>();
      for_rows(out->numel(), 1, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i)
          data[i] = static_cast<T>(static_cast<compute_t<T>>(std::exp(double(data[i]))));
      });
    });
    return;
  }
  visit_dtype<kRealTypes>(out->dtype(), "sampler", [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int k = std::is_same_v<T, double> ? 2 : 1;
    const int64_t n = out->numel();
    const uint64_t key = gen.seed(), base = gen.reserve(blocks_for(uint64_t(n) * k));
    T* data = out->data_as<T>();
    for_rows(n, 1, [&](int64_t lo, int64_t hi) {
      Lanes l(key, base);
      for (int64_t i = lo; i < hi; ++i) {
        double v = transform<T>(d, open_unit<T>(l, uint64_t(i) * k), a, b);
        if constexpr (std::is_integral_v<T>) {
          // Geometric samples beyond the integer type saturate at its maximum.
          constexpr double top = double(std::numeric_limits<T>::max());
          data[i] = static_cast<T>(v < top ? v : top);
        } else {
          data[i] = static_cast<T>(static_cast<compute_t<T>>(v));
        }
      }
    });
  });
}

// Unbounded draws for one element: counter `counter`, draw j in word j / 4 of
// counter_hi.
class ElementStream {
 public:
  ElementStream(uint64_t key, uint64_t counter) : key_(key), counter_(counter) {}
  double uniform() {  // on (0, 1)
    if ((next_ & 3) == 0) block_ = philox4x32(key_, counter_, next_ >> 2);
    return (block_[next_++ & 3] + 0.5) * 0x1.0p-32;
  }

 private:
  uint64_t key_, counter_, next_ = 0;
  std::array<uint32_t, 4> block_{};
};

// Small rates: count uniforms until their product drops below exp(-rate).
double poisson_by_products(ElementStream& s, double rate) {
  const double limit = std::exp(-rate);
  double product = s.uniform();
  double k = 0;
  while (product > limit) {
    product *= s.uniform();
    k += 1;
  }
  return k;
}

// Large rates: Hormann's transformed rejection with squeeze (PTRS, 1993).
double poisson_by_rejection(ElementStream& s, double rate) {
  const double root = std::sqrt(rate), log_rate = std::log(rate);
  const double b = 0.931 + 2.53 * root;
  const double a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
  const double v_r = 0.9277 - 3.6224 / (b - 2);
  while (true) {
    const double u = s.uniform() - 0.5, v = s.uniform();
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + rate + 0.43);
    if (us >= 0.07 && v <= v_r) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <=
        -rate + k * log_rate - std::lgamma(k + 1))
      return k;
  }
}

void poisson_kernel(const Tensor& out, Generator& gen, const Tensor& rates) {
  visit_dtype<kFloatTypes>(out->dtype(), "poisson", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = out->numel();
    const uint64_t key = gen.seed(), base = gen.reserve(uint64_t(n));
    const double* rate = rates->data_as<double>();
    T* data = out->data_as<T>();
    for_rows(n, 16, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        ElementStream s(key, base + uint64_t(i));
        double r = rate[i];
        double k = r == 0 ? 0 : r < 10 ? poisson_by_products(s, r) : poisson_by_rejection(s, r);
        data[i] = static_cast<T>(static_cast<compute_t<T>>(k));
      }
    });
  });
}

void multinomial_kernel(const Tensor& samples, Generator& gen, const Tensor& probs,
                        bool replacement) {
  const int64_t rows = probs->sizes()[0], cats = probs->sizes()[1];
  const int64_t n = samples->sizes()[1];
  const int64_t lanes_per_row = replacement ? n : cats;
  const uint64_t key = gen.seed(), base = gen.reserve(blocks_for(uint64_t(rows * lanes_per_row)));
  const double* p = probs->data_as<double>();
  int64_t* out = samples->data_as<int64_t>();
  for_rows(rows, cats + n, [&](int64_t lo, int64_t hi) {
    Lanes l(key, base);
    Scratch<double> scratch(cats);
    Scratch<int64_t> order(replacement ? 0 : cats);
    for (int64_t r = lo; r < hi; ++r) {
      const double* row = p + r * cats;
      int64_t* dst = out + r * n;
      const uint64_t first = uint64_t(r * lanes_per_row);
      if (replacement) {
        // Inverse CDF: the first category whose running total exceeds u * total.
        std::partial_sum(row, row + cats, scratch.begin());
        const double total = scratch[cats - 1];
        for (int64_t s = 0; s < n; ++s) {
          const double x = l.at(first + s) * 0x1.0p-32 * total;
          auto it = std::upper_bound(scratch.begin(), scratch.end(), x);
          int64_t c = std::min<int64_t>(it - scratch.begin(), cats - 1);
          while (row[c] == 0 && c > 0) --c;  // rounding at the top edge: stay on the support
          dst[s] = c;
        }
      } else {
        // Exponential keys E_c / p_c: the n smallest are a draw without replacement.
        for (int64_t c = 0; c < cats; ++c) {
          const double e = -std::log((l.at(first + c) + 0.5) * 0x1.0p-32);
          scratch[c] = row[c] > 0 ? e / row[c] : HUGE_VAL;
        }
        std::iota(order.begin(), order.end(), int64_t(0));
        std::partial_sort(order.begin(), order.begin() + n, order.end(), [&](int64_t x, int64_t y) {
          return scratch[x] < scratch[y] || (scratch[x] == scratch[y] && x < y);
        });
        std::copy(order.begin(), order.begin() + n, dst);
      }
    }
  });
}

template <Distribution D>
void sample(const Tensor& out, Generator& gen, double a, double b) {
  distribution_kernel(out, gen, D, a, b);
}

}  // namespace

FLB_REGISTER_KERNEL(exponential_, kCPU, sample<Distribution::kExponential>);
FLB_REGISTER_KERNEL(geometric_, kCPU, sample<Distribution::kGeometric>);
FLB_REGISTER_KERNEL(cauchy_, kCPU, sample<Distribution::kCauchy>);
FLB_REGISTER_KERNEL(log_normal_, kCPU, sample<Distribution::kLogNormal>);
FLB_REGISTER_KERNEL(poisson, kCPU, poisson_kernel);
FLB_REGISTER_KERNEL(multinomial, kCPU, multinomial_kernel);

}  // namespace flambeau
