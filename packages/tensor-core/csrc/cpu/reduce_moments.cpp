// CPU kernels of var/std (with or without the mean) and logsumexp. Both take
// two passes: a per-output statistic (mean, max) first, then the deviations
// from it, which keeps them accurate where one-pass formulas cancel.
#include <cmath>
#include <limits>

#include "cpu/reduce.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/reduce_util.h"

namespace flambeau {

namespace {

template <class T>
using wide_t = std::conditional_t<is_complex_t<T>::value, c128, double>;

template <class T>
wide_t<T> widen(T v) {
  if constexpr (is_complex_t<T>::value)
    return c128(v.real(), v.imag());
  else
    return static_cast<double>(static_cast<compute_t<T>>(v));
}

double abs2(double d) { return d * d; }
double abs2(c128 c) { return std::norm(c); }

// var_out has the real type of `in`, mean_out (may be null) in's type; both
// contiguous with the reduced dims kept as 1.
void var_kernel(const Tensor& var_out, const Tensor& mean_out, const Tensor& in, IntList dims,
                double correction, bool take_sqrt) {
  const int64_t n = reduced_count(in, dims);
  visit_dtype<kFloatTypes | kComplexTypes>(in->dtype(), "var", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using W = wide_t<T>;
    using R = real_of_t<T>;
    AccBuffer<W> mean(var_out->sizes(), W(0));
    auto add = [](auto a, auto b) { return a + b; };
    reduce_into<T, W>(mean, in, [](W a, T v) { return a + widen(v); }, add);
    for (int64_t i = 0; i < mean.numel(); ++i) mean.data()[i] /= static_cast<double>(n);
    AccBuffer<double> dev(var_out->sizes(), 0.0);
    reduce_into2<T, W, double>(
        dev, in, mean.view(in->sizes()), [](double a, T v, W m) { return a + abs2(widen(v) - m); },
        add);
    const double div = std::max(0.0, static_cast<double>(n) - correction);
    finish<R>(var_out, dev, [&](double a) {
      double v = a / div;
      return convert<R>(take_sqrt ? std::sqrt(v) : v);
    });
    if (mean_out) finish<T>(mean_out, mean, [](W m) { return convert<T>(m); });
  });
}

// logsumexp over dims: max m, then log(sum(exp(x - m))) + m (m = 0 when infinite).
void logsumexp_kernel(const Tensor& out, const Tensor& in, IntList, Span<Scalar>) {
  visit_dtype<kFloatTypes>(in->dtype(), "logsumexp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto pick = [](double a, double x) { return ((x > a) | (x != x)) ? x : a; };
    AccBuffer<double> mx(out->sizes(), -std::numeric_limits<double>::infinity());
    reduce_into<T, double>(mx, in, [&](double a, T v) { return pick(a, widen(v)); }, pick);
    for (int64_t i = 0; i < mx.numel(); ++i)
      if (std::isinf(mx.data()[i])) mx.data()[i] = 0.0;
    AccBuffer<double> s(out->sizes(), 0.0);
    reduce_into2<T, double, double>(
        s, in, mx.view(in->sizes()),
        [](double a, T v, double m) { return a + std::exp(widen(v) - m); },
        [](double a, double b) { return a + b; });
    const double* m = mx.data();
    T* o = out->data_as<T>();
    for (int64_t i = 0; i < s.numel(); ++i) o[i] = convert<T>(std::log(s.data()[i]) + m[i]);
  });
}

}  // namespace

FLB_REGISTER_KERNEL(var, kCPU, var_kernel);
FLB_REGISTER_KERNEL(logsumexp, kCPU, logsumexp_kernel);

}  // namespace flambeau
