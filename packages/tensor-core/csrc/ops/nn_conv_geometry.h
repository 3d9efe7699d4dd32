// A convolution normalised to three spatial dims (missing leading dims have
// size 1), shared by the frontends (csrc/ops/nn_conv.cpp) and the CPU kernels.
#pragma once
#include <array>

#include "core/tensor.h"

namespace flambeau {

struct ConvGeometry {
  int64_t batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1}, pad{0, 0, 0}, dilation{1, 1, 1};

  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_volume() const { return kernel[0] * kernel[1] * kernel[2]; }
};

// All tensors are contiguous float32/float64 of one dtype: input (N, Cin, D, H, W),
// weight (Cout, Cin / groups, kD, kH, kW), output (N, Cout, oD, oH, oW); bias (C)
// may be null. The "input" kernel computes the gradient with respect to the
// input (also the forward of the transposed convolution) and adds bias to it.
// ConvForwardKernel: declared in kernels/table.yaml.
// ConvBackwardInputKernel: declared in kernels/table.yaml.
// ConvBackwardWeightKernel: declared in kernels/table.yaml.
// grad_bias (C) = grad_output (N, C, ...) summed over all but dim 1.
// ConvBackwardBiasKernel: declared in kernels/table.yaml.

}  // namespace flambeau
