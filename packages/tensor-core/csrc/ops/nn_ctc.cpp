// Frontends of the CTC loss. They check the lengths against the tensors (as
// PyTorch, an alignment that cannot exist is an infinite loss, not an error),
// lay the targets out flat with per-sample offsets and call the kernels;
// ctc_loss adds zero_infinity and the reduction on top of _ctc_loss.
#include <cmath>
#include <limits>
#include <vector>

#include "generated/kernels.h"
#include "generated/ops_comparison.h"
#include "generated/ops_nn_ctc.h"
#include "generated/ops_pointwise.h"
#include "generated/ops_reduction.h"
#include "generated/ops_shape.h"
#include "generated/ops_tensor.h"
#include "ops/common.h"
#include "ops/nn_ctc_kernel.h"
#include "plugin/foreign_call.h"

namespace flambeau::ops {

namespace {

const OutArg kNew = OutArg::none();

// A 1-D int64 tensor of values.
Tensor int64_tensor(const std::vector<int64_t>& v, Device device) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, ScalarType::Int64);
  std::copy(v.begin(), v.end(), t->data_as<int64_t>());  // written on the host, then moved
  return copy_to(t, device);
}

std::vector<int64_t> lengths_of(const Tensor& t, const char* name) {
  FLB_CHECK(is_integral(t->dtype(), false), name, " must be integral");
  FLB_CHECK(t->dim() <= 1, name, " must be a 0-D or 1-D tensor, but got shape ",
            shape_str(t->sizes()));
  Tensor c = cpu(contiguous(to_dtype(t, ScalarType::Int64)));  // read on the host
  const int64_t* p = c->data_as<int64_t>();
  return std::vector<int64_t>(p, p + c->numel());
}

// The checked problem, ready for the kernels.
struct Ctc {
  Tensor log_probs, targets, offsets, input_lengths, target_lengths;
  int64_t T = 0, N = 0, C = 0, S = 0;  // S: the longest target
};

Ctc prepare(const char* op, const Tensor& log_probs, const Tensor& targets, IntList il, IntList tl,
            int64_t blank) {
  FLB_CHECK(log_probs->dim() == 3, op, ": expected log_probs of 3 dims (T, N, C), but got shape ",
            shape_str(log_probs->sizes()));
  const ScalarType dt = log_probs->dtype();
  FLB_CHECK_T(NotImplementedError, dt == ScalarType::Float32 || dt == ScalarType::Float64, op,
              ": not implemented for dtype ", dtype_name(dt), " (log_probs must be float32 or ",
              "float64)");
  FLB_CHECK(log_probs->numel() > 0, op, ": log_probs tensor must not be empty (got shape ",
            shape_str(log_probs->sizes()), ")");
  FLB_CHECK(is_integral(targets->dtype(), false), op,
            ": expected targets of an integer dtype (int64 or int32), but got ",
            dtype_name(targets->dtype()));
  FLB_CHECK(targets->dim() == 1 || targets->dim() == 2, op,
            ": expected targets of 1 dim (concatenated) or 2 dims (N, S), but got shape ",
            shape_str(targets->sizes()));
  Ctc c;
  c.T = log_probs->size(0);
  c.N = log_probs->size(1);
  c.C = log_probs->size(2);
  FLB_CHECK(0 <= blank && blank < c.C, op, ": blank must be in label range [0, ", c.C,
            "), but got blank=", blank);
  FLB_CHECK(static_cast<int64_t>(il.size()) == c.N, op, ": input_lengths must be of size ",
            "batch_size ", c.N, ", but got ", il.size(), " lengths");
  FLB_CHECK(static_cast<int64_t>(tl.size()) == c.N, op, ": target_lengths must be of size ",
            "batch_size ", c.N, ", but got ", tl.size(), " lengths");
  std::vector<int64_t> offsets(static_cast<size_t>(c.N));
  int64_t pos = 0;
  for (int64_t b = 0; b < c.N; ++b) {
    FLB_CHECK(tl[b] >= 0, op, ": expected target_lengths to have value at least 0, but got ", tl[b],
              " for sample ", b);
    FLB_CHECK(il[b] >= 0, op, ": expected input_lengths to have value at least 0, but got ", il[b],
              " for sample ", b);
    FLB_CHECK(il[b] <= c.T, op, ": expected input_lengths to have value at most ", c.T,
              " (the length of log_probs), but got ", il[b], " for sample ", b);
    c.S = std::max(c.S, tl[b]);
    offsets[b] = pos;
    pos += targets->dim() == 1 ? tl[b] : 0;
  }
  Tensor flat = contiguous(to_dtype(targets, ScalarType::Int64));
  if (targets->dim() == 1) {
    FLB_CHECK(targets->size(0) == pos, op, ": expected concatenated targets of size ", pos,
              " (the sum of target_lengths), but got size ", targets->size(0));
  } else {
    FLB_CHECK(targets->size(0) == c.N, op, ": expected padded targets with batch size ", c.N,
              ", but got targets of shape ", shape_str(targets->sizes()));
    FLB_CHECK(targets->size(1) >= c.S, op, ": expected padded targets with at least ", c.S,
              " columns (the longest target length), but got targets of shape ",
              shape_str(targets->sizes()));
    for (int64_t b = 0; b < c.N; ++b) offsets[b] = b * targets->size(1);
  }
  Tensor flat_host = cpu(flat);  // the targets are checked on the host
  const int64_t* tp = flat_host->data_as<int64_t>();
  for (int64_t b = 0; b < c.N; ++b)
    for (int64_t i = 0; i < tl[b]; ++i) {
      const int64_t v = tp[offsets[b] + i];
      FLB_CHECK(0 <= v && v < c.C, op, ": target value ", v, " (sample ", b, ", position ", i,
                ") is out of the label range [0, ", c.C, ")");
    }
  const Device dev = log_probs->device();
  c.log_probs = contiguous(log_probs);
  c.targets = flat;
  c.offsets = int64_tensor(offsets, dev);
  c.input_lengths = int64_tensor(std::vector<int64_t>(il.begin(), il.end()), dev);
  c.target_lengths = int64_tensor(std::vector<int64_t>(tl.begin(), tl.end()), dev);
  return c;
}

// The loss of a batched (T, N, C) call, before zero_infinity and reduction.
Tensor reduce_ctc(Tensor nll, IntList tl, int64_t reduction, bool zero_infinity, bool batched) {
  if (zero_infinity) {
    Tensor inf = scalar_tensor(Scalar(std::numeric_limits<double>::infinity()), nll->dtype());
    nll = where(eq(nll, inf, kNew), scalar_tensor(Scalar(0.0), nll->dtype()), nll, kNew);
  }
  if (reduction == 1) {
    Tensor len = to_dtype(int64_tensor(std::vector<int64_t>(tl.begin(), tl.end()), nll->device()),
                          nll->dtype());
    len = clamp_min(len, scalar_tensor(Scalar(1.0), nll->dtype()), kNew);
    return mean(div(nll, len, std::nullopt, kNew), std::nullopt, false, std::nullopt, kNew);
  }
  if (reduction == 2) return sum(nll, std::nullopt, false, std::nullopt, kNew);
  return batched ? nll : squeeze(nll, DimVector{0});
}

}  // namespace

std::tuple<Tensor, Tensor> _ctc_loss(const Tensor& log_probs, const Tensor& targets,
                                     IntList input_lengths, IntList target_lengths, int64_t blank,
                                     bool zero_infinity) {
  (void)zero_infinity;  // as in PyTorch, the forward keeps infinite losses; ctc_loss zeroes them
  Ctc c = prepare("_ctc_loss", log_probs, targets, input_lengths, target_lengths, blank);
  const ScalarType dt = c.log_probs->dtype();
  Tensor nll = empty({c.N}, dt, log_probs->device(), false);
  Tensor log_alpha = full({c.N, c.T, 2 * c.S + 1}, Scalar(-std::numeric_limits<double>::infinity()),
                          dt, log_probs->device(), false);
  kernel<kernels::_ctc_loss>(log_probs->device())(nll, log_alpha, c.log_probs, c.targets, c.offsets,
                                                  c.input_lengths, c.target_lengths, blank);
  return {nll, log_alpha};
}

std::tuple<Tensor, Tensor> _ctc_loss_Tensor(const Tensor& log_probs, const Tensor& targets,
                                            const Tensor& input_lengths,
                                            const Tensor& target_lengths, int64_t blank,
                                            bool zero_infinity) {
  return _ctc_loss(log_probs, targets, lengths_of(input_lengths, "input_lengths"),
                   lengths_of(target_lengths, "target_lengths"), blank, zero_infinity);
}

Tensor _ctc_loss_backward(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                          IntList input_lengths, IntList target_lengths,
                          const Tensor& neg_log_likelihood, const Tensor& log_alpha, int64_t blank,
                          bool zero_infinity) {
  const char* op = "_ctc_loss_backward";
  Ctc c = prepare(op, log_probs, targets, input_lengths, target_lengths, blank);
  const ScalarType dt = c.log_probs->dtype();
  FLB_CHECK(neg_log_likelihood->sizes() == IntList({c.N}), op,
            ": expected neg_log_likelihood of shape (", c.N, "), but got ",
            shape_str(neg_log_likelihood->sizes()));
  FLB_CHECK(log_alpha->dim() == 3 && log_alpha->size(0) == c.N && log_alpha->size(1) == c.T &&
                log_alpha->size(2) >= 2 * c.S + 1,
            op, ": expected log_alpha of shape (", c.N, ", ", c.T, ", ", 2 * c.S + 1, "), but got ",
            shape_str(log_alpha->sizes()));
  // grad is per sample (N), or one value for all (a reduced loss).
  FLB_CHECK(grad->numel() == c.N || grad->numel() == 1, op, ": expected grad of ", c.N,
            " elements (one per sample), but got shape ", shape_str(grad->sizes()));
  Tensor go = grad->numel() == c.N ? reshape(grad, {c.N}) : expand(reshape(grad, {1}), {c.N});
  go = contiguous(to_dtype(go, dt));
  Tensor g = empty({c.T, c.N, c.C}, dt, log_probs->device(), false);
  kernel<kernels::_ctc_loss_backward>(log_probs->device())(
      g, go, c.log_probs, c.targets, c.offsets, c.input_lengths, c.target_lengths,
      contiguous(to_dtype(neg_log_likelihood, dt)), contiguous(to_dtype(log_alpha, dt)), blank,
      zero_infinity);
  return g;
}

Tensor _ctc_loss_backward_Tensor(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                                 const Tensor& input_lengths, const Tensor& target_lengths,
                                 const Tensor& neg_log_likelihood, const Tensor& log_alpha,
                                 int64_t blank, bool zero_infinity) {
  return _ctc_loss_backward(grad, log_probs, targets, lengths_of(input_lengths, "input_lengths"),
                            lengths_of(target_lengths, "target_lengths"), neg_log_likelihood,
                            log_alpha, blank, zero_infinity);
}

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntList input_lengths,
                IntList target_lengths, int64_t blank, int64_t reduction, bool zero_infinity) {
  FLB_CHECK_T(ValueError, reduction >= 0 && reduction <= 2, "ctc_loss: invalid reduction ",
              reduction, " (expected 0: none, 1: mean or 2: sum)");
  const bool batched = log_probs->dim() != 2;
  Tensor lp = batched ? log_probs : unsqueeze(log_probs, 1);
  Tensor tg = batched ? targets : unsqueeze(targets, 0);
  Tensor nll = std::get<0>(_ctc_loss(lp, tg, input_lengths, target_lengths, blank, zero_infinity));
  return reduce_ctc(nll, target_lengths, reduction, zero_infinity, batched);
}

Tensor ctc_loss_Tensor(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                       const Tensor& target_lengths, int64_t blank, int64_t reduction,
                       bool zero_infinity) {
  return ctc_loss(log_probs, targets, lengths_of(input_lengths, "input_lengths"),
                  lengths_of(target_lengths, "target_lengths"), blank, reduction, zero_infinity);
}

}  // namespace flambeau::ops
