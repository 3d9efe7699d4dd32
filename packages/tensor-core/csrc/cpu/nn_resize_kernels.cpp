// The resampling kernels behind padding (reflect/replicate/circular) and
// interpolation: a gather through per-axis taps, and its adjoint scatter.
#include <algorithm>
#include <vector>

#include "core/scratch.h"
#include "cpu/parallel.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/nn_resize_geometry.h"

namespace flambeau {

namespace {

// Per-axis taps in T, laid out tap-major (tap c of every output index in one run),
// so the width loop reads each table contiguously.
template <class T>
struct Taps {
  int64_t taps = 1;
  bool unit = true;            // every weight is exactly 1: a pure gather
  std::vector<int64_t> index;  // taps * out
  std::vector<T> weight;       // taps * out
  Taps(const AxisTaps& a, int64_t out) : taps(a.taps), index(a.index.size()), weight(index.size()) {
    for (int64_t o = 0; o < out; ++o)
      for (int64_t c = 0; c < taps; ++c) {
        index[c * out + o] = a.index[o * taps + c];
        weight[c * out + o] = static_cast<T>(a.weight[o * taps + c]);
        unit = unit && a.weight[o * taps + c] == 1.0;
      }
  }
};

// One output row from `src` (an input row, or the blend of several) through the width taps.
template <class T>
void resample_row(T* __restrict__ y, const T* __restrict__ src, const Taps<T>& tw, int64_t ow) {
  const int64_t* ix = tw.index.data();
  const T* wt = tw.weight.data();
  if (tw.taps == 1 && tw.unit) {
    for (int64_t o = 0; o < ow; ++o) y[o] = src[ix[o]];
  } else if (tw.taps == 2) {
    const int64_t* ix1 = ix + ow;
    const T* wt1 = wt + ow;
    for (int64_t o = 0; o < ow; ++o) y[o] = wt[o] * src[ix[o]] + wt1[o] * src[ix1[o]];
  } else {
    for (int64_t o = 0; o < ow; ++o) y[o] = wt[o] * src[ix[o]];
    for (int64_t c = 1; c < tw.taps; ++c)
      for (int64_t o = 0; o < ow; ++o) y[o] += wt[c * ow + o] * src[ix[c * ow + o]];
  }
}

// Separable: per output row, the depth and height taps blend whole input rows
// (contiguous, vectorized) into one row, which the width taps then sample.
// Arithmetic runs in T, as PyTorch's kernels do for float32.
template <class T>
void resample(const Tensor& out, const Tensor& input, const ResampleGeometry& g) {
  const T* x = input->data_as<T>();
  T* y = out->data_as<T>();
  const int64_t D = g.in[0], H = g.in[1], W = g.in[2];
  const int64_t oD = g.out[0], oH = g.out[1], oW = g.out[2];
  const Taps<T> td(g.axes[0], oD), th(g.axes[1], oH), tw(g.axes[2], oW);
  const int64_t rows = g.planes * oD * oH;
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(oW * 4, 1)),
               [&](int64_t lo, int64_t hi) {
                 Scratch<T> mix(static_cast<size_t>(W));
                 T* __restrict__ m = mix.data();
                 for (int64_t r = lo; r < hi; ++r) {
                   const int64_t p = r / (oD * oH), od = (r / oH) % oD, oh = r % oH;
                   const T* xp = x + p * D * H * W;
                   const T* src = nullptr;
                   if (td.taps == 1 && th.taps == 1 && td.unit && th.unit) {
                     src = xp + (td.index[od] * H + th.index[oh]) * W;  // one input row as is
                   } else {
                     bool first = true;
                     for (int64_t a = 0; a < td.taps; ++a)
                       for (int64_t b = 0; b < th.taps; ++b) {
                         const int64_t id = td.index[a * oD + od], ih = th.index[b * oH + oh];
                         const T wgt = td.weight[a * oD + od] * th.weight[b * oH + oh];
                         const T* __restrict__ xr = xp + (id * H + ih) * W;
                         if (first) {
                           for (int64_t i = 0; i < W; ++i) m[i] = wgt * xr[i];
                         } else {
                           for (int64_t i = 0; i < W; ++i) m[i] += wgt * xr[i];
                         }
                         first = false;
                       }
                     src = m;
                   }
                   resample_row(y + r * oW, src, tw, oW);
                 }
               });
}

template <class T>
void resample_backward(const Tensor& grad_input, const Tensor& grad_output,
                       const ResampleGeometry& g) {
  const T* go = grad_output->data_as<T>();
  T* gi = grad_input->data_as<T>();
  const auto &ad = g.axes[0], &ah = g.axes[1], &aw = g.axes[2];
  const int64_t H = g.in[1], W = g.in[2], oH = g.out[1], oW = g.out[2];
  const int64_t in_plane = g.in[0] * H * W, out_plane = g.out[0] * oH * oW;
  parallel_for(0, g.planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(out_plane * 4, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t p = lo; p < hi; ++p) {
                   T* gp = gi + p * in_plane;
                   std::fill(gp, gp + in_plane, T(0));
                   const T* op = go + p * out_plane;
                   for (int64_t od = 0; od < g.out[0]; ++od)
                     for (int64_t oh = 0; oh < oH; ++oh)
                       for (int64_t ow = 0; ow < oW; ++ow) {
                         const double v = static_cast<double>(op[(od * oH + oh) * oW + ow]);
                         for (int64_t a = 0; a < ad.taps; ++a) {
                           const int64_t id = ad.index[od * ad.taps + a];
                           const double wd = v * ad.weight[od * ad.taps + a];
                           for (int64_t b = 0; b < ah.taps; ++b) {
                             T* gr = gp + (id * H + ah.index[oh * ah.taps + b]) * W;
                             const double wdh = wd * ah.weight[oh * ah.taps + b];
                             for (int64_t c = 0; c < aw.taps; ++c)
                               gr[aw.index[ow * aw.taps + c]] +=
                                   static_cast<T>(wdh * aw.weight[ow * aw.taps + c]);
                           }
                         }
                       }
                 }
               });
}

void resample_kernel(const Tensor& out, const Tensor& input, const ResampleGeometry& g) {
  if (out->dtype() == ScalarType::Float32) return resample<float>(out, input, g);
  resample<double>(out, input, g);
}
void resample_backward_kernel(const Tensor& gi, const Tensor& go, const ResampleGeometry& g) {
  if (gi->dtype() == ScalarType::Float32) return resample_backward<float>(gi, go, g);
  resample_backward<double>(gi, go, g);
}

}  // namespace

FLB_REGISTER_KERNEL(resample, kCPU, resample_kernel);
FLB_REGISTER_KERNEL(resample_backward, kCPU, resample_backward_kernel);

}  // namespace flambeau
