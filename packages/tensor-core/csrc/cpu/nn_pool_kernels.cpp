// Pooling kernels over contiguous (planes, D, H, W) tensors, parallel over
// planes (and output rows for the forward passes). Backward passes scatter
// within a plane, so a plane belongs to one thread.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include "core/scratch.h"
#include "cpu/parallel.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/nn_pool_geometry.h"

namespace flambeau {

namespace {

// Window [start, end) of output position o along one dim, before clipping.
struct Window {
  int64_t start, end;
};

template <class F>
void for_each_output_row(const PoolGeometry& g, const F& f) {
  const int64_t rows = g.planes * g.out[0] * g.out[1];
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(g.out[2] * 8, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t r = lo; r < hi; ++r)
                   f(r / (g.out[0] * g.out[1]), (r / g.out[1]) % g.out[0], r % g.out[1], r);
               });
}

// The outputs [lo, hi) a kernel column reaches, reading input column o * stride + off.
inline void column_range(int64_t off, int64_t stride, int64_t in, int64_t out, int64_t& lo,
                         int64_t& hi) {
  lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
  hi = in - 1 - off < 0 ? 0 : std::min(out, (in - 1 - off) / stride + 1);
}

// The kernel taps [lo, hi) of a window starting at `start` (stride `dilation`)
// that land inside [0, in): a window may be far larger than the input (a huge
// kernel_size with ceil_mode), and only these taps are worth a visit.
inline void tap_range(int64_t start, int64_t dilation, int64_t kernel, int64_t in, int64_t& lo,
                      int64_t& hi) {
  lo = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  hi = in - 1 - start < 0 ? 0 : std::min(kernel, (in - 1 - start) / dilation + 1);
}

// One input row's kernel column into a running (max, index) over outputs [lo, hi).
// A tap replaces the running max when it is the first, larger, or NaN: ties keep
// the first max and a NaN (the last one) wins. Written branch-free (bitwise ors,
// unconditional stores) so it vectorizes: random data would mispredict every
// other compare. S > 0 fixes the stride at compile time; I is the index type of
// the running buffer (int32 when a plane allows, for lanes as wide as float's).
template <class T, class I, int64_t S>
void max_sweep(const T* __restrict__ xr, I base, int64_t off, int64_t stride, int64_t lo,
               int64_t hi, T* __restrict__ best, I* __restrict__ at) {
  const int64_t st = S > 0 ? S : stride;
  for (int64_t o = lo; o < hi; ++o) {
    const int64_t iw = o * st + off;
    const T v = xr[iw], b = best[o];
    const I a = at[o];
    const bool take = (a < 0) | (v > b) | (v != v);
    best[o] = take ? v : b;
    at[o] = take ? static_cast<I>(base + iw) : a;
  }
}

template <class T, class I>
using MaxSweep = void (*)(const T*, I, int64_t, int64_t, int64_t, int64_t, T*, I*);

template <class T, class I>
MaxSweep<T, I> max_sweep_for(int64_t stride) {
  return stride == 1 ? max_sweep<T, I, 1> : stride == 2 ? max_sweep<T, I, 2> : max_sweep<T, I, 0>;
}

// Parallel over output rows; each row's running max is built in place in the
// output, its indices in a per-thread buffer of I, by sweeping the valid input
// rows of the window in window order.
template <class T, class I>
void max_pool_rows(const Tensor& out, const Tensor& indices, const Tensor& input,
                   const PoolGeometry& g) {
  const T* x = input->data_as<T>();
  T* y = out->data_as<T>();
  int64_t* ix = indices->data_as<int64_t>();
  const int64_t H = g.in[1], W = g.in[2], oW = g.out[2], sw = g.stride[2];
  const MaxSweep<T, I> sweep = max_sweep_for<T, I>(sw);
  const int64_t rows = g.planes * g.out[0] * g.out[1];
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(oW * 8, 1)),
               [&](int64_t lo, int64_t hi) {
                 Scratch<I> buffer(static_cast<size_t>(oW));
                 I* at = buffer.data();
                 for (int64_t row = lo; row < hi; ++row) {
                   const int64_t p = row / (g.out[0] * g.out[1]);
                   const int64_t od = (row / g.out[1]) % g.out[0], oh = row % g.out[1];
                   const T* xp = x + p * g.in_plane();
                   T* best = y + row * oW;
                   std::fill(best, best + oW, -std::numeric_limits<T>::infinity());
                   std::fill(at, at + oW, I(-1));
                   const int64_t d0 = od * g.stride[0] - g.pad[0];
                   const int64_t h0 = oh * g.stride[1] - g.pad[1];
                   int64_t kd0, kd1, kh0, kh1, kw0, kw1;
                   tap_range(d0, g.dilation[0], g.kernel[0], g.in[0], kd0, kd1);
                   tap_range(h0, g.dilation[1], g.kernel[1], H, kh0, kh1);
                   // Column taps some output column reaches: tap kw reads columns
                   // kw * dilation - pad + c * stride for c in [0, oW).
                   const int64_t first = g.pad[2] - (oW - 1) * sw;  // kw * dilation >= this
                   kw0 = first <= 0 ? 0 : (first + g.dilation[2] - 1) / g.dilation[2];
                   kw1 = std::min(g.kernel[2], (W - 1 + g.pad[2]) / g.dilation[2] + 1);
                   for (int64_t kd = kd0; kd < kd1; ++kd) {
                     const int64_t id = d0 + kd * g.dilation[0];
                     for (int64_t kh = kh0; kh < kh1; ++kh) {
                       const int64_t ih = h0 + kh * g.dilation[1];
                       const int64_t base = (id * H + ih) * W;
                       for (int64_t kw = kw0; kw < kw1; ++kw) {
                         const int64_t off = kw * g.dilation[2] - g.pad[2];
                         int64_t c0, c1;
                         column_range(off, sw, W, oW, c0, c1);
                         sweep(xp + base, static_cast<I>(base), off, sw, c0, c1, best, at);
                       }
                     }
                   }
                   std::copy(at, at + oW, ix + row * oW);
                 }
               });
}

// The most common pooling, 2x2 windows with stride 2 that all lie inside the input
// (2-D, no padding or dilation), without max_pool_rows's per-row set-up, which costs
// more than the row's few outputs. Same rules: window order, the first of equal maxima,
// the last NaN.
bool is_plain_2x2(const PoolGeometry& g) {
  return g.in[0] == 1 && g.kernel[0] == 1 && g.kernel[1] == 2 && g.kernel[2] == 2 &&
         g.stride[1] == 2 && g.stride[2] == 2 && g.pad[1] == 0 && g.pad[2] == 0 &&
         g.dilation[1] == 1 && g.dilation[2] == 1 && 2 * g.out[1] <= g.in[1] &&
         2 * g.out[2] <= g.in[2];
}

template <class T>
void max_pool_2x2(const Tensor& out, const Tensor& indices, const Tensor& input,
                  const PoolGeometry& g) {
  const T* x = input->data_as<T>();
  T* y = out->data_as<T>();
  int64_t* ix = indices->data_as<int64_t>();
  const int64_t H = g.in[1], W = g.in[2], oH = g.out[1], oW = g.out[2];
  parallel_for(0, g.planes * oH, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(oW * 4, 1)),
               [&](int64_t lo, int64_t hi) {
                 Scratch<int32_t> taps(static_cast<size_t>(oW));
                 int32_t* __restrict__ tap = taps.data();  // the winner: 2 * row + column
                 for (int64_t row = lo; row < hi; ++row) {
                   const int64_t base = 2 * (row % oH) * W;
                   const T* top = x + row / oH * H * W + base;
                   T* __restrict__ best = y + row * oW;
                   for (int64_t o = 0; o < oW; ++o) {
                     best[o] = top[2 * o];
                     tap[o] = 0;
                   }
                   // One pass per tap, each a branch-free loop the compiler vectorizes.
                   for (int32_t k = 1; k < 4; ++k) {
                     const T* __restrict__ src = top + (k >> 1) * W + (k & 1);
                     for (int64_t o = 0; o < oW; ++o) {
                       const T v = src[2 * o], b = best[o];
                       const bool take = (v > b) | (v != v);
                       best[o] = take ? v : b;
                       tap[o] = take ? k : tap[o];
                     }
                   }
                   int64_t* __restrict__ io = ix + row * oW;
                   for (int64_t o = 0; o < oW; ++o)
                     io[o] = base + 2 * o + (tap[o] >> 1) * W + (tap[o] & 1);
                 }
               });
}

template <class T>
void max_pool(const Tensor& out, const Tensor& indices, const Tensor& input,
              const PoolGeometry& g) {
  if (is_plain_2x2(g)) return max_pool_2x2<T>(out, indices, input, g);
  if (g.in_plane() <= std::numeric_limits<int32_t>::max())
    return max_pool_rows<T, int32_t>(out, indices, input, g);
  max_pool_rows<T, int64_t>(out, indices, input, g);
}

// The clipped window along dim i and its size before clipping (for the divisor).
inline void avg_window(const PoolGeometry& g, int i, int64_t o, int64_t& s, int64_t& e,
                       int64_t& padded) {
  s = o * g.stride[i] - g.pad[i];
  e = s + std::min(g.kernel[i], g.in[i] + g.pad[i] - s);  // no overflow for a huge kernel
  padded = e - s;
  s = std::max<int64_t>(s, 0);
  e = std::min(e, g.in[i]);
}

template <class T, class F>
void for_each_avg_window(const PoolGeometry& g, int64_t od, int64_t oh, int64_t ow, const F& f) {
  int64_t s[3], e[3], padded[3];
  int64_t o[3] = {od, oh, ow};
  for (int i = 0; i < 3; ++i) avg_window(g, i, o[i], s[i], e[i], padded[i]);
  int64_t count = g.divisor;
  if (count == 0)
    count = g.count_include_pad ? padded[0] * padded[1] * padded[2]
                                : (e[0] - s[0]) * (e[1] - s[1]) * (e[2] - s[2]);
  f(s, e, count);
}

// Parallel over output rows. A row first sums the valid input rows of its window
// (depth x height) into one column-sum row, whole rows at a time (vectorized),
// then each output adds its clipped span of column sums; spans and their padded
// widths come from a table built once.
template <class T>
void avg_pool(const Tensor& out, const Tensor& input, const PoolGeometry& g) {
  const T* x = input->data_as<T>();
  T* y = out->data_as<T>();
  const int64_t H = g.in[1], W = g.in[2], oW = g.out[2];
  Scratch<int64_t> ws(oW), we(oW), wpad(oW);
  for (int64_t ow = 0; ow < oW; ++ow) avg_window(g, 2, ow, ws[ow], we[ow], wpad[ow]);
  const int64_t rows = g.planes * g.out[0] * g.out[1];
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(oW * 8, 1)),
               [&](int64_t lo, int64_t hi) {
                 Scratch<T> buffer(static_cast<size_t>(W));
                 T* __restrict__ col = buffer.data();
                 for (int64_t row = lo; row < hi; ++row) {
                   const int64_t p = row / (g.out[0] * g.out[1]);
                   const int64_t od = (row / g.out[1]) % g.out[0], oh = row % g.out[1];
                   int64_t ds, de, dpad, hs, he, hpad;
                   avg_window(g, 0, od, ds, de, dpad);
                   avg_window(g, 1, oh, hs, he, hpad);
                   std::fill(col, col + W, T(0));
                   const T* xp = x + p * g.in_plane();
                   for (int64_t d = ds; d < de; ++d)
                     for (int64_t h = hs; h < he; ++h) {
                       const T* __restrict__ xr = xp + (d * H + h) * W;
                       for (int64_t w = 0; w < W; ++w) col[w] += xr[w];
                     }
                   const int64_t rows_in = (de - ds) * (he - hs);
                   T* yr = y + row * oW;
                   for (int64_t ow = 0; ow < oW; ++ow) {
                     T acc = 0;
                     for (int64_t w = ws[ow]; w < we[ow]; ++w) acc += col[w];
                     int64_t count = g.divisor;
                     if (count == 0)
                       count = g.count_include_pad ? dpad * hpad * wpad[ow]
                                                   : rows_in * (we[ow] - ws[ow]);
                     yr[ow] = count ? acc / static_cast<T>(count) : T(0);
                   }
                 }
               });
}

template <class F>
void for_each_plane(const PoolGeometry& g, int64_t work, const F& f) {
  parallel_for(0, g.planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(work, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t p = lo; p < hi; ++p) f(p);
               });
}

template <class T>
void avg_pool_backward(const Tensor& grad_input, const Tensor& grad_output, const PoolGeometry& g) {
  const T* go = grad_output->data_as<T>();
  T* gi = grad_input->data_as<T>();
  const int64_t H = g.in[1], W = g.in[2];
  for_each_plane(g, g.out_plane() * 4, [&](int64_t p) {
    T* gp = gi + p * g.in_plane();
    std::fill(gp, gp + g.in_plane(), T(0));
    const T* op = go + p * g.out_plane();
    for (int64_t od = 0; od < g.out[0]; ++od)
      for (int64_t oh = 0; oh < g.out[1]; ++oh)
        for (int64_t ow = 0; ow < g.out[2]; ++ow)
          for_each_avg_window<T>(g, od, oh, ow, [&](int64_t* s, int64_t* e, int64_t count) {
            if (count == 0) return;
            T v = op[(od * g.out[1] + oh) * g.out[2] + ow] / static_cast<T>(count);
            for (int64_t d = s[0]; d < e[0]; ++d)
              for (int64_t h = s[1]; h < e[1]; ++h)
                for (int64_t w = s[2]; w < e[2]; ++w) gp[(d * H + h) * W + w] += v;
          });
  });
}

// Adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out)).
inline int64_t adaptive_start(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
inline int64_t adaptive_end(int64_t o, int64_t in, int64_t out) {
  return ((o + 1) * in + out - 1) / out;
}

template <class F>
void adaptive_window(const PoolGeometry& g, int64_t od, int64_t oh, int64_t ow, const F& f) {
  int64_t o[3] = {od, oh, ow}, s[3], e[3];
  for (int i = 0; i < 3; ++i) {
    s[i] = adaptive_start(o[i], g.in[i], g.out[i]);
    e[i] = adaptive_end(o[i], g.in[i], g.out[i]);
  }
  f(s, e);
}

template <class T>
void adaptive_avg(const Tensor& out, const Tensor& input, const PoolGeometry& g) {
  const T* x = input->data_as<T>();
  T* y = out->data_as<T>();
  const int64_t H = g.in[1], W = g.in[2];
  for_each_output_row(g, [&](int64_t p, int64_t od, int64_t oh, int64_t row) {
    const T* xp = x + p * g.in_plane();
    for (int64_t ow = 0; ow < g.out[2]; ++ow)
      adaptive_window(g, od, oh, ow, [&](int64_t* s, int64_t* e) {
        T acc = 0;
        for (int64_t d = s[0]; d < e[0]; ++d)
          for (int64_t h = s[1]; h < e[1]; ++h)
            for (int64_t w = s[2]; w < e[2]; ++w) acc += xp[(d * H + h) * W + w];
        y[row * g.out[2] + ow] =
            acc / static_cast<T>((e[0] - s[0]) * (e[1] - s[1]) * (e[2] - s[2]));
      });
  });
}

template <class T>
void adaptive_avg_backward(const Tensor& grad_input, const Tensor& grad_output,
                           const PoolGeometry& g) {
  const T* go = grad_output->data_as<T>();
  T* gi = grad_input->data_as<T>();
  const int64_t H = g.in[1], W = g.in[2];
  for_each_plane(g, g.in_plane() * 2, [&](int64_t p) {
    T* gp = gi + p * g.in_plane();
    std::fill(gp, gp + g.in_plane(), T(0));
    const T* op = go + p * g.out_plane();
    for (int64_t od = 0; od < g.out[0]; ++od)
      for (int64_t oh = 0; oh < g.out[1]; ++oh)
        for (int64_t ow = 0; ow < g.out[2]; ++ow)
          adaptive_window(g, od, oh, ow, [&](int64_t* s, int64_t* e) {
            T v = op[(od * g.out[1] + oh) * g.out[2] + ow] /
                  static_cast<T>((e[0] - s[0]) * (e[1] - s[1]) * (e[2] - s[2]));
            for (int64_t d = s[0]; d < e[0]; ++d)
              for (int64_t h = s[1]; h < e[1]; ++h)
                for (int64_t w = s[2]; w < e[2]; ++w) gp[(d * H + h) * W + w] += v;
          });
  });
}

template <class T>
void adaptive_max(const Tensor& out, const Tensor& indices, const Tensor& input,
                  const PoolGeometry& g) {
  const T* x = input->data_as<T>();
  T* y = out->data_as<T>();
  int64_t* ix = indices->data_as<int64_t>();
  const int64_t H = g.in[1], W = g.in[2];
  for_each_output_row(g, [&](int64_t p, int64_t od, int64_t oh, int64_t row) {
    const T* xp = x + p * g.in_plane();
    for (int64_t ow = 0; ow < g.out[2]; ++ow)
      adaptive_window(g, od, oh, ow, [&](int64_t* s, int64_t* e) {
        T best = 0;
        int64_t at = -1;
        for (int64_t d = s[0]; d < e[0]; ++d)
          for (int64_t h = s[1]; h < e[1]; ++h)
            for (int64_t w = s[2]; w < e[2]; ++w) {
              int64_t idx = (d * H + h) * W + w;
              T v = xp[idx];
              if (at < 0 || v > best || std::isnan(v)) {
                best = v;
                at = idx;
              }
            }
        y[row * g.out[2] + ow] = best;
        ix[row * g.out[2] + ow] = at;
      });
  });
}

template <class T>
int64_t index_scatter(const Tensor& dst, const Tensor& src, const Tensor& indices,
                      bool accumulate) {
  const int64_t planes = dst->sizes()[0];
  const int64_t dn = planes ? dst->numel() / planes : 0, sn = planes ? src->numel() / planes : 0;
  const T* s = src->data_as<T>();
  const int64_t* ix = indices->data_as<int64_t>();
  T* d = dst->data_as<T>();
  // The position in `indices` of an invalid index, or -1: a position, since any
  // int64 value (-1 included) can be the bad index itself.
  std::atomic<int64_t> bad{-1};
  parallel_for(0, planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(dn + sn, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t p = lo; p < hi; ++p) {
                   T* dp = d + p * dn;
                   std::fill(dp, dp + dn, T(0));
                   for (int64_t i = 0; i < sn; ++i) {
                     int64_t at = ix[p * sn + i];
                     if (at < 0 || at >= dn) {
                       bad.store(p * sn + i);
                       return;
                     }
                     if (accumulate)
                       dp[at] += s[p * sn + i];
                     else
                       dp[at] = s[p * sn + i];
                   }
                 }
               });
  return bad.load();
}

void max_pool_kernel(const Tensor& out, const Tensor& indices, const Tensor& input,
                     const PoolGeometry& g) {
  if (out->dtype() == ScalarType::Float32) return max_pool<float>(out, indices, input, g);
  max_pool<double>(out, indices, input, g);
}
void avg_pool_kernel(const Tensor& out, const Tensor& input, const PoolGeometry& g) {
  if (out->dtype() == ScalarType::Float32) return avg_pool<float>(out, input, g);
  avg_pool<double>(out, input, g);
}
void avg_pool_backward_kernel(const Tensor& gi, const Tensor& go, const PoolGeometry& g) {
  if (gi->dtype() == ScalarType::Float32) return avg_pool_backward<float>(gi, go, g);
  avg_pool_backward<double>(gi, go, g);
}
void adaptive_avg_kernel(const Tensor& out, const Tensor& input, const PoolGeometry& g) {
  if (out->dtype() == ScalarType::Float32) return adaptive_avg<float>(out, input, g);
  adaptive_avg<double>(out, input, g);
}
void adaptive_avg_backward_kernel(const Tensor& gi, const Tensor& go, const PoolGeometry& g) {
  if (gi->dtype() == ScalarType::Float32) return adaptive_avg_backward<float>(gi, go, g);
  adaptive_avg_backward<double>(gi, go, g);
}
void adaptive_max_kernel(const Tensor& out, const Tensor& indices, const Tensor& input,
                         const PoolGeometry& g) {
  if (out->dtype() == ScalarType::Float32) return adaptive_max<float>(out, indices, input, g);
  adaptive_max<double>(out, indices, input, g);
}
int64_t index_scatter_kernel(const Tensor& dst, const Tensor& src, const Tensor& indices,
                             bool accumulate) {
  if (dst->dtype() == ScalarType::Float32)
    return index_scatter<float>(dst, src, indices, accumulate);
  return index_scatter<double>(dst, src, indices, accumulate);
}

}  // namespace

FLB_REGISTER_KERNEL(max_pool, kCPU, max_pool_kernel);
FLB_REGISTER_KERNEL(avg_pool, kCPU, avg_pool_kernel);
FLB_REGISTER_KERNEL(avg_pool_backward, kCPU, avg_pool_backward_kernel);
FLB_REGISTER_KERNEL(adaptive_avg_pool, kCPU, adaptive_avg_kernel);
FLB_REGISTER_KERNEL(adaptive_avg_pool_backward, kCPU, adaptive_avg_backward_kernel);
FLB_REGISTER_KERNEL(adaptive_max_pool, kCPU, adaptive_max_kernel);
FLB_REGISTER_KERNEL(pool_index_scatter, kCPU, index_scatter_kernel);

}  // namespace flambeau
