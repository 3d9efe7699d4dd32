// Index arithmetic of the convolution kernels' im2col and col2im (conv_ops.cu),
// plain C++ marked __host__ __device__ so the tests check it with g++ against the
// CPU's segment walks (tests/host_kernels/check_im2col_math.cpp).
//
// The column matrix of one sample has one row per (channel, kd, kh, kw) and one
// column per output position (od, oh, ow), as the CPU's (cpu/im2col.h): element
// (r, j) holds input[c][id][ih][iw] with i* = o* * stride - pad + k* * dilation,
// or 0 where that falls in the padding. col2im adds the matrix back: input
// element (c, id, ih, iw) gathers, in kernel-position order, the elements of
// rows (c, k) whose column maps onto it (the CPU scatters them in that order).
#pragma once
#include <flambeau/backend_abi.h>

#include <cstdint>

#include "backend/kernels/strided_index.h"  // FLB_HD

namespace flambeau::cuda::kernels {

FLB_HD inline int64_t conv_kernel_volume(const flb_conv_geometry& g) {
  return g.kernel[0] * g.kernel[1] * g.kernel[2];
}
FLB_HD inline int64_t conv_in_plane(const flb_conv_geometry& g) {
  return g.in[0] * g.in[1] * g.in[2];
}
FLB_HD inline int64_t conv_out_plane(const flb_conv_geometry& g) {
  return g.out[0] * g.out[1] * g.out[2];
}

// A 1x1x1 kernel with stride 1 and no padding: the input is its own column matrix.
FLB_HD inline bool conv_is_pointwise(const flb_conv_geometry& g) {
  for (int a = 0; a < 3; ++a)
    if (g.kernel[a] != 1 || g.stride[a] != 1 || g.pad[a] != 0) return false;
  return true;
}

// The offset in one sample's input (channels, D, H, W) that column-matrix
// element (r, j) reads, or -1 where it lies in the padding (the element is 0).
FLB_HD inline int64_t im2col_source(const flb_conv_geometry& g, int64_t r, int64_t j) {
  const int64_t kvol = conv_kernel_volume(g);
  const int64_t c = r / kvol, k = r % kvol;
  const int64_t kpos[3] = {k / (g.kernel[1] * g.kernel[2]), (k / g.kernel[2]) % g.kernel[1],
                           k % g.kernel[2]};
  const int64_t opos[3] = {j / (g.out[1] * g.out[2]), (j / g.out[2]) % g.out[1], j % g.out[2]};
  int64_t off = c;
  for (int a = 0; a < 3; ++a) {
    const int64_t i = opos[a] * g.stride[a] - g.pad[a] + kpos[a] * g.dilation[a];
    if (i < 0 || i >= g.in[a]) return -1;
    off = off * g.in[a] + i;
  }
  return off;
}

// The column j of kernel position k (0 <= k < kvol) whose window reads input
// position (id, ih, iw), if there is one (true, *j set).
FLB_HD inline bool col2im_column(const flb_conv_geometry& g, int64_t k, const int64_t (&ipos)[3],
                                 int64_t* j) {
  const int64_t kpos[3] = {k / (g.kernel[1] * g.kernel[2]), (k / g.kernel[2]) % g.kernel[1],
                           k % g.kernel[2]};
  int64_t col = 0;
  for (int a = 0; a < 3; ++a) {
    const int64_t t = ipos[a] + g.pad[a] - kpos[a] * g.dilation[a];
    if (t < 0 || t % g.stride[a] != 0) return false;
    const int64_t o = t / g.stride[a];
    if (o >= g.out[a]) return false;
    col = col * g.out[a] + o;
  }
  *j = col;
  return true;
}

}  // namespace flambeau::cuda::kernels
