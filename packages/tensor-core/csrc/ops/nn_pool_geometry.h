// Pooling normalised to three spatial dims over a stack of planes: every
// tensor a kernel sees is contiguous (planes, D, H, W); missing leading spatial
// dims have size 1. Shared by csrc/ops/nn_pool.cpp and csrc/cpu/nn_pool_kernels.cpp.
#pragma once
#include <array>

#include "core/tensor.h"

namespace flambeau {

struct PoolGeometry {
  int64_t planes = 0;
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1}, pad{0, 0, 0}, dilation{1, 1, 1};
  bool count_include_pad = true;
  int64_t divisor = 0;  // avg pool divisor_override; 0: none

  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
};

// Values in the compute dtype (float32/float64); indices int64, flat within a plane.
// MaxPoolKernel: declared in kernels/table.yaml.
// AvgPoolKernel: declared in kernels/table.yaml.
// AvgPoolBackwardKernel: declared in kernels/table.yaml.
// Adaptive pooling reads only planes, in and out.
// dst (planes, dst_plane) = 0, then src (planes, src_plane) written (accumulate:
// added) at indices (planes, src_plane). Returns the flat position in `indices`
// of an index outside [0, dst_plane), or -1 when all are valid (then dst is
// complete).
// IndexScatterKernel: declared in kernels/table.yaml.

}  // namespace flambeau
