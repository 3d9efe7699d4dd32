// _rnn_layer and _rnn_layer_backward: one layer, one direction, over a whole
// (packed) sequence, float32/float64, with the CPU kernel's arithmetic and
// workspace layout (cpu/nn_rnn_layer_kernels.cpp), so the core's frontend and
// autograd run unchanged on either device:
//   forward   the input projection of every step in one cuBLAS GEMM, into the
//             workspace's gate columns (a buffer for the plain RNN); then per
//             step a GEMM of the running state with w_hh and one fused gate
//             kernel (one thread per row and hidden unit) writing the workspace,
//             the step's output rows and the running state; LSTM's projection
//             (w_hr) is one more GEMM per step.
//   backward  per step, in reverse, the gate gradients (one fused kernel) and a
//             GEMM carrying the state's gradient back; then the weights' and the
//             input's gradients as a few GEMMs over all steps, and the biases'
//             as column sums in row order.
// Workspace columns per row (what backward reads besides output):
//   LSTM  i f g o (activated, 4H) | c (H) | h before the projection (H, with w_hr)
//   GRU   r z n (activated, 3H) | hn = h_prev @ w_hn^T + b_hn (H)
//   RNN   none (backward reads the output)
// tensors [input, hx, cx?, w_ih, w_hh, b_ih?, b_hh?, w_hr?, output, hy, cy?,
// workspace], structs [flb_rnn_layer_shape, flb_rnn_layer_weights]; the backward's
// tensors [grad_output?, grad_hy?, grad_cy?, input, hx, cx?, weights..., output,
// workspace, grads...], structs [shape, weights, flb_rnn_layer_grads].
#include <cuda_runtime_api.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/device_buffer.h"
#include "backend/kernels/gemm_rows.cuh"
#include "backend/kernels/kernels.h"
#include "backend/kernels/rnn_cell_math.cuh"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

enum Mode : int64_t {
  kLstm = FLB_RNN_MODE_LSTM,
  kGru = FLB_RNN_MODE_GRU,
  kTanh = FLB_RNN_MODE_TANH
};

// The per-(row, unit) grid-stride loop of the step kernels.
#define FLB_FOR_UNITS(total)                                                                 \
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < (total); \
       e += static_cast<int64_t>(blockDim.x) * gridDim.x)

// One LSTM step: gates from the workspace row's input projection + h @ w_hh^T (hg)
// + the biases, activated into the workspace; c (the running state, in cy) and c
// into the workspace; h = o tanh(c) into hr.
template <class T>
__global__ void lstm_step_kernel(T* ws, int64_t W, const T* hg, const T* bi, const T* bh, T* c,
                                 T* hr, int64_t ld_hr, int64_t bs, int64_t H) {
  FLB_FOR_UNITS(bs * H) {
    const int64_t r = e / H, j = e % H;
    T* wr = ws + r * W;
    T gate[4];
    for (int q = 0; q < 4; ++q) {
      const int64_t col = q * H + j;
      const T pre = (wr[col] + hg[r * 4 * H + col]) + (bias_at(bi, col) + bias_at(bh, col));
      gate[q] = q == 2 ? tanh(pre) : sigmoid_of(pre);
      wr[col] = gate[q];
    }
    const T cn = gate[1] * c[r * H + j] + gate[0] * gate[2];
    c[r * H + j] = cn;
    wr[4 * H + j] = cn;
    hr[r * ld_hr + j] = tanh(cn) * gate[3];
  }
}

// One GRU step (workspace r z n | hn), out rows o (ld P == H), h the running state.
template <class T>
__global__ void gru_step_kernel(T* ws, int64_t W, const T* hg, const T* bi, const T* bh, const T* h,
                                T* o, int64_t P, int64_t bs, int64_t H) {
  FLB_FOR_UNITS(bs * H) {
    const int64_t r = e / H, j = e % H, G = 3 * H;
    T* wr = ws + r * W;
    const T* hgr = hg + r * G;
    const T reset = sigmoid_of(wr[j] + (bias_at(bi, j) + hgr[j] + bias_at(bh, j)));
    const T update = sigmoid_of(wr[H + j] + (bias_at(bi, H + j) + hgr[H + j] + bias_at(bh, H + j)));
    const T hn = hgr[2 * H + j] + bias_at(bh, 2 * H + j);
    const T n = tanh(wr[2 * H + j] + (bias_at(bi, 2 * H + j) + reset * hn));
    wr[j] = reset;
    wr[H + j] = update;
    wr[2 * H + j] = n;
    wr[3 * H + j] = hn;
    o[r * P + j] = (T(1) - update) * n + update * h[r * P + j];
  }
}

// One plain RNN step: tanh or relu of the projections and biases.
template <class T>
__global__ void plain_step_kernel(const T* pre, const T* hg, const T* bi, const T* bh, T* o,
                                  int64_t P, int64_t bs, int64_t H, bool use_tanh) {
  FLB_FOR_UNITS(bs * H) {
    const int64_t r = e / H, j = e % H;
    const T v = pre[r * H + j] + hg[r * H + j] + bias_at(bi, j) + bias_at(bh, j);
    o[r * P + j] = use_tanh ? tanh(v) : (v > T(0) ? v : T(0));
  }
}

// dh = dh_state (+ grad_output rows).
template <class T>
__global__ void add_rows_kernel(T* dh, const T* state, const T* go, int64_t n) {
  FLB_FOR_UNITS(n) { dh[e] = go ? state[e] + go[e] : state[e]; }
}

template <class T>
__global__ void lstm_step_backward_kernel(const T* d, const T* ws, int64_t W, const T* ws_prev,
                                          int64_t prev_rows, const T* c0, T* dc, T* dg, int64_t bs,
                                          int64_t H) {
  FLB_FOR_UNITS(bs * H) {
    const int64_t r = e / H, j = e % H, G = 4 * H;
    const T* wr = ws + r * W;
    const T c_prev = r < prev_rows ? ws_prev[r * W + 4 * H + j] : c0[r * H + j];
    const T ig = wr[j], fg = wr[H + j], gg = wr[2 * H + j], og = wr[3 * H + j];
    const T th = tanh(wr[4 * H + j]);
    const T dj = d[r * H + j];
    const T dcj = dj * og * (T(1) - th * th) + dc[r * H + j];
    T* dgr = dg + r * G;
    dgr[j] = dcj * gg * ig * (T(1) - ig);
    dgr[H + j] = dcj * c_prev * fg * (T(1) - fg);
    dgr[2 * H + j] = dcj * ig * (T(1) - gg * gg);
    dgr[3 * H + j] = dj * th * og * (T(1) - og);
    dc[r * H + j] = dcj * fg;
  }
}

template <class T>
__global__ void gru_step_backward_kernel(const T* d, const T* ws, int64_t W, const T* hp, T* dg,
                                         T* dgh, T* dh_state, int64_t P, int64_t bs, int64_t H) {
  FLB_FOR_UNITS(bs * H) {
    const int64_t r = e / H, j = e % H, G = 3 * H;
    const T* wr = ws + r * W;
    const T rg = wr[j], z = wr[H + j], n = wr[2 * H + j], hn = wr[3 * H + j];
    const T dj = d[r * H + j];
    const T dn = dj * (T(1) - z) * (T(1) - n * n);
    const T dz = dj * (hp[r * P + j] - n) * z * (T(1) - z);
    const T dr = dn * hn * rg * (T(1) - rg);
    dg[r * G + j] = dgh[r * G + j] = dr;
    dg[r * G + H + j] = dgh[r * G + H + j] = dz;
    dg[r * G + 2 * H + j] = dn;
    dgh[r * G + 2 * H + j] = dn * rg;
    dh_state[r * P + j] = dj * z;  // the direct path h' = ... + z * h
  }
}

template <class T>
__global__ void plain_step_backward_kernel(const T* d, const T* o, T* dg, int64_t P, int64_t bs,
                                           int64_t H, bool use_tanh) {
  FLB_FOR_UNITS(bs * H) {
    const int64_t r = e / H, j = e % H;
    const T oj = o[r * P + j], dj = d[r * H + j];
    dg[r * H + j] = use_tanh ? dj * (T(1) - oj * oj) : (oj > T(0) ? dj : T(0));
  }
}

// out[col] = the sum of a's column over its rows, in row order.
template <class T>
__global__ void column_sums_kernel(const T* a, int64_t rows, int64_t cols, T* out) {
  FLB_FOR_UNITS(cols) {
    T s = 0;
    for (int64_t r = 0; r < rows; ++r) s += a[r * cols + e];
    out[e] = s;
  }
}

#undef FLB_FOR_UNITS

// The call's context: tensors by position, the stream, copies.
struct Call {
  const flb_kernel_call* c;
  cudaStream_t stream;
  template <class T>
  T* at(int64_t k) const {
    return k >= 0 && k < c->n_tensors && present(c, static_cast<int>(k))
               ? static_cast<T*>(c->tensors[k].data)
               : nullptr;
  }
  flb_status copy(void* dst, const void* src, int64_t bytes) const {
    if (bytes <= 0) return FLB_OK;
    if (cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice, stream) !=
        cudaSuccess)
      return launch_status(c->op);
    return FLB_OK;
  }
  flb_status zero(void* dst, int64_t bytes) const {
    if (bytes <= 0) return FLB_OK;
    if (cudaMemsetAsync(dst, 0, static_cast<size_t>(bytes), stream) != cudaSuccess)
      return launch_status(c->op);
    return FLB_OK;
  }
};

// Each step's first row, and the i-th step to run (reverse: from the last).
struct Steps {
  std::vector<int64_t> first_row;
  const flb_rnn_layer_shape& s;
  explicit Steps(const flb_rnn_layer_shape& shape) : first_row(shape.n_batch_sizes), s(shape) {
    int64_t row = 0;
    for (int64_t t = 0; t < shape.n_batch_sizes; ++t) {
      first_row[t] = row;
      row += shape.batch_sizes[t];
    }
  }
  int64_t at(int64_t i) const { return s.reverse ? s.n_batch_sizes - 1 - i : i; }
  int64_t count() const { return s.n_batch_sizes; }
};

// C (m x n, ldc) = alpha op(A) op(B) + beta C, one matrix.
template <class T>
flb_status gemm(const Call& k, bool ta, bool tb, int64_t m, int64_t n, int64_t kk, const T* a,
                int64_t lda, const T* b, int64_t ldb, T beta, T* out, int64_t ldc) {
  if (kk == 0) {  // an empty sum: beta * C (beta is 0 or 1 here)
    if (beta != T(0) || m == 0 || n == 0) return FLB_OK;
    for (int64_t r = 0; r < m; ++r)
      if (flb_status s = k.zero(out + r * ldc, n * int64_t(sizeof(T))); s != FLB_OK) return s;
    return FLB_OK;
  }
  RowGemm g;
  g.trans_a = ta;
  g.trans_b = tb;
  g.m = m;
  g.n = n;
  g.k = kk;
  g.lda = lda;
  g.ldb = ldb;
  g.ldc = ldc;
  return row_gemm<T>(k.c, g, T(1), a, b, beta, out);
}

template <class T>
flb_status forward(const Call& k, const flb_rnn_layer_shape& s, const flb_rnn_layer_weights& w) {
  const int64_t N = s.rows, B = s.batch, I = s.input_size, H = s.hidden, P = s.out_size,
                G = s.gates, W = s.ws_cols;
  const bool lstm = s.mode == kLstm, gru = s.mode == kGru, plain = !lstm && !gru;
  const T *x = k.at<T>(0), *hx = k.at<T>(1), *cx = k.at<T>(2);
  const T *w_ih = k.at<T>(w.w_ih), *w_hh = k.at<T>(w.w_hh), *b_ih = k.at<T>(w.b_ih),
          *b_hh = k.at<T>(w.b_hh), *w_hr = k.at<T>(w.w_hr);
  T *out = k.at<T>(8), *h = k.at<T>(9), *c = k.at<T>(10), *ws = W ? k.at<T>(11) : nullptr;
  const flb_kernel_call* call = k.c;
  DeviceBuffer plain_pre, hg;
  if (plain) {
    if (flb_status st =
            plain_pre.allocate(call->device_index, size_t(N * G) * sizeof(T), k.stream, call->op);
        st != FLB_OK)
      return st;
  }
  if (flb_status st =
          hg.allocate(call->device_index, size_t(B * G) * sizeof(T), k.stream, call->op);
      st != FLB_OK)
    return st;
  T* xg = plain ? plain_pre.get<T>() : ws;
  const int64_t ld_xg = plain ? G : W;
  if (flb_status st = gemm<T>(k, false, true, N, G, I, x, I, w_ih, I, T(0), xg, ld_xg);
      st != FLB_OK)
    return st;
  if (flb_status st = k.copy(h, hx, B * P * int64_t(sizeof(T))); st != FLB_OK) return st;
  if (lstm)
    if (flb_status st = k.copy(c, cx, B * H * int64_t(sizeof(T))); st != FLB_OK) return st;
  const Steps steps(s);
  const bool proj = w_hr != nullptr;
  for (int64_t i = 0; i < steps.count(); ++i) {
    const int64_t t = steps.at(i), bs = s.batch_sizes[t], row0 = steps.first_row[t];
    if (bs == 0) continue;
    // hg (bs x G) = h (bs x P) @ w_hh^T
    if (flb_status st = gemm<T>(k, false, true, bs, G, P, h, P, w_hh, P, T(0), hg.get<T>(), G);
        st != FLB_OK)
      return st;
    const unsigned blocks = blocks_for(bs * H);
    if (lstm) {
      T* hr = proj ? ws + row0 * W + 5 * H : out + row0 * P;
      const int64_t ld_hr = proj ? W : P;
      lstm_step_kernel<T><<<blocks, kThreads, 0, k.stream>>>(ws + row0 * W, W, hg.get<T>(), b_ih,
                                                             b_hh, c, hr, ld_hr, bs, H);
      if (flb_status st = launch_status(call->op); st != FLB_OK) return st;
      if (proj)
        if (flb_status st =
                gemm<T>(k, false, true, bs, P, H, hr, W, w_hr, H, T(0), out + row0 * P, P);
            st != FLB_OK)
          return st;
    } else if (gru) {
      gru_step_kernel<T><<<blocks, kThreads, 0, k.stream>>>(ws + row0 * W, W, hg.get<T>(), b_ih,
                                                            b_hh, h, out + row0 * P, P, bs, H);
    } else {
      plain_step_kernel<T><<<blocks, kThreads, 0, k.stream>>>(
          xg + row0 * G, hg.get<T>(), b_ih, b_hh, out + row0 * P, P, bs, H, s.mode == kTanh);
    }
    if (flb_status st = launch_status(call->op); st != FLB_OK) return st;
    if (flb_status st = k.copy(h, out + row0 * P, bs * P * int64_t(sizeof(T))); st != FLB_OK)
      return st;
  }
  return FLB_OK;
}

template <class T>
flb_status backward(const Call& k, const flb_rnn_layer_shape& s, const flb_rnn_layer_weights& w,
                    const flb_rnn_layer_grads& gr) {
  const int64_t N = s.rows, B = s.batch, I = s.input_size, H = s.hidden, P = s.out_size,
                G = s.gates, W = s.ws_cols;
  const bool lstm = s.mode == kLstm, gru = s.mode == kGru;
  const T *g_out = k.at<T>(0), *g_hy = k.at<T>(1), *g_cy = k.at<T>(2), *x = k.at<T>(3),
          *h0 = k.at<T>(4), *c0 = k.at<T>(5);
  const T *w_ih = k.at<T>(w.w_ih), *w_hh = k.at<T>(w.w_hh), *w_hr = k.at<T>(w.w_hr);
  const T *out = k.at<T>(11), *ws = W ? k.at<T>(12) : nullptr;
  T *d_input = k.at<T>(gr.input), *dh_state = k.at<T>(gr.hx), *dc_state = k.at<T>(gr.cx);
  T *d_w_ih = k.at<T>(gr.w_ih), *d_w_hh = k.at<T>(gr.w_hh), *d_b_ih = k.at<T>(gr.b_ih),
    *d_b_hh = k.at<T>(gr.b_hh), *d_w_hr = k.at<T>(gr.w_hr);
  const bool proj = w_hr != nullptr;
  const flb_kernel_call* call = k.c;
  const size_t item = sizeof(T);
  DeviceBuffer d_gates, d_hidden, h_prev, d_out, dh, dh_raw;
  for (auto [buf, n] : {std::pair<DeviceBuffer*, int64_t>{&d_gates, N * G},
                        {&d_hidden, gru ? N * G : 0},
                        {&h_prev, N * P},
                        {&d_out, proj ? N * P : 0},
                        {&dh, B * P},
                        {&dh_raw, proj ? B * H : 0}})
    if (flb_status st = buf->allocate(call->device_index, size_t(n) * item, k.stream, call->op);
        st != FLB_OK)
      return st;
  T* d_hgates = gru ? d_hidden.get<T>() : d_gates.get<T>();
  if (flb_status st = g_hy ? k.copy(dh_state, g_hy, B * P * int64_t(item))
                           : k.zero(dh_state, B * P * int64_t(item));
      st != FLB_OK)
    return st;
  if (lstm)
    if (flb_status st = g_cy ? k.copy(dc_state, g_cy, B * H * int64_t(item))
                             : k.zero(dc_state, B * H * int64_t(item));
        st != FLB_OK)
      return st;
  const Steps steps(s);
  for (int64_t i = steps.count() - 1; i >= 0; --i) {
    const int64_t t = steps.at(i), bs = s.batch_sizes[t], row0 = steps.first_row[t];
    if (bs == 0) continue;
    // The step that ran before this one fed the state of its rows; the others began at hx, cx.
    const int64_t tp = i > 0 ? steps.at(i - 1) : -1;
    const int64_t prev_rows = tp >= 0 ? (bs < s.batch_sizes[tp] ? bs : s.batch_sizes[tp]) : 0;
    const int64_t prev_row0 = tp >= 0 ? steps.first_row[tp] : 0;
    T* hp = h_prev.get<T>() + row0 * P;
    if (flb_status st = k.copy(hp, out + prev_row0 * P, prev_rows * P * int64_t(item));
        st != FLB_OK)
      return st;
    if (flb_status st =
            k.copy(hp + prev_rows * P, h0 + prev_rows * P, (bs - prev_rows) * P * int64_t(item));
        st != FLB_OK)
      return st;
    add_rows_kernel<T><<<blocks_for(bs * P), kThreads, 0, k.stream>>>(
        dh.get<T>(), dh_state, g_out ? g_out + row0 * P : nullptr, bs * P);
    if (flb_status st = launch_status(call->op); st != FLB_OK) return st;
    const T* d = dh.get<T>();
    if (proj) {
      if (flb_status st = k.copy(d_out.get<T>() + row0 * P, dh.get<T>(), bs * P * int64_t(item));
          st != FLB_OK)
        return st;
      if (flb_status st =
              gemm<T>(k, false, false, bs, H, P, dh.get<T>(), P, w_hr, H, T(0), dh_raw.get<T>(), H);
          st != FLB_OK)
        return st;
      d = dh_raw.get<T>();
    }
    T* dg = d_gates.get<T>() + row0 * G;
    const unsigned blocks = blocks_for(bs * H);
    if (lstm) {
      lstm_step_backward_kernel<T><<<blocks, kThreads, 0, k.stream>>>(
          d, ws + row0 * W, W, ws + prev_row0 * W, prev_rows, c0, dc_state, dg, bs, H);
    } else if (gru) {
      gru_step_backward_kernel<T><<<blocks, kThreads, 0, k.stream>>>(
          d, ws + row0 * W, W, hp, dg, d_hgates + row0 * G, dh_state, P, bs, H);
    } else {
      plain_step_backward_kernel<T>
          <<<blocks, kThreads, 0, k.stream>>>(d, out + row0 * P, dg, P, bs, H, s.mode == kTanh);
    }
    if (flb_status st = launch_status(call->op); st != FLB_OK) return st;
    // dh_state (bs x P) (+)= d_hgates (bs x G) @ w_hh (G x P); GRU adds to its direct path.
    if (flb_status st = gemm<T>(k, false, false, bs, P, G, d_hgates + row0 * G, G, w_hh, P,
                                T(gru ? 1 : 0), dh_state, P);
        st != FLB_OK)
      return st;
  }
  // The weights' and the input's gradients over every step at once.
  if (flb_status st =
          gemm<T>(k, false, false, N, I, G, d_gates.get<T>(), G, w_ih, I, T(0), d_input, I);
      st != FLB_OK)
    return st;
  if (flb_status st = gemm<T>(k, true, false, G, I, N, d_gates.get<T>(), G, x, I, T(0), d_w_ih, I);
      st != FLB_OK)
    return st;
  if (flb_status st =
          gemm<T>(k, true, false, G, P, N, d_hgates, G, h_prev.get<T>(), P, T(0), d_w_hh, P);
      st != FLB_OK)
    return st;
  if (d_b_ih && d_b_hh && G > 0) {
    column_sums_kernel<T><<<blocks_for(G), kThreads, 0, k.stream>>>(d_gates.get<T>(), N, G, d_b_ih);
    column_sums_kernel<T><<<blocks_for(G), kThreads, 0, k.stream>>>(d_hgates, N, G, d_b_hh);
    if (flb_status st = launch_status(call->op); st != FLB_OK) return st;
  }
  if (proj && d_w_hr)
    if (flb_status st =
            gemm<T>(k, true, false, P, H, N, d_out.get<T>(), P, ws + 5 * H, W, T(0), d_w_hr, H);
        st != FLB_OK)
      return st;
  return FLB_OK;
}

// The call's present tensors are contiguous and of the input's dtype (float32/float64).
template <class F>
flb_status with_layer(const flb_kernel_call* c, int input, int n_structs, F&& f) {
  if (c->n_structs < n_structs || c->structs == nullptr || !present(c, input))
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors or the layer's shape");
  const int32_t dtype = c->tensors[input].dtype;
  for (int k = 0; k < c->n_tensors; ++k)
    if (present(c, k) && (c->tensors[k].dtype != dtype || !dense(c->tensors[k])))
      return unsupported_dtypes(c);
  runtime::DeviceGuard guard(c->device_index);
  const Call call{c, static_cast<cudaStream_t>(c->stream)};
  if (dtype == FLB_FLOAT32) return f(float{}, call);
  if (dtype == FLB_FLOAT64) return f(double{}, call);
  return unsupported_dtypes(c);
}

}  // namespace

flb_status rnn_layer(void*, const flb_kernel_call* c) {
  return with_layer(c, 0, 2, [&](auto tag, const Call& k) {
    return forward<decltype(tag)>(k, *static_cast<const flb_rnn_layer_shape*>(c->structs[0]),
                                  *static_cast<const flb_rnn_layer_weights*>(c->structs[1]));
  });
}

flb_status rnn_layer_backward(void*, const flb_kernel_call* c) {
  return with_layer(c, 3, 3, [&](auto tag, const Call& k) {
    return backward<decltype(tag)>(k, *static_cast<const flb_rnn_layer_shape*>(c->structs[0]),
                                   *static_cast<const flb_rnn_layer_weights*>(c->structs[1]),
                                   *static_cast<const flb_rnn_layer_grads*>(c->structs[2]));
  });
}

}  // namespace flambeau::cuda::kernels
