// Convolution kernels: im2col + one OpenBLAS GEMM per (sample, group). A 1x1
// kernel with stride 1 and no padding reads the input as its own column matrix.
// GEMM threads itself; im2col/col2im run on our threads.
#include <cblas.h>

#include <optional>
#include <vector>

#include "core/interpreter_lock.h"
#include "cpu/im2col.h"
#include "cpu/parallel.h"
#include "dispatch/dispatcher.h"
#include "ops/nn_conv_geometry.h"

namespace flambeau {

namespace {

template <class T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc) {
  auto t = [](bool x) { return x ? CblasTrans : CblasNoTrans; };
  if constexpr (std::is_same_v<T, float>) {
    scipy_cblas_sgemm(CblasRowMajor, t(ta), t(tb), static_cast<int>(m), static_cast<int>(n),
                      static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b, static_cast<int>(ldb),
                      beta, c, static_cast<int>(ldc));
  } else {
    scipy_cblas_dgemm(CblasRowMajor, t(ta), t(tb), static_cast<int>(m), static_cast<int>(n),
                      static_cast<int>(k), 1.0, a, static_cast<int>(lda), b, static_cast<int>(ldb),
                      beta, c, static_cast<int>(ldc));
  }
}

bool is_pointwise(const ConvGeometry& g) {
  for (int i = 0; i < 3; ++i)
    if (g.kernel[i] != 1 || g.stride[i] != 1 || g.pad[i] != 0) return false;
  return true;
}

// Writes bias[c] to every element of channel c of `out` (N, C, plane), or zeros.
template <class T>
void fill_bias(T* out, const Tensor& bias, int64_t batch, int64_t channels, int64_t plane) {
  const T* b = bias ? bias->data_as<T>() : nullptr;
  parallel_for(0, batch * channels, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(plane, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t i = lo; i < hi; ++i)
                   std::fill(out + i * plane, out + (i + 1) * plane, b ? b[i % channels] : T(0));
               });
}

template <class T>
void forward(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias,
             const ConvGeometry& g) {
  ReleaseInterpreterLock unlocked;
  const int64_t cg = g.in_channels / g.groups, og = g.out_channels / g.groups;
  const int64_t rows = cg * g.kernel_volume(), cols = g.out_plane(), plane = g.in_plane();
  const bool direct = is_pointwise(g);
  std::vector<T> col(direct ? 0 : static_cast<size_t>(rows * cols));
  T* y = out->data_as<T>();
  const T *x = input->data_as<T>(), *w = weight->data_as<T>();
  fill_bias<T>(y, bias, g.batch, g.out_channels, cols);
  if (rows == 0) return;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const T* xs = x + (n * g.in_channels + grp * cg) * plane;
      if (!direct) im2col(xs, col.data(), cg, g);
      gemm<T>(false, false, og, cols, rows, w + grp * og * rows, rows, direct ? xs : col.data(),
              cols, T(1), y + (n * g.out_channels + grp * og) * cols, cols);
    }
  }
}

template <class T>
void backward_input(const Tensor& grad_input, const Tensor& grad_output, const Tensor& weight,
                    const Tensor& bias, const ConvGeometry& g) {
  ReleaseInterpreterLock unlocked;
  const int64_t cg = g.in_channels / g.groups, og = g.out_channels / g.groups;
  const int64_t rows = cg * g.kernel_volume(), cols = g.out_plane(), plane = g.in_plane();
  const bool direct = is_pointwise(g);
  std::vector<T> col(direct ? 0 : static_cast<size_t>(rows * cols));
  T* gi = grad_input->data_as<T>();
  const T *go = grad_output->data_as<T>(), *w = weight->data_as<T>();
  fill_bias<T>(gi, bias, g.batch, g.in_channels, plane);
  if (og == 0 || rows == 0) return;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      T* gis = gi + (n * g.in_channels + grp * cg) * plane;
      const T* gos = go + (n * g.out_channels + grp * og) * cols;
      // (rows, cols) = W^T (rows, og) @ grad_output (og, cols)
      gemm<T>(true, false, rows, cols, og, w + grp * og * rows, rows, gos, cols, T(direct ? 1 : 0),
              direct ? gis : col.data(), cols);
      if (!direct) col2im_add(col.data(), gis, cg, g);
    }
  }
}

template <class T>
void backward_weight(const Tensor& grad_weight, const Tensor& grad_output, const Tensor& input,
                     const ConvGeometry& g) {
  ReleaseInterpreterLock unlocked;
  const int64_t cg = g.in_channels / g.groups, og = g.out_channels / g.groups;
  const int64_t rows = cg * g.kernel_volume(), cols = g.out_plane(), plane = g.in_plane();
  const bool direct = is_pointwise(g);
  std::vector<T> col(direct ? 0 : static_cast<size_t>(rows * cols));
  T* gw = grad_weight->data_as<T>();
  const T *go = grad_output->data_as<T>(), *x = input->data_as<T>();
  std::fill(gw, gw + grad_weight->numel(), T(0));
  if (og == 0 || rows == 0 || cols == 0) return;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const T* xs = x + (n * g.in_channels + grp * cg) * plane;
      if (!direct) im2col(xs, col.data(), cg, g);
      // (og, rows) += grad_output (og, cols) @ col^T (cols, rows)
      gemm<T>(false, true, og, rows, cols, go + (n * g.out_channels + grp * og) * cols, cols,
              direct ? xs : col.data(), cols, T(1), gw + grp * og * rows, rows);
    }
  }
}

template <class T>
void backward_bias(const Tensor& grad_bias, const Tensor& grad_output) {
  const int64_t n = grad_output->sizes()[0], c = grad_output->sizes()[1];
  const int64_t plane = n * c != 0 ? grad_output->numel() / (n * c) : 0;
  const T* go = grad_output->data_as<T>();
  T* gb = grad_bias->data_as<T>();
  parallel_for(0, c, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n * plane, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t ch = lo; ch < hi; ++ch) {
                   double acc = 0;
                   for (int64_t i = 0; i < n; ++i) {
                     const T* p = go + (i * c + ch) * plane;
                     for (int64_t j = 0; j < plane; ++j) acc += p[j];
                   }
                   gb[ch] = static_cast<T>(acc);
                 }
               });
}

void forward_kernel(const Tensor& out, const Tensor& input, const Tensor& weight,
                    const Tensor& bias, const ConvGeometry& g) {
  if (out->dtype() == ScalarType::Float32) return forward<float>(out, input, weight, bias, g);
  forward<double>(out, input, weight, bias, g);
}
void backward_input_kernel(const Tensor& gi, const Tensor& go, const Tensor& weight,
                           const Tensor& bias, const ConvGeometry& g) {
  if (gi->dtype() == ScalarType::Float32) return backward_input<float>(gi, go, weight, bias, g);
  backward_input<double>(gi, go, weight, bias, g);
}
void backward_weight_kernel(const Tensor& gw, const Tensor& go, const Tensor& input,
                            const ConvGeometry& g) {
  if (gw->dtype() == ScalarType::Float32) return backward_weight<float>(gw, go, input, g);
  backward_weight<double>(gw, go, input, g);
}
void backward_bias_kernel(const Tensor& gb, const Tensor& go) {
  if (gb->dtype() == ScalarType::Float32) return backward_bias<float>(gb, go);
  backward_bias<double>(gb, go);
}

}  // namespace

FLB_REGISTER_KERNEL("conv_forward", kCPU, forward_kernel);
FLB_REGISTER_KERNEL("conv_backward_input", kCPU, backward_input_kernel);
FLB_REGISTER_KERNEL("conv_backward_weight", kCPU, backward_weight_kernel);
FLB_REGISTER_KERNEL("conv_backward_bias", kCPU, backward_bias_kernel);

}  // namespace flambeau
