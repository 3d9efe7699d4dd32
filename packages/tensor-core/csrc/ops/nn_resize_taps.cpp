// Taps of bicubic, nearest-exact and antialiased resizing (see nn_resize_taps.h).
#include "ops/nn_resize_taps.h"

#include <algorithm>
#include <cmath>

#include "core/scratch.h"

namespace flambeau {

namespace {

// Input samples per output sample (PyTorch's area_pixel_compute_scale).
double source_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners)
    return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  return scale && *scale > 0 ? 1.0 / *scale : static_cast<double>(in) / static_cast<double>(out);
}

// Keys' cubic convolution kernel, for |x| <= 1 and 1 < |x| < 2.
double cubic_near(double x, double a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
double cubic_far(double x, double a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

double aa_filter(double x, bool cubic) {
  x = std::abs(x);
  if (!cubic) return x < 1.0 ? 1.0 - x : 0.0;
  if (x < 1.0) return cubic_near(x, -0.5);
  return x < 2.0 ? cubic_far(x, -0.5) : 0.0;
}

}  // namespace

AxisTaps cubic_axis_taps(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  constexpr double A = -0.75;
  const double r = source_scale(in, out, align_corners, scale);
  AxisTaps a;
  a.taps = 4;
  for (int64_t o = 0; o < out; ++o) {
    const double od = static_cast<double>(o);
    // Unlike linear, a negative source position is kept (not clamped to 0).
    const double src = align_corners ? r * od : r * (od + 0.5) - 0.5;
    const int64_t i0 = clamped_index(std::floor(src), -1, in - 1);
    const double t = std::min(std::max(src - static_cast<double>(i0), 0.0), 1.0);
    const double w[4] = {cubic_far(t + 1, A), cubic_near(t, A), cubic_near(1 - t, A),
                         cubic_far(2 - t, A)};
    for (int64_t j = 0; j < 4; ++j) {
      a.index.push_back(std::min(std::max<int64_t>(i0 - 1 + j, 0), in - 1));
      a.weight.push_back(w[j]);
    }
  }
  return a;
}

AxisTaps nearest_exact_axis_taps(int64_t in, int64_t out, std::optional<double> scale) {
  const float r = scale && *scale > 0 ? static_cast<float>(1.0 / *scale)
                                      : static_cast<float>(in) / static_cast<float>(out);
  AxisTaps a;
  for (int64_t o = 0; o < out; ++o) {
    const float src = std::floor((static_cast<float>(o) + 0.5f) * r);
    a.index.push_back(clamped_index(src, 0, in - 1));
    a.weight.push_back(1.0);
  }
  return a;
}

AxisTaps antialias_axis_taps(int64_t in, int64_t out, bool align_corners,
                             std::optional<double> scale, bool cubic) {
  const double r = source_scale(in, out, align_corners, scale);
  const double half = cubic ? 2.0 : 1.0;  // half the filter's width at scale 1
  // Downscaling stretches the filter over r input samples per output sample.
  // Never wider than the input: beyond it every weight is zero.
  const double support = r >= 1.0 ? half * r : half;
  const double inv = r >= 1.0 ? 1.0 / r : 1.0;
  AxisTaps a;
  // At most the whole input per output (support is infinite for a tiny scale factor).
  a.taps = static_cast<int64_t>(std::min(std::ceil(support), static_cast<double>(in))) * 2 + 1;
  Scratch<double> w(static_cast<size_t>(a.taps));
  for (int64_t o = 0; o < out; ++o) {
    const double center = r * (static_cast<double>(o) + 0.5);
    // Truncation (not floor) as PyTorch; the max with 0 makes them agree.
    const int64_t lo = clamped_index(center - support + 0.5, 0, in);
    const int64_t hi = clamped_index(center + support + 0.5, 0, in);
    const int64_t n = std::clamp<int64_t>(hi - lo, 0, a.taps);
    double total = 0;
    for (int64_t j = 0; j < n; ++j) {
      w[j] = aa_filter((static_cast<double>(j + lo) - center + 0.5) * inv, cubic);
      total += w[j];
    }
    for (int64_t j = 0; j < a.taps; ++j) {
      a.index.push_back(j < n ? lo + j : std::min(lo, in - 1));
      a.weight.push_back(j < n && total != 0.0 ? w[j] / total : 0.0);
    }
  }
  return a;
}

}  // namespace flambeau
