// im2col / col2im over three spatial dims: the column matrix has one row per
// (channel, kd, kh, kw) and one column per output position, so a convolution is
// one GEMM with the (Cout, Cin * kvol) weight matrix.
#pragma once
#include <algorithm>
#include <cstring>

#include "cpu/parallel.h"
#include "ops/nn_conv_geometry.h"

namespace flambeau {

namespace im2col_detail {

inline int64_t ceil_div(int64_t a, int64_t b) { return a <= 0 ? 0 : (a - 1) / b + 1; }  // b > 0

// The output columns ow whose input column ow * stride + off lies in [0, width).
inline void valid_range(int64_t off, int64_t stride, int64_t width, int64_t out, int64_t& lo,
                        int64_t& hi) {
  lo = std::min(out, ceil_div(-off, stride));
  hi = std::min(out, ceil_div(width - off, stride));
  hi = std::max(lo, hi);
}

// Calls f(row, c, kd, kh, kw, od, oh, id, ih, valid) for every output row segment.
template <class F>
void for_each_segment(int64_t c, int64_t kd, int64_t kh, const ConvGeometry& g, const F& f) {
  for (int64_t od = 0; od < g.out[0]; ++od) {
    int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dilation[1];
      bool valid = id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1];
      f(od * g.out[1] + oh, valid ? (c * g.in[0] + id) * g.in[1] + ih : -1);
    }
  }
}

}  // namespace im2col_detail

// in: (channels, D, H, W) -> col: (channels * kvol, oD * oH * oW).
template <class T>
void im2col(const T* in, T* col, int64_t channels, const ConvGeometry& g) {
  using namespace im2col_detail;
  const int64_t kvol = g.kernel_volume(), cols = g.out_plane(), ow_n = g.out[2], w = g.in[2];
  const int64_t rows = channels * kvol;
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(cols, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t r = lo; r < hi; ++r) {
                   int64_t c = r / kvol, k = r % kvol;
                   int64_t kd = k / (g.kernel[1] * g.kernel[2]);
                   int64_t kh = (k / g.kernel[2]) % g.kernel[1], kw = k % g.kernel[2];
                   int64_t off = kw * g.dilation[2] - g.pad[2], sw = g.stride[2], a, b;
                   valid_range(off, sw, w, ow_n, a, b);
                   T* dst = col + r * cols;
                   for_each_segment(c, kd, kh, g, [&](int64_t seg, int64_t src_row) {
                     T* d = dst + seg * ow_n;
                     if (src_row < 0) {
                       std::fill(d, d + ow_n, T(0));
                       return;
                     }
                     const T* s = in + src_row * w + off;
                     std::fill(d, d + a, T(0));
                     if (sw == 1) {
                       std::memcpy(d + a, s + a, static_cast<size_t>(b - a) * sizeof(T));
                     } else {
                       for (int64_t ow = a; ow < b; ++ow) d[ow] = s[ow * sw];
                     }
                     std::fill(d + b, d + ow_n, T(0));
                   });
                 }
               });
}

// The column matrix of a 2-D convolution with stride 1 along H, built once per
// kernel column instead of once per kernel element: in (channels, H, W) -> col
// (channels * kW, zH * oW) with zH = oH + (kH - 1) * dilation_h, where row
// (c, kw), column (zh, ow) holds in[c][zh - pad_h][ow * stride_w + kw * dilation_w - pad_w]
// (0 outside). Kernel row kh then reads the columns [kh * dilation_h * oW, + oH * oW):
// a plain matrix with leading dimension zH * oW, a third of im2col's size for 3x3.
inline bool rows_im2col_applies(const ConvGeometry& g) {
  return g.in[0] == 1 && g.out[0] == 1 && g.kernel[0] == 1 && g.pad[0] == 0 && g.stride[1] == 1 &&
         g.kernel[1] > 1;
}
inline int64_t rows_im2col_height(const ConvGeometry& g) {
  return g.out[1] + (g.kernel[1] - 1) * g.dilation[1];
}

template <class T>
void rows_im2col(const T* in, T* col, int64_t channels, const ConvGeometry& g) {
  using namespace im2col_detail;
  const int64_t kw_n = g.kernel[2], ow_n = g.out[2], w = g.in[2], h = g.in[1];
  const int64_t zh_n = rows_im2col_height(g), cols = zh_n * ow_n;
  parallel_for(0, channels * kw_n, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(cols, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t r = lo; r < hi; ++r) {
                   const int64_t c = r / kw_n, kw = r % kw_n;
                   const int64_t off = kw * g.dilation[2] - g.pad[2], sw = g.stride[2];
                   int64_t a, b;
                   valid_range(off, sw, w, ow_n, a, b);
                   for (int64_t zh = 0; zh < zh_n; ++zh) {
                     T* d = col + r * cols + zh * ow_n;
                     const int64_t ih = zh - g.pad[1];
                     if (ih < 0 || ih >= h) {
                       std::fill(d, d + ow_n, T(0));
                       continue;
                     }
                     const T* s = in + (c * h + ih) * w + off;
                     std::fill(d, d + a, T(0));
                     if (sw == 1) {
                       std::memcpy(d + a, s + a, static_cast<size_t>(b - a) * sizeof(T));
                     } else {
                       for (int64_t ow = a; ow < b; ++ow) d[ow] = s[ow * sw];
                     }
                     std::fill(d + b, d + ow_n, T(0));
                   }
                 }
               });
}

// Adds col (channels * kvol, oD * oH * oW) back into in (channels, D, H, W);
// channels run in parallel, as each owns its plane.
template <class T>
void col2im_add(const T* col, T* in, int64_t channels, const ConvGeometry& g) {
  using namespace im2col_detail;
  const int64_t kvol = g.kernel_volume(), cols = g.out_plane(), ow_n = g.out[2], w = g.in[2];
  parallel_for(0, channels, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(cols * kvol, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t c = lo; c < hi; ++c) {
                   for (int64_t k = 0; k < kvol; ++k) {
                     int64_t kd = k / (g.kernel[1] * g.kernel[2]);
                     int64_t kh = (k / g.kernel[2]) % g.kernel[1], kw = k % g.kernel[2];
                     int64_t off = kw * g.dilation[2] - g.pad[2], sw = g.stride[2], a, b;
                     valid_range(off, sw, w, ow_n, a, b);
                     const T* src = col + (c * kvol + k) * cols;
                     for_each_segment(c, kd, kh, g, [&](int64_t seg, int64_t dst_row) {
                       if (dst_row < 0) return;
                       const T* s = src + seg * ow_n;
                       T* d = in + dst_row * w + off;
                       for (int64_t ow = a; ow < b; ++ow) d[ow * sw] += s[ow];
                     });
                   }
                 }
               });
}

}  // namespace flambeau
