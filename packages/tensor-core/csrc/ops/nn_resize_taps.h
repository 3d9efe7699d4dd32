// Per-axis taps of the interpolation modes beyond nearest and linear: bicubic,
// nearest-exact and the antialiased (separable, widened filter) bilinear and
// bicubic. Each maps one axis of in samples onto out samples; scale is the
// user's scale factor (output / input) when it is to be used, as in PyTorch.
#pragma once
#include <optional>

#include "ops/nn_resize_geometry.h"

namespace flambeau {

// A source position as an index in [lo, hi], clamped while still a double: a
// tiny scale factor makes positions huge or infinite, which have no int64 value.
// Truncates toward zero inside the range.
inline int64_t clamped_index(double x, int64_t lo, int64_t hi) {
  if (!(x > static_cast<double>(lo))) return lo;  // NaN too
  if (x >= static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(x);
}

// Cubic convolution with A = -0.75 over 4 taps, indices clamped to the border.
AxisTaps cubic_axis_taps(int64_t in, int64_t out, bool align_corners, std::optional<double> scale);
// One tap at min(floor((o + 0.5) * in / out), in - 1), computed in float as PyTorch.
AxisTaps nearest_exact_axis_taps(int64_t in, int64_t out, std::optional<double> scale);
// The antialiased filter (triangle, or cubic with A = -0.5) whose support grows
// with the downscale factor; weights are normalized per output index and
// padded with zero-weight taps to a fixed count.
AxisTaps antialias_axis_taps(int64_t in, int64_t out, bool align_corners,
                             std::optional<double> scale, bool cubic);

}  // namespace flambeau
