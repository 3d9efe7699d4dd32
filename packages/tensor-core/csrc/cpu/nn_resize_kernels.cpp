// The resampling kernels behind padding (reflect/replicate/circular) and
// interpolation: a gather through per-axis taps, and its adjoint scatter.
#include "cpu/parallel.h"
#include "dispatch/dispatcher.h"
#include "ops/nn_resize_geometry.h"

namespace flambeau {

namespace {

template <class T>
void resample(const Tensor& out, const Tensor& input, const ResampleGeometry& g) {
  const T* x = input->data_as<T>();
  T* y = out->data_as<T>();
  const auto &ad = g.axes[0], &ah = g.axes[1], &aw = g.axes[2];
  const int64_t H = g.in[1], W = g.in[2], oH = g.out[1], oW = g.out[2];
  const int64_t rows = g.planes * g.out[0] * oH;
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(oW * 4, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t r = lo; r < hi; ++r) {
                   const int64_t p = r / (g.out[0] * oH), od = (r / oH) % g.out[0], oh = r % oH;
                   const T* xp = x + p * g.in[0] * H * W;
                   T* yr = y + r * oW;
                   for (int64_t ow = 0; ow < oW; ++ow) {
                     double acc = 0;
                     for (int64_t a = 0; a < ad.taps; ++a) {
                       const int64_t id = ad.index[od * ad.taps + a];
                       const double wd = ad.weight[od * ad.taps + a];
                       for (int64_t b = 0; b < ah.taps; ++b) {
                         const T* xr = xp + (id * H + ah.index[oh * ah.taps + b]) * W;
                         const double wdh = wd * ah.weight[oh * ah.taps + b];
                         for (int64_t c = 0; c < aw.taps; ++c)
                           acc += wdh * aw.weight[ow * aw.taps + c] *
                                  static_cast<double>(xr[aw.index[ow * aw.taps + c]]);
                       }
                     }
                     yr[ow] = static_cast<T>(acc);
                   }
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

FLB_REGISTER_KERNEL("resample", kCPU, resample_kernel);
FLB_REGISTER_KERNEL("resample_backward", kCPU, resample_backward_kernel);

}  // namespace flambeau
