// The window functions' points (window_ops.cu) as the CPU computes them
// (packages/tensor-core/csrc/cpu/window_kernels.cpp): each in double, products
// feeding sums rounded one at a time (rn_host_device.h), rounded once to the
// output's dtype; point i of an n-point window is f(i / m) with m = n - 1 (n when
// periodic), and a one-point window is 1. Plain C++ with __host__ __device__
// marks: tests/host_kernels/print_windows.cpp prints it from g++ for
// test_window_math.py.
#pragma once
#include <cmath>
#include <cstdint>

#include "backend/kernels/rn_host_device.h"
#include "backend/kernels/strided_index.h"  // FLB_HD

namespace flambeau::cuda::kernels {

enum class WindowOp { kBartlett, kBlackman, kHamming, kHann, kKaiser };

// exp(-x) I0(x) for x >= 0, I0 the modified Bessel function of order 0: its power
// series below 30, its asymptotic expansion above (as the CPU's scaled_i0).
FLB_HD inline double window_scaled_i0(double x) {
  constexpr double kPi = 3.14159265358979323846;
  if (x < 30) {
    double term = 1, sum = 1;
    const double q = x * x / 4;
    for (int k = 1; term > sum * 1e-17; ++k) {
      term = hd_mul_rn(term, q / (static_cast<double>(k) * k));
      sum = hd_add_rn(sum, term);
    }
    return sum * exp(-x);
  }
  double term = 1, sum = 1;
  for (int k = 1; k < 60; ++k) {
    const double next = term * (2 * k - 1) * (2 * k - 1) / (k * 8 * x);
    if (next >= term || next < sum * 1e-17) break;  // diverging, or small enough
    term = next;
    sum = hd_add_rn(sum, term);
  }
  return sum / sqrt(2 * kPi * x);
}

// The parameters of one call: alpha and beta as the kernel table passes them
// (hamming's, kaiser's beta), and kaiser's |beta| with its scaled I0.
struct WindowParams {
  WindowOp op;
  double alpha, beta;
  double kaiser_b, kaiser_scaled_b;
};

FLB_HD inline WindowParams window_params(WindowOp op, double alpha, double beta) {
  const double b = fabs(beta);
  return {op, alpha, beta, b, op == WindowOp::kKaiser ? window_scaled_i0(b) : 1.0};
}

// The window's value at x = i / m in [0, 1].
FLB_HD inline double window_at(const WindowParams& p, double x) {
  constexpr double kPi = 3.14159265358979323846;
  switch (p.op) {
    case WindowOp::kHann:
      return hd_sub_rn(0.5, hd_mul_rn(0.5, cos(2 * kPi * x)));
    case WindowOp::kHamming:
      return hd_sub_rn(p.alpha, hd_mul_rn(p.beta, cos(2 * kPi * x)));
    case WindowOp::kBlackman:
      return hd_add_rn(hd_sub_rn(0.42, hd_mul_rn(0.5, cos(2 * kPi * x))),
                       hd_mul_rn(0.08, cos(4 * kPi * x)));
    case WindowOp::kBartlett:
      return 1 - fabs(2 * x - 1);
    case WindowOp::kKaiser: {
      const double r = 2.0 * x - 1.0;
      const double s = hd_sub_rn(1.0, hd_mul_rn(r, r));
      const double a = p.kaiser_b * sqrt(s > 0.0 ? s : 0.0);
      return exp(a - p.kaiser_b) * window_scaled_i0(a) / p.kaiser_scaled_b;
    }
  }
  return 0.0;
}

// Point i of an n-point window.
FLB_HD inline double window_point(const WindowParams& p, int64_t i, int64_t n, bool periodic) {
  if (n == 1) return 1.0;
  const double m = static_cast<double>(periodic ? n : n - 1);
  return window_at(p, static_cast<double>(i) / m);
}

}  // namespace flambeau::cuda::kernels
