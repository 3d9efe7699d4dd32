// The CTC loss of one sample as the CUDA kernels compute it (ctc_ops.cu), plain
// C++ marked __host__ __device__ so the tests run it on the host with g++
// (tests/host_kernels/run_ctc_math.cpp) against the CPU's ctc_loss.
//
// A sample's extended label sequence l' has 2 S + 1 states: blanks around and
// between its S labels. The forward variables alpha (log space, from the start)
// and the backward ones beta (log space, to the end, log_probs of their own
// time included) recurse over time, each state from itself and the one or two
// before (after) it; a state is entered from two back only when that skips a
// blank between two different labels. The loss is -log(alpha at the last blank
// + alpha at the last label); the gradient with respect to log_probs is
// PyTorch's: (exp(lp) - exp(log_post + nll - lp)) * grad_out, log_post the
// log-sum over the states of a class of alpha + beta.
//
// Everything is computed in double, whatever the input dtype, as on the CPU:
// alpha is stored in the input's dtype (the backward reads it from there),
// beta never leaves double.
//
// The per-sample drivers at the end run on a "block" of threads: any type with
// rank(), size() and sync() (a barrier every thread reaches as often as the
// others). Each phase is a loop over its positions strided by the block, so
// one thread (the host) runs it as well as many (the kernel, one block per
// sample).
#pragma once
#include <math.h>

#include <cstdint>
#include <limits>

#include "backend/kernels/strided_index.h"  // FLB_HD

namespace flambeau::cuda::kernels {

// Namespace-scope constants of scalar type are usable in device code.
constexpr double kCtcNegInf = -std::numeric_limits<double>::infinity();
constexpr double kCtcPosInf = std::numeric_limits<double>::infinity();

// log(exp(a) + exp(b) + exp(c)); -inf, not NaN, when all three are -inf.
FLB_HD inline double ctc_log_add(double a, double b, double c = kCtcNegInf) {
  double m = a > b ? a : b;
  m = m > c ? m : c;
  if (m == kCtcNegInf) return kCtcNegInf;
  return m + log(exp(a - m) + exp(b - m) + exp(c - m));
}

// One sample of a batch: its frames of log_probs and its labels.
template <class T>
struct CtcSample {
  const T* log_probs;     // (T, N, C) at (0, b, 0)
  int64_t frame_stride;   // N * C: from one time step to the next
  const int64_t* labels;  // its target_length labels
  int64_t input_length, target_length, blank;

  FLB_HD int64_t states() const { return 2 * target_length + 1; }
  // l'(s): blank at even states, label (s - 1) / 2 at odd ones.
  FLB_HD int64_t label(int64_t s) const { return (s & 1) != 0 ? labels[s >> 1] : blank; }
  FLB_HD double log_prob(int64_t t, int64_t c) const {
    return static_cast<double>(log_probs[t * frame_stride + c]);
  }
  // Whether state s is entered from s - 2 (it skips a blank between different labels).
  FLB_HD bool skips_in(int64_t s) const { return s > 1 && label(s) != label(s - 2); }
};

template <class T>
FLB_HD CtcSample<T> ctc_sample(const T* log_probs, int64_t N, int64_t C, const int64_t* targets,
                               const int64_t* offsets, const int64_t* input_lengths,
                               const int64_t* target_lengths, int64_t blank, int64_t b) {
  return {log_probs + b * C, N * C, targets + offsets[b], input_lengths[b],
          target_lengths[b], blank};
}

// alpha at (t, s) from the row of t - 1 (not read at t = 0, where only the first
// blank and the first label can start).
template <class T>
FLB_HD double ctc_alpha(const CtcSample<T>& x, const double* prev, int64_t t, int64_t s) {
  if (t == 0) return s < 2 ? x.log_prob(0, x.label(s)) : kCtcNegInf;
  const double from = ctc_log_add(prev[s], s > 0 ? prev[s - 1] : kCtcNegInf,
                                  x.skips_in(s) ? prev[s - 2] : kCtcNegInf);
  return from + x.log_prob(t, x.label(s));
}

// beta at (t, s) from the row of t + 1 (not read at the last frame, where only
// the last label and the last blank can end).
template <class T>
FLB_HD double ctc_beta(const CtcSample<T>& x, const double* next, int64_t t, int64_t s) {
  const int64_t n = x.states();
  if (t == x.input_length - 1) return s >= n - 2 ? x.log_prob(t, x.label(s)) : kCtcNegInf;
  const double to = ctc_log_add(next[s], s + 1 < n ? next[s + 1] : kCtcNegInf,
                                s + 2 < n && x.skips_in(s + 2) ? next[s + 2] : kCtcNegInf);
  return to + x.log_prob(t, x.label(s));
}

// log p(target | log_probs) from alpha's row at the last frame (not read when
// there are no frames: then only the empty target has probability, 1).
template <class T>
FLB_HD double ctc_log_likelihood(const CtcSample<T>& x, const double* last) {
  if (x.input_length == 0) return x.target_length == 0 ? 0.0 : kCtcNegInf;
  const int64_t n = x.states();
  return n > 1 ? ctc_log_add(last[n - 1], last[n - 2]) : last[0];
}

// The states that share a label are walked in increasing order: the next one
// after s, or -1; and whether s is the first of its label (blank: state 0).
template <class T>
FLB_HD int64_t ctc_next_same_label(const CtcSample<T>& x, int64_t s) {
  const int64_t n = x.states(), l = x.label(s);
  // A label other than blank sits at odd states only.
  const int64_t step = l == x.blank ? 1 : 2;
  for (int64_t r = s + step; r < n; r += step)
    if (x.label(r) == l) return r;
  return -1;
}

template <class T>
FLB_HD bool ctc_first_of_label(const CtcSample<T>& x, int64_t s) {
  const int64_t l = x.label(s);
  if (l == x.blank) return s == 0;
  for (int64_t r = 1; r < s; r += 2)
    if (x.label(r) == l) return false;
  return true;
}

// log of the summed alpha * beta over the states of one class at one frame: the
// chain of states from `first` (ctc_next_same_label in `next`), in increasing
// order. alpha is the stored row (the input's dtype), beta in double.
template <class T>
FLB_HD double ctc_class_log_post(const T* alpha, const double* beta, const int64_t* next,
                                 int64_t first) {
  double p = kCtcNegInf;
  for (int64_t s = first; s >= 0; s = next[s])
    p = ctc_log_add(p, static_cast<double>(alpha[s]) + beta[s]);
  return p;
}

// d loss / d log_probs at one (frame, class): PyTorch's form, the gradient through a
// log_softmax's logits (whose exp(log_probs) term vanishes there). NaN for an
// infinite nll without zero_infinity, as on the CPU.
FLB_HD inline double ctc_grad(double log_prob, double log_post, double nll, double grad_out) {
  return (exp(log_prob) - exp(log_post + nll - log_prob)) * grad_out;
}

// ---- one sample on a block --------------------------------------------------

// The forward: alpha's rows into alpha_out (the sample's (T, row) slice of
// log_alpha, written for t < input_length and s < states) and the nll. rows: 2
// row doubles of scratch (this frame's alpha and the previous one's).
template <class T, class Block>
FLB_HD void ctc_forward_sample(const CtcSample<T>& x, int64_t row, T* alpha_out, T* nll,
                               double* rows, Block& block) {
  const int64_t n = x.states(), len = x.input_length;
  for (int64_t t = 0; t < len; ++t) {
    const double* prev = rows + ((t + 1) & 1) * row;
    double* cur = rows + (t & 1) * row;
    for (int64_t s = block.rank(); s < n; s += block.size()) {
      const double a = ctc_alpha(x, prev, t, s);
      cur[s] = a;
      alpha_out[t * row + s] = static_cast<T>(a);
    }
    block.sync();  // this row is complete before the next frame reads it
  }
  if (block.rank() == 0)
    *nll = static_cast<T>(-ctc_log_likelihood(x, len > 0 ? rows + ((len - 1) & 1) * row : rows));
}

// Scratch of the backward, per sample: 2 row doubles (beta at this frame and the
// next), C doubles (each class's log posterior at this frame), 2 row int64 (the
// chains of states by label: next state, then 1 where a chain starts).
struct CtcBackwardScratch {
  double* rows;
  double* post;
  int64_t* chain;
};

// The backward: grad (the sample's column of the (T, N, C) gradient: frame t's C
// values at grad + t * frame_stride) from the stored alpha slice (T, row), the
// nll and grad_out of this sample. Zero past input_length and, when `zero`
// (zero_infinity and an infinite nll), everywhere.
template <class T, class Block>
FLB_HD void ctc_backward_sample(const CtcSample<T>& x, int64_t row, int64_t frames, int64_t C,
                                const T* alpha, double nll, double grad_out, bool zero, T* grad,
                                const CtcBackwardScratch& scratch, Block& block) {
  const int64_t n = x.states(), len = zero ? 0 : x.input_length;
  // Frames the alignments do not reach.
  for (int64_t i = block.rank(); i < (frames - len) * C; i += block.size()) {
    const int64_t t = len + i / C;
    grad[t * x.frame_stride + i % C] = T(0);
  }
  if (len == 0) return;
  double* const post = scratch.post;
  int64_t* const next = scratch.chain;
  int64_t* const first = scratch.chain + row;
  for (int64_t s = block.rank(); s < n; s += block.size()) {
    next[s] = ctc_next_same_label(x, s);
    first[s] = ctc_first_of_label(x, s) ? 1 : 0;
  }
  for (int64_t c = block.rank(); c < C; c += block.size()) post[c] = kCtcNegInf;
  // (the first frame's sync below comes before anything reads the chains or posteriors)
  for (int64_t t = len - 1; t >= 0; --t) {
    double* cur = scratch.rows + (t & 1) * row;
    const double* later = scratch.rows + ((t + 1) & 1) * row;
    for (int64_t s = block.rank(); s < n; s += block.size()) cur[s] = ctc_beta(x, later, t, s);
    block.sync();  // beta's row is complete, the last frame's posteriors read
    const T* alpha_t = alpha + t * row;
    for (int64_t s = block.rank(); s < n; s += block.size())
      if (first[s] != 0) post[x.label(s)] = ctc_class_log_post(alpha_t, cur, next, s);
    block.sync();  // every class's posterior is in
    // (the chains rewrite the same classes every frame; the others stay -inf)
    T* grad_t = grad + t * x.frame_stride;
    for (int64_t c = block.rank(); c < C; c += block.size())
      grad_t[c] = static_cast<T>(ctc_grad(x.log_prob(t, c), post[c], nll, grad_out));
  }
}

// Whether the backward zeroes a sample: zero_infinity and an infinite loss.
FLB_HD inline bool ctc_zeroed(bool zero_infinity, double nll) {
  return zero_infinity && nll == kCtcPosInf;
}

}  // namespace flambeau::cuda::kernels
