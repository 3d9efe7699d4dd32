// CPU kernels of the fused LSTM and GRU cells: batch rows in parallel; within a
// row, the gate activations run as vectorized loops (vec_math.h) over the
// workspace. Formulas are in ops/nn_rnn.yaml.
#include "cpu/rnn_kernel_support.h"
#include "generated/kernels.h"
#include "ops/rnn_kernels.h"

namespace flambeau {

namespace {

using rnn::bias_at;
using rnn::data_or_null;
using rnn::for_rows;
using rnn::kSingleOrDouble;
using rnn::sigmoid_n;
using rnn::tanh_n;

void lstm_cell(const Tensor& igates, const Tensor& hgates, const Tensor& cx, const Tensor& ibias,
               const Tensor& hbias, const Tensor& hy, const Tensor& cy, const Tensor& workspace) {
  visit_dtype<kSingleOrDouble>(igates->dtype(), "_thnn_fused_lstm_cell", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t rows = cx->sizes()[0], h = cx->sizes()[1];
    const T *ig = igates->data_as<T>(), *hg = hgates->data_as<T>(), *c0 = cx->data_as<T>();
    const T *bi = data_or_null<T>(ibias), *bh = data_or_null<T>(hbias);
    T *h1 = hy->data_as<T>(), *c1 = cy->data_as<T>(), *ws = workspace->data_as<T>();
    for_rows(rows, 4 * h, [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const T *a = ig + r * 4 * h, *b = hg + r * 4 * h;
        T* w = ws + r * 4 * h;  // becomes the gates i, f, g, o
        for (int64_t col = 0; col < 4 * h; ++col)
          w[col] = a[col] + b[col] + bias_at(bi, col) + bias_at(bh, col);
        sigmoid_n(w, w, 2 * h);
        tanh_n(w + 2 * h, w + 2 * h, h);
        sigmoid_n(w + 3 * h, w + 3 * h, h);
        T *c = c1 + r * h, *hr = h1 + r * h;
        const T* c_prev = c0 + r * h;
        for (int64_t j = 0; j < h; ++j) c[j] = w[h + j] * c_prev[j] + w[j] * w[2 * h + j];
        tanh_n(c, hr, h);
        for (int64_t j = 0; j < h; ++j) hr[j] *= w[3 * h + j];
      }
    });
  });
}

void lstm_cell_backward(const Tensor& grad_hy, const Tensor& grad_cy, const Tensor& cx,
                        const Tensor& cy, const Tensor& workspace, const Tensor& grad_gates,
                        const Tensor& grad_cx) {
  visit_dtype<kSingleOrDouble>(cx->dtype(), "_thnn_fused_lstm_cell_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t rows = cx->sizes()[0], h = cx->sizes()[1];
    const T *ghy = data_or_null<T>(grad_hy), *gcy = data_or_null<T>(grad_cy);
    const T *c0 = cx->data_as<T>(), *c1 = cy->data_as<T>(), *ws = workspace->data_as<T>();
    T *gg = grad_gates->data_as<T>(), *gc0 = grad_cx->data_as<T>();
    for_rows(rows, 4 * h, [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const T* w = ws + r * 4 * h;
        T* out = gg + r * 4 * h;
        tanh_n(c1 + r * h, gc0 + r * h, h);  // tanh(cy), overwritten below once read
        for (int64_t j = 0; j < h; ++j) {
          const int64_t e = r * h + j;
          const T i = w[j], f = w[h + j], g = w[2 * h + j], o = w[3 * h + j];
          const T tc = gc0[e];
          const T dh = ghy ? ghy[e] : T(0);
          const T dc = dh * o * (T(1) - tc * tc) + (gcy ? gcy[e] : T(0));
          out[j] = dc * g * i * (T(1) - i);
          out[h + j] = dc * c0[e] * f * (T(1) - f);
          out[2 * h + j] = dc * i * (T(1) - g * g);
          out[3 * h + j] = dh * tc * o * (T(1) - o);
          gc0[e] = dc * f;
        }
      }
    });
  });
}

// Workspace columns per row: r, z, n, hn (hidden new-gate part with its bias), hx.
void gru_cell(const Tensor& igates, const Tensor& hgates, const Tensor& hx, const Tensor& ibias,
              const Tensor& hbias, const Tensor& hy, const Tensor& workspace) {
  visit_dtype<kSingleOrDouble>(igates->dtype(), "_thnn_fused_gru_cell", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t rows = hx->sizes()[0], h = hx->sizes()[1];
    const T *ig = igates->data_as<T>(), *hg = hgates->data_as<T>(), *h0 = hx->data_as<T>();
    const T *bi = data_or_null<T>(ibias), *bh = data_or_null<T>(hbias);
    T *h1 = hy->data_as<T>(), *ws = workspace->data_as<T>();
    for_rows(rows, 3 * h, [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const T *a = ig + r * 3 * h, *b = hg + r * 3 * h;
        T* w = ws + r * 5 * h;  // becomes r, z, n, hn, hx
        for (int64_t col = 0; col < 2 * h; ++col)
          w[col] = a[col] + bias_at(bi, col) + b[col] + bias_at(bh, col);
        sigmoid_n(w, w, 2 * h);
        for (int64_t j = 0; j < h; ++j) {
          const T hn = b[2 * h + j] + bias_at(bh, 2 * h + j);
          w[3 * h + j] = hn;
          w[2 * h + j] = a[2 * h + j] + bias_at(bi, 2 * h + j) + w[j] * hn;
          w[4 * h + j] = h0[r * h + j];
        }
        tanh_n(w + 2 * h, w + 2 * h, h);
        for (int64_t j = 0; j < h; ++j) {
          const T update = w[h + j];
          h1[r * h + j] = (T(1) - update) * w[2 * h + j] + update * w[4 * h + j];
        }
      }
    });
  });
}

void gru_cell_backward(const Tensor& grad_hy, const Tensor& workspace, const Tensor& grad_igates,
                       const Tensor& grad_hgates, const Tensor& grad_hx) {
  visit_dtype<kSingleOrDouble>(grad_hy->dtype(), "_thnn_fused_gru_cell_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t rows = grad_hy->sizes()[0], h = grad_hy->sizes()[1];
    const T *gh = grad_hy->data_as<T>(), *ws = workspace->data_as<T>();
    T *gi = grad_igates->data_as<T>(), *ghg = grad_hgates->data_as<T>(),
      *gh0 = grad_hx->data_as<T>();
    for_rows(rows, 3 * h, [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const T* w = ws + r * 5 * h;
        T *di = gi + r * 3 * h, *dh = ghg + r * 3 * h;
        for (int64_t j = 0; j < h; ++j) {
          const T reset = w[j], update = w[h + j], n = w[2 * h + j], hn = w[3 * h + j],
                  prev = w[4 * h + j];
          const T g = gh[r * h + j];
          const T dn = g * (T(1) - update) * (T(1) - n * n);
          const T dz = g * (prev - n) * update * (T(1) - update);
          const T dr = dn * hn * reset * (T(1) - reset);
          di[j] = dr;
          di[h + j] = dz;
          di[2 * h + j] = dn;
          dh[j] = dr;
          dh[h + j] = dz;
          dh[2 * h + j] = dn * reset;
          gh0[r * h + j] = g * update;
        }
      }
    });
  });
}

}  // namespace

FLB_REGISTER_KERNEL(_thnn_fused_lstm_cell, kCPU, lstm_cell);
FLB_REGISTER_KERNEL(_thnn_fused_lstm_cell_backward, kCPU, lstm_cell_backward);
FLB_REGISTER_KERNEL(_thnn_fused_gru_cell, kCPU, gru_cell);
FLB_REGISTER_KERNEL(_thnn_fused_gru_cell_backward, kCPU, gru_cell_backward);

}  // namespace flambeau
