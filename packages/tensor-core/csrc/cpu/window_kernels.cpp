// CPU kernels of the window functions: each point in double precision, rounded
// once to the output's dtype.
#include "ops/window_kernels.h"

#include <algorithm>
#include <cmath>

#include "cpu/parallel.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"

namespace flambeau {

namespace {

constexpr double kPi = 3.14159265358979323846;

// Writes f(x) at each point n, where x = n / m runs over [0, 1] across the
// symmetric window (m = N - 1, or N when periodic); a window of one point is 1.
template <class F>
void fill(const Tensor& out, bool periodic, const char* op, F&& f) {
  const int64_t n = out->numel();
  const double m = static_cast<double>(periodic ? n : n - 1);
  visit_dtype<kFloatTypes>(out->dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out->data_as<T>();
    parallel_for(0, n, kGrainSize / 16, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i)
        p[i] = convert<T>(n == 1 ? 1.0 : f(static_cast<double>(i) / m));
    });
  });
}

void hann_kernel(const Tensor& out, bool periodic, double, double) {
  fill(out, periodic, "hann_window", [](double x) { return 0.5 - 0.5 * std::cos(2 * kPi * x); });
}

void hamming_kernel(const Tensor& out, bool periodic, double alpha, double beta) {
  fill(out, periodic, "hamming_window",
       [&](double x) { return alpha - beta * std::cos(2 * kPi * x); });
}

void blackman_kernel(const Tensor& out, bool periodic, double, double) {
  fill(out, periodic, "blackman_window",
       [](double x) { return 0.42 - 0.5 * std::cos(2 * kPi * x) + 0.08 * std::cos(4 * kPi * x); });
}

void bartlett_kernel(const Tensor& out, bool periodic, double, double) {
  fill(out, periodic, "bartlett_window", [](double x) { return 1 - std::abs(2 * x - 1); });
}

// exp(-x) I0(x) for x >= 0, I0 the modified Bessel function of order 0: its power
// series sum_k (x^2 / 4)^k / k!^2 below 30, its asymptotic expansion
// (1 / sqrt(2 pi x)) sum_k ((2k - 1)!!)^2 / (k! (8x)^k) above (whose smallest term
// there is about exp(-2x)). Scaled, so kaiser's ratio never overflows.
double scaled_i0(double x) {
  if (x < 30) {
    double term = 1, sum = 1;
    const double q = x * x / 4;
    for (int k = 1; term > sum * 1e-17; ++k) {
      term *= q / (static_cast<double>(k) * k);
      sum += term;
    }
    return sum * std::exp(-x);
  }
  double term = 1, sum = 1;
  for (int k = 1; k < 60; ++k) {
    const double next = term * (2 * k - 1) * (2 * k - 1) / (k * 8 * x);
    if (next >= term || next < sum * 1e-17) break;  // diverging, or small enough
    term = next;
    sum += term;
  }
  return sum / std::sqrt(2 * kPi * x);
}

// I0(beta sqrt(1 - (2x - 1)^2)) / I0(beta), through the scaled I0: exp(a - b) times
// the ratio of the scaled values. NaN for a NaN or infinite beta.
void kaiser_kernel(const Tensor& out, bool periodic, double, double beta) {
  const double b = std::abs(beta), scaled_b = scaled_i0(b);
  fill(out, periodic, "kaiser_window", [&](double x) {
    const double r = 2.0 * x - 1.0;
    const double a = b * std::sqrt(std::max(0.0, 1.0 - r * r));
    return std::exp(a - b) * scaled_i0(a) / scaled_b;
  });
}

}  // namespace

FLB_REGISTER_KERNEL(hann_window, kCPU, hann_kernel);
FLB_REGISTER_KERNEL(hamming_window, kCPU, hamming_kernel);
FLB_REGISTER_KERNEL(blackman_window, kCPU, blackman_kernel);
FLB_REGISTER_KERNEL(bartlett_window, kCPU, bartlett_kernel);
FLB_REGISTER_KERNEL(kaiser_window, kCPU, kaiser_kernel);

}  // namespace flambeau
