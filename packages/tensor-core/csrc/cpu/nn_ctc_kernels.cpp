// CPU kernels of the CTC loss, parallel over the batch. Each sample runs over
// its extended label sequence l' (blanks around and between the S labels,
// 2 S + 1 states): the forward alpha recursion gives the likelihood, the
// backward beta recursion the posterior of every (time, state), from which
// the gradient with respect to log_probs follows. All in log space, in double.
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/parallel.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/nn_ctc_kernel.h"

namespace flambeau {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// log(exp(a) + exp(b) + exp(c)), exact when all are -inf.
double log_add3(double a, double b, double c) {
  double m = std::max(a, std::max(b, c));
  if (m == kNegInf) return kNegInf;
  return m + std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m));
}

// One sample's view: log_probs at (t, c) and its extended labels.
template <class T>
struct Sample {
  const T* lp;  // (T, N, C) base, offset to this sample
  int64_t stride_t, input_length, target_length;
  std::vector<int64_t> label;  // l'(s) for s in [0, 2 S + 1)

  Sample(const T* log_probs, int64_t b, int64_t N, int64_t C, const int64_t* targets,
         int64_t offset, int64_t il, int64_t tl, int64_t blank)
      : lp(log_probs + b * C), stride_t(N * C), input_length(il), target_length(tl) {
    label.assign(static_cast<size_t>(2 * tl + 1), blank);
    for (int64_t i = 0; i < tl; ++i) label[2 * i + 1] = targets[offset + i];
  }
  double at(int64_t t, int64_t c) const { return static_cast<double>(lp[t * stride_t + c]); }
  int64_t states() const { return 2 * target_length + 1; }
  // Whether state s may be entered from s - 2 (skipping a blank between different labels).
  bool can_skip(int64_t s) const { return s > 1 && label[s] != label[s - 2]; }
};

// alpha (input_length x states, row-major) into la; returns the log-likelihood.
template <class T>
double forward_alpha(const Sample<T>& x, double* la, int64_t row) {
  const int64_t n = x.states(), len = x.input_length;
  if (len == 0) return x.target_length == 0 ? 0.0 : kNegInf;
  for (int64_t s = 0; s < n; ++s) la[s] = kNegInf;
  la[0] = x.at(0, x.label[0]);
  if (n > 1) la[1] = x.at(0, x.label[1]);
  for (int64_t t = 1; t < len; ++t) {
    const double* prev = la + (t - 1) * row;
    double* cur = la + t * row;
    for (int64_t s = 0; s < n; ++s) {
      const double a =
          log_add3(prev[s], s > 0 ? prev[s - 1] : kNegInf, x.can_skip(s) ? prev[s - 2] : kNegInf);
      cur[s] = a + x.at(t, x.label[s]);
    }
  }
  const double* last = la + (len - 1) * row;
  return n > 1 ? log_add3(last[n - 1], last[n - 2], kNegInf) : last[0];
}

// beta (input_length x states): log-probability of the rest of the sequence
// from state s at time t, log_probs of time t included.
template <class T>
void backward_beta(const Sample<T>& x, std::vector<double>& lb) {
  const int64_t n = x.states(), len = x.input_length;
  lb.assign(static_cast<size_t>(len * n), kNegInf);
  if (len == 0) return;
  double* last = lb.data() + (len - 1) * n;
  last[n - 1] = x.at(len - 1, x.label[n - 1]);
  if (n > 1) last[n - 2] = x.at(len - 1, x.label[n - 2]);
  for (int64_t t = len - 2; t >= 0; --t) {
    const double* next = lb.data() + (t + 1) * n;
    double* cur = lb.data() + t * n;
    for (int64_t s = 0; s < n; ++s) {
      const double b = log_add3(next[s], s + 1 < n ? next[s + 1] : kNegInf,
                                s + 2 < n && x.can_skip(s + 2) ? next[s + 2] : kNegInf);
      cur[s] = b + x.at(t, x.label[s]);
    }
  }
}

template <class T>
void ctc_forward(const Tensor& nll, const Tensor& log_alpha, const Tensor& log_probs,
                 const Tensor& targets, const Tensor& offsets, const Tensor& input_lengths,
                 const Tensor& target_lengths, int64_t blank) {
  const int64_t T_ = log_probs->size(0), N = log_probs->size(1), C = log_probs->size(2);
  const int64_t row = log_alpha->size(2);
  const T* lp = log_probs->data_as<T>();
  const int64_t *tg = targets->data_as<int64_t>(), *off = offsets->data_as<int64_t>();
  const int64_t *il = input_lengths->data_as<int64_t>(), *tl = target_lengths->data_as<int64_t>();
  T* out = nll->data_as<T>();
  T* la_out = log_alpha->data_as<T>();
  parallel_for(0, N, 1, [&](int64_t lo, int64_t hi) {
    std::vector<double> la;
    for (int64_t b = lo; b < hi; ++b) {
      Sample<T> x(lp, b, N, C, tg, off[b], il[b], tl[b], blank);
      la.assign(static_cast<size_t>(std::max<int64_t>(il[b], 1) * row), kNegInf);
      out[b] = static_cast<T>(-forward_alpha(x, la.data(), row));
      T* dst = la_out + b * T_ * row;
      for (int64_t t = 0; t < il[b]; ++t)
        for (int64_t s = 0; s < x.states(); ++s) dst[t * row + s] = static_cast<T>(la[t * row + s]);
    }
  });
}

template <class T>
void ctc_backward(const Tensor& grad, const Tensor& grad_out, const Tensor& log_probs,
                  const Tensor& targets, const Tensor& offsets, const Tensor& input_lengths,
                  const Tensor& target_lengths, const Tensor& nll, const Tensor& log_alpha,
                  int64_t blank, bool zero_infinity) {
  const int64_t T_ = log_probs->size(0), N = log_probs->size(1), C = log_probs->size(2);
  const int64_t row = log_alpha->size(2);
  const T* lp = log_probs->data_as<T>();
  const int64_t *tg = targets->data_as<int64_t>(), *off = offsets->data_as<int64_t>();
  const int64_t *il = input_lengths->data_as<int64_t>(), *tl = target_lengths->data_as<int64_t>();
  const T *go = grad_out->data_as<T>(), *loss = nll->data_as<T>(), *la = log_alpha->data_as<T>();
  T* g = grad->data_as<T>();
  parallel_for(0, N, 1, [&](int64_t lo, int64_t hi) {
    std::vector<double> lb, post(static_cast<size_t>(C));
    for (int64_t b = lo; b < hi; ++b) {
      const double nl = static_cast<double>(loss[b]), gr = static_cast<double>(go[b]);
      const bool zero = zero_infinity && nl == std::numeric_limits<double>::infinity();
      Sample<T> x(lp, b, N, C, tg, off[b], il[b], tl[b], blank);
      if (!zero) backward_beta(x, lb);
      for (int64_t t = 0; t < T_; ++t) {
        T* gt = g + (t * N + b) * C;
        if (zero || t >= il[b]) {
          std::fill(gt, gt + C, T(0));
          continue;
        }
        // log of the summed alpha * beta over the states of each label.
        std::fill(post.begin(), post.end(), kNegInf);
        for (int64_t s = 0; s < x.states(); ++s) {
          const double ab =
              static_cast<double>(la[(b * T_ + t) * row + s]) + lb[t * x.states() + s];
          double& p = post[x.label[s]];
          p = log_add3(p, ab, kNegInf);
        }
        // PyTorch's form: the gradient through a log_softmax's logits, whose
        // exp(log_probs) term vanishes there.
        for (int64_t c = 0; c < C; ++c) {
          const double l = x.at(t, c);
          gt[c] = static_cast<T>((std::exp(l) - std::exp(post[c] + nl - l)) * gr);
        }
      }
    }
  });
}

void ctc_loss_kernel(const Tensor& nll, const Tensor& log_alpha, const Tensor& log_probs,
                     const Tensor& targets, const Tensor& offsets, const Tensor& input_lengths,
                     const Tensor& target_lengths, int64_t blank) {
  if (log_probs->dtype() == ScalarType::Float32)
    return ctc_forward<float>(nll, log_alpha, log_probs, targets, offsets, input_lengths,
                              target_lengths, blank);
  ctc_forward<double>(nll, log_alpha, log_probs, targets, offsets, input_lengths, target_lengths,
                      blank);
}

void ctc_loss_backward_kernel(const Tensor& grad, const Tensor& grad_out, const Tensor& log_probs,
                              const Tensor& targets, const Tensor& offsets,
                              const Tensor& input_lengths, const Tensor& target_lengths,
                              const Tensor& nll, const Tensor& log_alpha, int64_t blank,
                              bool zero_infinity) {
  if (log_probs->dtype() == ScalarType::Float32)
    return ctc_backward<float>(grad, grad_out, log_probs, targets, offsets, input_lengths,
                               target_lengths, nll, log_alpha, blank, zero_infinity);
  ctc_backward<double>(grad, grad_out, log_probs, targets, offsets, input_lengths, target_lengths,
                       nll, log_alpha, blank, zero_infinity);
}

}  // namespace

FLB_REGISTER_KERNEL(_ctc_loss, kCPU, ctc_loss_kernel);
FLB_REGISTER_KERNEL(_ctc_loss_backward, kCPU, ctc_loss_backward_kernel);

}  // namespace flambeau
