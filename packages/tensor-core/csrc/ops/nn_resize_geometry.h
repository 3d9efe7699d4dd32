// Resampling along three spatial dims of a stack of planes: every output
// position reads a fixed number of taps (input index, weight) per axis. Non-
// constant padding and nearest resizing are one tap of weight 1, linear
// interpolation two. Shared by csrc/ops/nn_resize.cpp and
// csrc/cpu/nn_resize_kernels.cpp.
#pragma once
#include <array>
#include <vector>

#include "core/tensor.h"

namespace flambeau {

struct AxisTaps {
  int64_t taps = 1;            // per output index
  std::vector<int64_t> index;  // out * taps input indices
  std::vector<double> weight;  // out * taps weights
};

struct ResampleGeometry {
  int64_t planes = 0;
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1};
  std::array<AxisTaps, 3> axes;
};

// input/out contiguous (planes, D, H, W) in float32/float64. The forward
// gathers; the backward scatters (adds) grad_output back through the same taps.
// ResampleKernel: declared in kernels/table.yaml.
// ResampleBackwardKernel: declared in kernels/table.yaml.

}  // namespace flambeau
