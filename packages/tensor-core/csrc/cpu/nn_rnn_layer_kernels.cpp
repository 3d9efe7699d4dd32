// CPU kernels of _rnn_layer: one layer, one direction, over a whole (packed)
// sequence, as PyTorch's fused RNN primitives do it:
//
// forward   the input projection of every step in one GEMM, straight into the
//           workspace; then per step one small GEMM of the running state with
//           w_hh (packed once per call, packed_gemm.h) and the gate arithmetic
//           fused after it, writing the step's output rows and the running state
//           (no allocation per step). LSTM computes a step in one parallel pass
//           over blocks of hidden units: each block's four gates come out of the
//           product side by side in a small tile, are activated there and
//           combined into the block's c and h.
// backward  per step (in reverse) the gate gradients, stored for all steps, and
//           one small GEMM (w_hh packed once) carrying the state's gradient back;
//           after the loop, the weight and input gradients as a few large GEMMs
//           over all steps.
//
// Workspace columns per row (what backward reads besides output):
//   LSTM  i f g o (activated, 4H) | c (H) | h before the projection (H, with w_hr)
//   GRU   r z n (activated, 3H) | hn = h_prev @ w_hn^T + b_hn (H)
//   RNN   none (backward reads the output)
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/scratch.h"
#include "cpu/blas.h"
#include "cpu/cpu_capability.h"
#include "cpu/packed_gemm.h"
#include "cpu/rnn_kernel_support.h"
#include "generated/kernels.h"
#include "ops/rnn_kernels.h"

namespace flambeau {

namespace {

using rnn::bias_at;
using rnn::data_or_null;
using rnn::for_rows;
using rnn::kSingleOrDouble;
using rnn::lstm_cell;
using rnn::sigmoid_n;
using rnn::tanh_n;

// Buffers from the CPU allocator: a size that cannot be had raises its RuntimeError.
template <class T>
Scratch<T> scratch(int64_t n) {
  return Scratch<T>(static_cast<size_t>(std::max<int64_t>(n, 1)));
}

// The steps in the order they run, with the first row of each.
struct Steps {
  DimVector first_row;  // per time step t
  explicit Steps(const RnnLayerShape& s) : first_row(s.batch_sizes.size()) {
    int64_t row = 0;
    for (size_t t = 0; t < s.batch_sizes.size(); ++t) {
      first_row[t] = row;
      row += s.batch_sizes[t];
    }
  }
  static int64_t at(const RnnLayerShape& s, int64_t i) {  // the i-th step to run
    const auto n = static_cast<int64_t>(s.batch_sizes.size());
    return s.reverse ? n - 1 - i : i;
  }
};

// out[r] = column sums of the rows x cols matrix a (ld cols), as one GEMV-shaped GEMM.
template <class T>
void column_sums(const T* a, int64_t rows, int64_t cols, T* out) {
  Scratch<T> ones(static_cast<size_t>(std::max<int64_t>(rows, 1)), T(1));
  gemm<T>(true, false, cols, 1, rows, T(1), a, cols, ones.data(), 1, T(0), out, 1);
}

// w_hh^T packed for LSTM's step: per block of kWidth hidden units, the panels of its
// four gates (i f g o) in turn, so one block's gates come out of the product together.
template <class T>
PackedMatrix<T> lstm_gate_panels(const T* w_hh, int64_t H, int64_t P) {
  constexpr int64_t kWidth = PackedMatrix<T>::kWidth;
  std::vector<typename PackedMatrix<T>::Panel> panels;
  for (int64_t j0 = 0; j0 < H; j0 += kWidth)
    for (int64_t q = 0; q < 4; ++q) panels.push_back({q * H + j0, std::min(kWidth, H - j0)});
  return PackedMatrix<T>(w_hh, P, true, P, std::move(panels));
}

// dst[0, lanes) = src[0, lanes); a whole block's copy is one fixed-size move.
template <class T>
FLB_MULTIVERSION_BODY void copy_lanes(T* dst, const T* src, int64_t lanes) {
  constexpr int64_t kWidth = PackedMatrix<T>::kWidth;
  if (lanes == kWidth) {
    std::memcpy(dst, src, sizeof(T) * kWidth);
  } else {
    std::memcpy(dst, src, sizeof(T) * lanes);
  }
}

// One LSTM step for the hidden units of block u, rows [0, bs). Gate q of row r is
// computed at tile[q * n + r * kWidth + lane] (n = bs * kWidth) as the workspace row's
// input projection (bias included) + h @ w_hh^T, and the cell runs there in one pass
// (lstm_cell); the block's running c is kept in the same layout (c_block, B rows), and
// its h goes to tile[4 n + ...]. The step's gates and c go to the workspace rows, its h
// to hr's rows. Built for each CPU capability (the baseline copy moves a block's lanes
// four floats at a time).
template <class T>
FLB_MULTIVERSION_BODY void lstm_block_step_body(const PackedMatrix<T>& w, int64_t u, int64_t bs,
                                                int64_t H, int64_t P, const T* h, T* ws_rows,
                                                int64_t W, T* c_block, T* hr, int64_t ld_hr,
                                                T* tile) {
  constexpr int64_t kWidth = PackedMatrix<T>::kWidth;
  const int64_t j0 = u * kWidth, lanes = w.panel(4 * u).width, n = bs * kWidth;
  packed_panel_product(h, P, bs, w, 4 * u, 4, ws_rows + j0, W, H, tile, kWidth, n);
  T* h_block = tile + 4 * n;
  lstm_cell(tile, c_block, h_block, n);
  for (int64_t r = 0; r < bs; ++r) {
    T* wr = ws_rows + r * W + j0;
    for (int64_t q = 0; q < 4; ++q) copy_lanes(wr + q * H, tile + q * n + r * kWidth, lanes);
    copy_lanes(wr + 4 * H, c_block + r * kWidth, lanes);
    copy_lanes(hr + r * ld_hr + j0, h_block + r * kWidth, lanes);
  }
}

// lstm_block_step for float and double, each built per capability from the body above.
#define FLB_LSTM_BLOCK_STEP(T)                                                                     \
  FLB_MULTIVERSION(void, lstm_block_step,                                                          \
                   (const PackedMatrix<T>& w, int64_t u, int64_t bs, int64_t H, int64_t P,         \
                    const T* h, T* ws_rows, int64_t W, T* c_block, T* hr, int64_t ld_hr, T* tile), \
                   (w, u, bs, H, P, h, ws_rows, W, c_block, hr, ld_hr, tile))
FLB_LSTM_BLOCK_STEP(float)
FLB_LSTM_BLOCK_STEP(double)
#undef FLB_LSTM_BLOCK_STEP

template <class T>
void forward(const RnnLayerShape& s, const Tensor& input, const Tensor& hx, const Tensor& cx,
             const RnnLayerWeights& w, const Tensor& output, const Tensor& hy, const Tensor& cy,
             const Tensor& workspace) {
  const int64_t N = s.rows, B = s.batch, I = s.input_size, H = s.hidden, P = s.out_size,
                G = s.gates, W = s.ws_cols;
  const bool lstm = s.mode == RnnMode::Lstm, gru = s.mode == RnnMode::Gru;
  const bool proj = static_cast<bool>(w.w_hr);
  const T *x = input->data_as<T>(), *w_ih = w.w_ih->data_as<T>(), *w_hh = w.w_hh->data_as<T>();
  const T *b_ih = data_or_null<T>(w.b_ih), *b_hh = data_or_null<T>(w.b_hh),
          *w_hr = data_or_null<T>(w.w_hr);
  T* out = output->data_as<T>();
  T* ws = W ? workspace->data_as<T>() : nullptr;

  // The input projection of every step: into the workspace's gate columns (LSTM, GRU), or
  // a buffer for the plain RNN, which keeps no workspace.
  // LSTM's rows start as its two biases, added once here rather than at every step.
  const bool plain = !lstm && !gru;
  Scratch<T> plain_pre = plain ? scratch<T>(N * G) : Scratch<T>();
  T* xg = plain ? plain_pre.data() : ws;
  const int64_t ld_xg = plain ? G : W;
  const bool biased = lstm && b_ih;
  if (biased) {
    auto bias = scratch<T>(G);
    for (int64_t j = 0; j < G; ++j) bias[j] = b_ih[j] + b_hh[j];
    parallel_for(0, N, std::max<int64_t>(1, kGrainSize / G), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) std::memcpy(ws + r * W, bias.data(), sizeof(T) * G);
    });
  }
  packed_gemm(x, I, N, PackedMatrix<T>(w_ih, I, true, I, PackedMatrix<T>::consecutive(G)), biased,
              xg, ld_xg);

  // The running state: rows that have finished keep their last value, so at the end it
  // is (hy, cy) whatever the order of the steps.
  T* h = hy->data_as<T>();
  T* c = lstm ? cy->data_as<T>() : nullptr;
  std::memcpy(h, hx->data_as<T>(), sizeof(T) * B * P);
  if (lstm) std::memcpy(c, cx->data_as<T>(), sizeof(T) * B * H);
  const Steps steps(s);
  const auto n_steps = static_cast<int64_t>(s.batch_sizes.size());
  ReleaseInterpreterLock unlocked;
  if (lstm) {
    // Workspace row: i f g o, then c, then h before the projection.
    constexpr int64_t kWidth = PackedMatrix<T>::kWidth;
    const PackedMatrix<T> packed = lstm_gate_panels(w_hh, H, P);
    const int64_t blocks = packed.panels() / 4;
    auto tiles = scratch<T>(blocks * 5 * B * kWidth);  // per block: 4 gates and h
    // The running c by block (block u's rows at c_blocks[u * B * kWidth + r * kWidth]),
    // from cx, back to cy at the end; finished rows keep their value.
    auto c_blocks = scratch<T>(blocks * B * kWidth);
    auto each_lane = [&](const auto& f) {
      for (int64_t u = 0; u < blocks; ++u)
        for (int64_t r = 0; r < B; ++r)
          for (int64_t l = 0; l < packed.panel(4 * u).width; ++l)
            f(c_blocks[(u * B + r) * kWidth + l], c[r * H + u * kWidth + l]);
    };
    each_lane([](T& blocked, T& state) { blocked = state; });
    for (int64_t i = 0; i < n_steps; ++i) {
      const int64_t t = Steps::at(s, i), bs = s.batch_sizes[t], row0 = steps.first_row[t];
      T* hr = proj ? ws + row0 * W + 5 * H : out + row0 * P;
      const int64_t ld_hr = proj ? W : P;
      parallel_for(0, blocks, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t u = lo; u < hi; ++u)
          lstm_block_step(packed, u, bs, H, P, h, ws + row0 * W, W,
                          c_blocks.data() + u * B * kWidth, hr, ld_hr,
                          tiles.data() + u * 5 * B * kWidth);
      });
      if (proj) gemm<T>(false, true, bs, P, H, T(1), hr, W, w_hr, H, T(0), out + row0 * P, P);
      std::memcpy(h, out + row0 * P, sizeof(T) * bs * P);
    }
    each_lane([](T& blocked, T& state) { state = blocked; });
    return;
  }

  const PackedMatrix<T> packed(w_hh, P, true, P, PackedMatrix<T>::consecutive(G));
  auto hg = scratch<T>(B * G);  // the step's h_prev @ w_hh^T
  for (int64_t i = 0; i < n_steps; ++i) {
    const int64_t t = Steps::at(s, i), bs = s.batch_sizes[t], row0 = steps.first_row[t];
    packed_gemm(h, P, bs, packed, false, hg.data(), G);
    for_rows(bs, G, [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const T* hgr = hg.data() + r * G;
        T* o = out + (row0 + r) * P;
        if (gru) {
          T* wr = ws + (row0 + r) * W;  // r z n, then hn
          for (int64_t j = 0; j < 2 * H; ++j) wr[j] += bias_at(b_ih, j) + hgr[j] + bias_at(b_hh, j);
          sigmoid_n(wr, wr, 2 * H);
          for (int64_t j = 0; j < H; ++j) {
            const T hn = hgr[2 * H + j] + bias_at(b_hh, 2 * H + j);
            wr[3 * H + j] = hn;
            wr[2 * H + j] += bias_at(b_ih, 2 * H + j) + wr[j] * hn;
          }
          tanh_n(wr + 2 * H, wr + 2 * H, H);
          const T* hp = h + r * P;
          for (int64_t j = 0; j < H; ++j) {
            const T z = wr[H + j];
            o[j] = (T(1) - z) * wr[2 * H + j] + z * hp[j];
          }
        } else {
          const T* pre = xg + (row0 + r) * G;
          for (int64_t j = 0; j < H; ++j)
            o[j] = pre[j] + hgr[j] + bias_at(b_ih, j) + bias_at(b_hh, j);
          if (s.mode == RnnMode::Tanh) {
            tanh_n(o, o, H);
          } else {
            for (int64_t j = 0; j < H; ++j) o[j] = o[j] > T(0) ? o[j] : T(0);
          }
        }
      }
    });
    std::memcpy(h, out + row0 * P, sizeof(T) * bs * P);
  }
}

// One row of LSTM's backward step: wr is the workspace row (activated i f g o, then c),
// d the gradient of the row's h, dg the row's gate gradients (written) and dc the
// running gradient of c (updated). Separate arrays (restrict) let the compiler
// vectorize; built for each CPU capability.
template <class T>
FLB_MULTIVERSION_BODY void lstm_row_grads_body(const T* __restrict wr, const T* __restrict c_prev,
                                               const T* __restrict d, T* __restrict dg,
                                               T* __restrict dc, int64_t H) {
  tanh_n(wr + 4 * H, dg + 3 * H, H);  // tanh(c), in o's place until read below
  for (int64_t j = 0; j < H; ++j) {
    const T ig = wr[j], fg = wr[H + j], gg = wr[2 * H + j], og = wr[3 * H + j];
    const T th = dg[3 * H + j];
    const T dcj = d[j] * og * (T(1) - th * th) + dc[j];
    dg[j] = dcj * gg * ig * (T(1) - ig);
    dg[H + j] = dcj * c_prev[j] * fg * (T(1) - fg);
    dg[2 * H + j] = dcj * ig * (T(1) - gg * gg);
    dg[3 * H + j] = d[j] * th * og * (T(1) - og);
    dc[j] = dcj * fg;
  }
}
#define FLB_LSTM_ROW_GRADS(T)                                                           \
  FLB_MULTIVERSION(void, lstm_row_grads,                                                \
                   (const T* wr, const T* c_prev, const T* d, T* dg, T* dc, int64_t H), \
                   (wr, c_prev, d, dg, dc, H))
FLB_LSTM_ROW_GRADS(float)
FLB_LSTM_ROW_GRADS(double)
#undef FLB_LSTM_ROW_GRADS

template <class T>
void backward(const RnnLayerShape& s, const Tensor& grad_output, const Tensor& grad_hy,
              const Tensor& grad_cy, const Tensor& input, const Tensor& hx, const Tensor& cx,
              const RnnLayerWeights& w, const Tensor& output, const Tensor& workspace,
              const RnnLayerGrads& grads) {
  const int64_t N = s.rows, B = s.batch, I = s.input_size, H = s.hidden, P = s.out_size,
                G = s.gates, W = s.ws_cols;
  const bool lstm = s.mode == RnnMode::Lstm, gru = s.mode == RnnMode::Gru;
  const bool proj = static_cast<bool>(w.w_hr);
  const T *x = input->data_as<T>(), *w_ih = w.w_ih->data_as<T>(), *w_hh = w.w_hh->data_as<T>();
  const T *w_hr = data_or_null<T>(w.w_hr), *out = output->data_as<T>();
  const T* ws = W ? workspace->data_as<T>() : nullptr;
  const T *g_out = data_or_null<T>(grad_output), *g_hy = data_or_null<T>(grad_hy),
          *g_cy = data_or_null<T>(grad_cy);
  const T *h0 = hx->data_as<T>(), *c0 = lstm ? cx->data_as<T>() : nullptr;

  // Per row of every step: the gate gradients (the hidden side's differ for GRU), the
  // state each step started from, and (with a projection) the output's gradient.
  auto d_gates = scratch<T>(N * G);
  Scratch<T> d_hidden_gates = gru ? scratch<T>(N * G) : Scratch<T>();
  T* d_hgates = gru ? d_hidden_gates.data() : d_gates.data();
  auto h_prev = scratch<T>(N * P);
  Scratch<T> d_out = proj ? scratch<T>(N * P) : Scratch<T>();

  // The running gradients of the state, (grad_hx, grad_cx) at the end.
  T* dh_state = grads.hx->data_as<T>();
  T* dc_state = lstm ? grads.cx->data_as<T>() : nullptr;
  if (g_hy) {
    std::memcpy(dh_state, g_hy, sizeof(T) * B * P);
  } else {
    std::fill(dh_state, dh_state + B * P, T(0));
  }
  if (lstm) {
    if (g_cy) {
      std::memcpy(dc_state, g_cy, sizeof(T) * B * H);
    } else {
      std::fill(dc_state, dc_state + B * H, T(0));
    }
  }
  auto dh = scratch<T>(B * P);                                  // the step's gradient of its output
  Scratch<T> dh_raw = proj ? scratch<T>(B * H) : Scratch<T>();  // ... before w_hr

  const PackedMatrix<T> packed(w_hh, P, false, G, PackedMatrix<T>::consecutive(P));
  const Steps steps(s);
  const auto n_steps = static_cast<int64_t>(s.batch_sizes.size());
  ReleaseInterpreterLock unlocked;
  for (int64_t i = n_steps - 1; i >= 0; --i) {
    const int64_t t = Steps::at(s, i), bs = s.batch_sizes[t], row0 = steps.first_row[t];
    // The step that ran before this one, whose rows (as many as it had) fed this one's
    // state; the others started from hx and cx.
    const int64_t tp = i > 0 ? Steps::at(s, i - 1) : -1;
    const int64_t prev_rows = tp >= 0 ? std::min(bs, s.batch_sizes[tp]) : 0;
    const int64_t prev_row0 = tp >= 0 ? steps.first_row[tp] : 0;
    T* hp = h_prev.data() + row0 * P;
    if (prev_rows) std::memcpy(hp, out + prev_row0 * P, sizeof(T) * prev_rows * P);
    std::memcpy(hp + prev_rows * P, h0 + prev_rows * P, sizeof(T) * (bs - prev_rows) * P);

    if (g_out) {
      const T* go = g_out + row0 * P;
      for (int64_t e = 0; e < bs * P; ++e) dh[e] = dh_state[e] + go[e];
    } else {
      std::memcpy(dh.data(), dh_state, sizeof(T) * bs * P);
    }
    const T* dh_cell = dh.data();
    if (proj) {
      std::memcpy(d_out.data() + row0 * P, dh.data(), sizeof(T) * bs * P);
      gemm<T>(false, false, bs, H, P, T(1), dh.data(), P, w_hr, H, T(0), dh_raw.data(), H);
      dh_cell = dh_raw.data();
    }
    for_rows(bs, G, [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const T* d = dh_cell + r * H;
        T* dg = d_gates.data() + (row0 + r) * G;
        if (lstm) {
          const T* wr = ws + (row0 + r) * W;
          const T* c_prev = r < prev_rows ? ws + (prev_row0 + r) * W + 4 * H : c0 + r * H;
          lstm_row_grads(wr, c_prev, d, dg, dc_state + r * H, H);
        } else if (gru) {
          const T* wr = ws + (row0 + r) * W;
          const T* hpr = hp + r * P;
          T* dgh = d_hgates + (row0 + r) * G;
          T* dhs = dh_state + r * P;
          for (int64_t j = 0; j < H; ++j) {
            const T rg = wr[j], z = wr[H + j], n = wr[2 * H + j], hn = wr[3 * H + j];
            const T dn = d[j] * (T(1) - z) * (T(1) - n * n);
            const T dz = d[j] * (hpr[j] - n) * z * (T(1) - z);
            const T dr = dn * hn * rg * (T(1) - rg);
            dg[j] = dgh[j] = dr;
            dg[H + j] = dgh[H + j] = dz;
            dg[2 * H + j] = dn;
            dgh[2 * H + j] = dn * rg;
            dhs[j] = d[j] * z;  // the direct path h' = ... + z * h
          }
        } else {
          const T* o = out + (row0 + r) * P;
          for (int64_t j = 0; j < H; ++j)
            dg[j] =
                s.mode == RnnMode::Tanh ? d[j] * (T(1) - o[j] * o[j]) : (o[j] > T(0) ? d[j] : T(0));
        }
      }
    });
    // The state's gradient flowing into the previous step: dgates_hidden @ w_hh (GRU adds
    // it to its direct path, written above).
    packed_gemm(d_hgates + row0 * G, G, bs, packed, gru, dh_state, P);
  }

  // The weights' and the input's gradients over every step at once.
  packed_gemm(d_gates.data(), G, N,
              PackedMatrix<T>(w_ih, I, false, G, PackedMatrix<T>::consecutive(I)), false,
              grads.input->data_as<T>(), I);
  gemm<T>(true, false, G, I, N, T(1), d_gates.data(), G, x, I, T(0), grads.w_ih->data_as<T>(), I);
  gemm<T>(true, false, G, P, N, T(1), d_hgates, G, h_prev.data(), P, T(0), grads.w_hh->data_as<T>(),
          P);
  if (grads.b_ih) {
    column_sums(d_gates.data(), N, G, grads.b_ih->data_as<T>());
    column_sums(d_hgates, N, G, grads.b_hh->data_as<T>());
  }
  if (proj)
    gemm<T>(true, false, P, H, N, T(1), d_out.data(), P, ws + 5 * H, W, T(0),
            grads.w_hr->data_as<T>(), H);
}

void rnn_layer(const RnnLayerShape& s, const Tensor& input, const Tensor& hx, const Tensor& cx,
               const RnnLayerWeights& w, const Tensor& output, const Tensor& hy, const Tensor& cy,
               const Tensor& workspace) {
  visit_dtype<kSingleOrDouble>(input->dtype(), "_rnn_layer", [&](auto tag) {
    forward<typename decltype(tag)::type>(s, input, hx, cx, w, output, hy, cy, workspace);
  });
}

void rnn_layer_backward(const RnnLayerShape& s, const Tensor& grad_output, const Tensor& grad_hy,
                        const Tensor& grad_cy, const Tensor& input, const Tensor& hx,
                        const Tensor& cx, const RnnLayerWeights& w, const Tensor& output,
                        const Tensor& workspace, const RnnLayerGrads& grads) {
  visit_dtype<kSingleOrDouble>(input->dtype(), "_rnn_layer_backward", [&](auto tag) {
    backward<typename decltype(tag)::type>(s, grad_output, grad_hy, grad_cy, input, hx, cx, w,
                                           output, workspace, grads);
  });
}

}  // namespace

FLB_REGISTER_KERNEL(_rnn_layer, kCPU, rnn_layer);
FLB_REGISTER_KERNEL(_rnn_layer_backward, kCPU, rnn_layer_backward);

}  // namespace flambeau
