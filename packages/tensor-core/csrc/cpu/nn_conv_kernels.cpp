// Convolution kernels: im2col + one OpenBLAS GEMM per (sample, group). A 1x1
// kernel with stride 1 and no padding reads the input as its own column matrix;
// 3x3 kernels with stride 1 take Winograd's algorithm (conv_winograd.h) where it
// applies, in the forward and both gradients. GEMM (blas.h) and im2col/col2im run on
// our threads.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "core/interpreter_lock.h"
#include "core/scratch.h"
#include "cpu/blas.h"
#include "cpu/conv_winograd.h"
#include "cpu/im2col.h"
#include "cpu/parallel.h"
#include "cpu/sum_f32.h"
#include "cpu/thread_tasks.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/nn_conv_geometry.h"

namespace flambeau {

namespace {

bool is_pointwise(const ConvGeometry& g) {
  for (int i = 0; i < 3; ++i)
    if (g.kernel[i] != 1 || g.stride[i] != 1 || g.pad[i] != 0) return false;
  return true;
}

// Calls f(n, col, slot) for every sample n. With several samples and threads, samples
// run in parallel on our threads, each with its own column buffer and single-threaded
// GEMMs (one GEMM per thread beats threaded GEMMs on a busy machine and for small
// matrices); else samples run in turn and GEMM and im2col thread themselves. `threads`
// is task_threads(batch); slot < threads indexes per-thread accumulators.
template <class T, class F>
void for_each_sample(int64_t batch, int threads, size_t col_size, const F& f) {
  run_tasks(batch, threads, TaskOrder::kContiguous, true, [&](int slot, int64_t lo, int64_t hi) {
    Scratch<T> col(col_size);
    for (int64_t n = lo; n < hi; ++n) f(n, col.data(), slot);
  });
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

// Weight (groups * og, cg, 1, kH, kW) as one (og, cg * kW) matrix per (group, kh),
// the layout rows_im2col's column matrix multiplies with.
template <class T>
Scratch<T> weight_by_kernel_row(const T* w, const ConvGeometry& g) {
  const int64_t cg = g.in_channels / g.groups, kh_n = g.kernel[1], kw_n = g.kernel[2];
  Scratch<T> r(static_cast<size_t>(g.out_channels * cg * kh_n * kw_n));
  T* p = r.data();
  for (int64_t grp = 0; grp < g.groups; ++grp)
    for (int64_t kh = 0; kh < kh_n; ++kh)
      for (int64_t o = grp * (g.out_channels / g.groups);
           o < (grp + 1) * (g.out_channels / g.groups); ++o)
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t kw = 0; kw < kw_n; ++kw) *p++ = w[((o * cg + c) * kh_n + kh) * kw_n + kw];
  return r;
}

// Each sample's output starts as its bias (while in cache), then GEMMs add
// W @ col: one GEMM on im2col's matrix, or, where rows_im2col applies, one per
// kernel row on the smaller matrix of kernel columns.
template <class T>
void forward(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias,
             const ConvGeometry& g) {
  ReleaseInterpreterLock unlocked;
  const int64_t cg = g.in_channels / g.groups, og = g.out_channels / g.groups;
  const int64_t rows = cg * g.kernel_volume(), cols = g.out_plane(), plane = g.in_plane();
  const bool direct = is_pointwise(g), by_rows = !direct && rows_im2col_applies(g);
  T* y = out->data_as<T>();
  const T *x = input->data_as<T>(), *w = weight->data_as<T>();
  const T* b = bias ? bias->data_as<T>() : nullptr;
  if (rows == 0) return fill_bias<T>(y, bias, g.batch, g.out_channels, cols);
  if (winograd_applies(g) && winograd_forward(x, w, b, y, g)) return;
  const int64_t kh_n = g.kernel[1], krow = cg * g.kernel[2];  // by_rows: K of each GEMM
  const int64_t zcols = by_rows ? rows_im2col_height(g) * g.out[2] : 0;
  const Scratch<T> wr = by_rows ? weight_by_kernel_row(w, g) : Scratch<T>();
  const size_t col_size = direct ? 0 : static_cast<size_t>(by_rows ? krow * zcols : rows * cols);
  for_each_sample<T>(g.batch, task_threads(g.batch), col_size, [&](int64_t n, T* col, int) {
    T* yn = y + n * g.out_channels * cols;
    for (int64_t c = 0; c < g.out_channels; ++c)
      std::fill(yn + c * cols, yn + (c + 1) * cols, b ? b[c] : T(0));
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const T* xs = x + (n * g.in_channels + grp * cg) * plane;
      T* ys = yn + grp * og * cols;
      if (by_rows) {
        rows_im2col(xs, col, cg, g);
        for (int64_t kh = 0; kh < kh_n; ++kh)
          gemm<T>(false, false, og, cols, krow, T(1), wr.data() + (grp * kh_n + kh) * og * krow,
                  krow, col + kh * g.dilation[1] * g.out[2], zcols, T(1), ys, cols);
        continue;
      }
      if (!direct) im2col(xs, col, cg, g);
      gemm<T>(false, false, og, cols, rows, T(1), w + grp * og * rows, rows, direct ? xs : col,
              cols, T(1), ys, cols);
    }
  });
}

template <class T>
void backward_input(const Tensor& grad_input, const Tensor& grad_output, const Tensor& weight,
                    const Tensor& bias, const ConvGeometry& g) {
  ReleaseInterpreterLock unlocked;
  const int64_t cg = g.in_channels / g.groups, og = g.out_channels / g.groups;
  const int64_t rows = cg * g.kernel_volume(), cols = g.out_plane(), plane = g.in_plane();
  const bool direct = is_pointwise(g);
  T* gi = grad_input->data_as<T>();
  const T *go = grad_output->data_as<T>(), *w = weight->data_as<T>();
  if (winograd_applies(g) &&
      winograd_backward_input(go, w, bias ? bias->data_as<T>() : nullptr, gi, g))
    return;
  fill_bias<T>(gi, bias, g.batch, g.in_channels, plane);
  if (og == 0 || rows == 0) return;
  for_each_sample<T>(g.batch, task_threads(g.batch), direct ? 0 : rows * cols,
                     [&](int64_t n, T* col, int) {
                       for (int64_t grp = 0; grp < g.groups; ++grp) {
                         T* gis = gi + (n * g.in_channels + grp * cg) * plane;
                         const T* gos = go + (n * g.out_channels + grp * og) * cols;
                         // (rows, cols) = W^T (rows, og) @ grad_output (og, cols)
                         gemm<T>(true, false, rows, cols, og, T(1), w + grp * og * rows, rows, gos,
                                 cols, T(direct ? 1 : 0), direct ? gis : col, cols);
                         if (!direct) col2im_add(col, gis, cg, g);
                       }
                     });
}

// grad_weight = sum over samples of grad_output @ col^T. Where rows_im2col applies, the
// same smaller column matrix as the forward's: one GEMM per kernel row, accumulated in
// weight_by_kernel_row's layout and put back in the weight's at the end (im2col's full
// matrix is kernel-height times larger, and writing it cost more than the GEMMs saved).
template <class T>
void backward_weight(const Tensor& grad_weight, const Tensor& grad_output, const Tensor& input,
                     const ConvGeometry& g) {
  ReleaseInterpreterLock unlocked;
  const int64_t cg = g.in_channels / g.groups, og = g.out_channels / g.groups;
  const int64_t rows = cg * g.kernel_volume(), cols = g.out_plane(), plane = g.in_plane();
  const bool direct = is_pointwise(g), by_rows = !direct && rows_im2col_applies(g);
  const int64_t kh_n = g.kernel[1], kw_n = g.kernel[2], krow = cg * kw_n;
  const int64_t zcols = by_rows ? rows_im2col_height(g) * g.out[2] : 0;
  const int64_t wn = grad_weight->numel();
  T* gw = grad_weight->data_as<T>();
  const T *go = grad_output->data_as<T>(), *x = input->data_as<T>();
  if (winograd_applies(g) && winograd_backward_weight(go, x, gw, g)) return;
  std::fill(gw, gw + wn, T(0));
  if (og == 0 || rows == 0 || cols == 0) return;
  const int threads = task_threads(g.batch);
  // Per thread slot an accumulator: grad_weight itself for slot 0 (unless by kernel rows,
  // whose layout differs), a buffer of its own for the others.
  const int own = by_rows ? 0 : 1;
  Scratch<T> partial(static_cast<size_t>((threads - own) * wn), T(0));
  const size_t col_size = direct ? 0 : static_cast<size_t>(by_rows ? krow * zcols : rows * cols);
  for_each_sample<T>(g.batch, threads, col_size, [&](int64_t n, T* col, int slot) {
    T* acc = slot < own ? gw : partial.data() + (slot - own) * wn;
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const T* xs = x + (n * g.in_channels + grp * cg) * plane;
      const T* gos = go + (n * g.out_channels + grp * og) * cols;
      if (by_rows) {
        rows_im2col(xs, col, cg, g);
        // (og, krow) += grad_output (og, cols) @ (kernel row kh's columns)^T
        for (int64_t kh = 0; kh < kh_n; ++kh)
          gemm<T>(false, true, og, krow, cols, T(1), gos, cols, col + kh * g.dilation[1] * g.out[2],
                  zcols, T(1), acc + (grp * kh_n + kh) * og * krow, krow);
        continue;
      }
      if (!direct) im2col(xs, col, cg, g);
      // (og, rows) += grad_output (og, cols) @ col^T (cols, rows)
      gemm<T>(false, true, og, rows, cols, T(1), gos, cols, direct ? xs : col, cols, T(1),
              acc + grp * og * rows, rows);
    }
  });
  if (!by_rows) {
    for (int s = 1; s < threads; ++s)
      for (int64_t i = 0; i < wn; ++i) gw[i] += partial[(s - 1) * wn + i];
    return;
  }
  for (int s = 1; s < threads; ++s)
    for (int64_t i = 0; i < wn; ++i) partial[i] += partial[s * wn + i];
  const T* p = partial.data();  // weight_by_kernel_row's order: group, kh, o, c, kw
  for (int64_t grp = 0; grp < g.groups; ++grp)
    for (int64_t kh = 0; kh < kh_n; ++kh)
      for (int64_t o = grp * og; o < (grp + 1) * og; ++o)
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t kw = 0; kw < kw_n; ++kw) gw[((o * cg + c) * kh_n + kh) * kw_n + kw] = *p++;
}

// grad_bias[c] = the sum of channel c of grad_output over samples and positions: each
// plane summed with the vectorized float kernel (sum_f32.h; double's loop keeps four
// partial sums), the planes added in double.
template <class T>
void backward_bias(const Tensor& grad_bias, const Tensor& grad_output) {
  const int64_t n = grad_output->sizes()[0], c = grad_output->sizes()[1];
  const int64_t plane = n * c != 0 ? grad_output->numel() / (n * c) : 0;
  const T* go = grad_output->data_as<T>();
  T* gb = grad_bias->data_as<T>();
  auto plane_sum = [plane](const T* p) -> double {
    if constexpr (std::is_same_v<T, float>) {
      return sum_contiguous_f32(p, plane);
    } else {
      double part[4] = {0, 0, 0, 0};
      int64_t j = 0;
      for (; j + 4 <= plane; j += 4)
        for (int k = 0; k < 4; ++k) part[k] += p[j + k];
      for (; j < plane; ++j) part[0] += p[j];
      return (part[0] + part[1]) + (part[2] + part[3]);
    }
  };
  parallel_for(0, c, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n * plane, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t ch = lo; ch < hi; ++ch) {
                   double acc = 0;
                   for (int64_t i = 0; i < n; ++i) acc += plane_sum(go + (i * c + ch) * plane);
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

FLB_REGISTER_KERNEL(conv_forward, kCPU, forward_kernel);
FLB_REGISTER_KERNEL(conv_backward_input, kCPU, backward_input_kernel);
FLB_REGISTER_KERNEL(conv_backward_weight, kCPU, backward_weight_kernel);
FLB_REGISTER_KERNEL(conv_backward_bias, kCPU, backward_bias_kernel);

}  // namespace flambeau
