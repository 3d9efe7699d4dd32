// Scaled dot-product attention on the CPU, flash-attention style: the query
// rows of each problem are processed in blocks of kBlock; a block's scores
// against all keys (one GEMM) go to a per-thread buffer, are turned into
// attention weights in place, and a second GEMM multiplies them by the values.
// The forward keeps only each row's log-sum-exp; the backward recomputes the
// weights from it and regenerates the dropout mask from its Philox stream.
// Tasks (forward: query blocks; backward: problems, which own their
// grad_key/grad_value accumulators) run in parallel, each thread with a
// single-threaded GEMM, as the convolution kernels do.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/scratch.h"
#include "cpu/blas.h"
#include "cpu/philox_lanes.h"
#include "cpu/thread_tasks.h"
#include "cpu/vec_math.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/attention_kernels.h"

namespace flambeau {

namespace {

constexpr int64_t kBlock = 64;  // query rows per block

// out[i] = exp(in[i] - shift) through libmvec; returns the sum.
float exp_shift_sum(const float* in, float* out, int64_t n, float shift) {
  return vec::exp_shift_sum_f32(in, out, n, shift);
}
double exp_shift_sum(const double* in, double* out, int64_t n, double shift) {
  return vec::exp_shift_sum_f64(in, out, n, shift);
}

// Runs f(task, buffer) for tasks [0, n), each thread with a buffer of its own; the
// tasks' costs differ (causal blocks stop at the diagonal), so threads take them in turn.
template <class T, class F>
void for_each_task(int64_t n, size_t buffer_size, const F& f) {
  const int threads = task_threads(n);
  Scratch<T> buffers(static_cast<size_t>(threads) * buffer_size);
  run_tasks(n, threads, TaskOrder::kDynamic, true, [&](int slot, int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) f(t, buffers.data() + slot * buffer_size);
  });
}

// The block of query rows [r0, r0 + rows) of problem i: how many key columns
// can take part (causal blocks stop at the diagonal).
struct Block {
  int64_t i, r0, rows, cols;
  Block(const AttentionProblem& p, int64_t i_, int64_t blk) : i(i_), r0(blk * kBlock) {
    rows = std::min(kBlock, p.L - r0);
    cols = p.causal ? std::min(p.S, r0 + rows) : p.S;
  }
};

// scores (rows x cols) = scale * q_block k^T, then the mask and the causal
// triangle: excluded entries become -inf.
template <class T>
void scores(const AttentionProblem& p, const Block& b, T* s) {
  const T* q = p.q->data_as<T>() + p.q_off[b.i] + b.r0 * p.q_ld;
  const T* k = p.k->data_as<T>() + p.k_off[b.i];
  gemm<T>(false, true, b.rows, b.cols, p.E, T(p.scale), q, p.q_ld, k, p.k_ld, T(0), s, b.cols);
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  for (int64_t r = 0; r < b.rows; ++r) {
    T* row = s + r * b.cols;
    const int64_t l = b.r0 + r;
    if (p.mask) {
      const int64_t base = p.mask_off[b.i] + l * p.mask_row;
      if (p.mask->dtype() == ScalarType::Bool) {
        const bool* m = p.mask->data_as<bool>() + base;
        for (int64_t j = 0; j < b.cols; ++j)
          if (!m[j * p.mask_col]) row[j] = kNegInf;
      } else {
        const T* m = p.mask->data_as<T>() + base;
        for (int64_t j = 0; j < b.cols; ++j) row[j] += m[j * p.mask_col];
      }
    }
    if (p.causal)
      for (int64_t j = l + 1; j < b.cols; ++j) row[j] = kNegInf;
  }
}

// Dropout's factor for element (i, l, s): 1 / (1 - p) when kept, else 0.
struct DropoutRow {
  Lanes lanes;
  uint64_t first;
  double keep;
  double factor;
  DropoutRow(const AttentionProblem& p, int64_t i, int64_t l)
      : lanes(p.seed, p.offset),
        first(static_cast<uint64_t>((i * p.L + l) * p.S)),
        keep(1 - p.dropout_p),
        factor(p.dropout_p < 1 ? 1 / (1 - p.dropout_p) : 0) {}
  template <class T>
  T at(int64_t j) {
    return lanes.at(first + static_cast<uint64_t>(j)) * 0x1.0p-32 < keep ? T(factor) : T(0);
  }
};

template <class T>
void forward(const AttentionProblem& p, const Tensor& out, const Tensor& logsumexp) {
  const int64_t blocks = (p.L + kBlock - 1) / kBlock;
  T* o = out->data_as<T>();
  T* lse = logsumexp->data_as<T>();
  for_each_task<T>(p.count * blocks, static_cast<size_t>(kBlock * p.S), [&](int64_t t, T* s) {
    Block b(p, t / blocks, t % blocks);
    scores<T>(p, b, s);
    for (int64_t r = 0; r < b.rows; ++r) {
      T* row = s + r * b.cols;
      const int64_t l = b.r0 + r;
      T mx = -std::numeric_limits<T>::infinity();
      for (int64_t j = 0; j < b.cols; ++j) mx = std::max(mx, row[j]);
      if (mx == -std::numeric_limits<T>::infinity()) {  // fully masked: weights 0, as PyTorch
        std::fill(row, row + b.cols, T(0));
        lse[b.i * p.L + l] = mx;
        continue;
      }
      const T sum = exp_shift_sum(row, row, b.cols, mx);
      lse[b.i * p.L + l] = mx + std::log(sum);
      const T inv = T(1) / sum;
      if (p.dropout_p > 0) {
        DropoutRow z(p, b.i, l);
        for (int64_t j = 0; j < b.cols; ++j) row[j] *= inv * z.at<T>(j);
      } else {
        for (int64_t j = 0; j < b.cols; ++j) row[j] *= inv;
      }
    }
    const T* v = p.v->data_as<T>() + p.v_off[b.i];
    gemm<T>(false, false, b.rows, p.Ev, b.cols, T(1), s, b.cols, v, p.v_ld, T(0),
            o + (b.i * p.L + b.r0) * p.Ev, p.Ev);
  });
}

template <class T>
void backward(const AttentionProblem& p, const Tensor& grad_out, const Tensor& out,
              const Tensor& logsumexp, const Tensor& grad_q, const Tensor& grad_k,
              const Tensor& grad_v) {
  const int64_t blocks = (p.L + kBlock - 1) / kBlock;
  const T *go = grad_out->data_as<T>(), *o = out->data_as<T>(), *lse = logsumexp->data_as<T>();
  T *gq = grad_q->data_as<T>(), *gk = grad_k->data_as<T>(), *gv = grad_v->data_as<T>();
  const size_t block_size = static_cast<size_t>(kBlock * p.S);
  for_each_task<T>(p.count, 2 * block_size, [&](int64_t i, T* buffer) {
    T* w = buffer;                // attention weights, then the dropped weights
    T* ds = buffer + block_size;  // grad of the dropped weights, then grad of the scores
    T* gkj = gk + i * p.S * p.E;
    T* gvj = gv + i * p.S * p.Ev;
    std::fill(gkj, gkj + p.S * p.E, T(0));
    std::fill(gvj, gvj + p.S * p.Ev, T(0));
    const T* k = p.k->data_as<T>() + p.k_off[i];
    const T* v = p.v->data_as<T>() + p.v_off[i];
    for (int64_t blk = 0; blk < blocks; ++blk) {
      Block b(p, i, blk);
      const T* gob = go + (i * p.L + b.r0) * p.Ev;
      const T* q = p.q->data_as<T>() + p.q_off[i] + b.r0 * p.q_ld;
      scores<T>(p, b, w);
      gemm<T>(false, true, b.rows, b.cols, p.Ev, T(1), gob, p.Ev, v, p.v_ld, T(0), ds, b.cols);
      for (int64_t r = 0; r < b.rows; ++r) {
        const int64_t l = b.r0 + r;
        T* wr = w + r * b.cols;
        T* dr = ds + r * b.cols;
        const T m = lse[i * p.L + l];
        if (m == -std::numeric_limits<T>::infinity()) {  // fully masked row: no gradient
          std::fill(wr, wr + b.cols, T(0));
          std::fill(dr, dr + b.cols, T(0));
          continue;
        }
        // sum_s w_s dw_s over the row equals grad_out . out (flash attention's D).
        T d = 0;
        for (int64_t c = 0; c < p.Ev; ++c) d += gob[r * p.Ev + c] * o[(i * p.L + l) * p.Ev + c];
        exp_shift_sum(wr, wr, b.cols, m);
        if (p.dropout_p > 0) {
          DropoutRow z(p, i, l);
          for (int64_t c = 0; c < b.cols; ++c) {
            const T f = z.at<T>(c);
            dr[c] = wr[c] * (dr[c] * f - d);
            wr[c] *= f;
          }
        } else {
          for (int64_t c = 0; c < b.cols; ++c) dr[c] = wr[c] * (dr[c] - d);
        }
      }
      gemm<T>(true, false, b.cols, p.Ev, b.rows, T(1), w, b.cols, gob, p.Ev, T(1), gvj, p.Ev);
      gemm<T>(false, false, b.rows, p.E, b.cols, T(p.scale), ds, b.cols, k, p.k_ld, T(0),
              gq + (i * p.L + b.r0) * p.E, p.E);
      gemm<T>(true, false, b.cols, p.E, b.rows, T(p.scale), ds, b.cols, q, p.q_ld, T(1), gkj, p.E);
    }
  });
}

void forward_kernel(const AttentionProblem& p, const Tensor& out, const Tensor& logsumexp) {
  if (out->dtype() == ScalarType::Float64)
    forward<double>(p, out, logsumexp);
  else
    forward<float>(p, out, logsumexp);
}

void backward_kernel(const AttentionProblem& p, const Tensor& grad_out, const Tensor& out,
                     const Tensor& logsumexp, const Tensor& grad_q, const Tensor& grad_k,
                     const Tensor& grad_v) {
  if (out->dtype() == ScalarType::Float64)
    backward<double>(p, grad_out, out, logsumexp, grad_q, grad_k, grad_v);
  else
    backward<float>(p, grad_out, out, logsumexp, grad_q, grad_k, grad_v);
}

}  // namespace

FLB_REGISTER_KERNEL(_scaled_dot_product_attention_forward, kCPU, forward_kernel);
FLB_REGISTER_KERNEL(_scaled_dot_product_attention_backward, kCPU, backward_kernel);

}  // namespace flambeau
