// Frontends of nll_loss and cross_entropy_loss. Inputs are (C), (N, C) or
// (N, C, d1, ...) with targets (), (N) or (N, d1, ...); kernels see them as
// (N, C, D). cross_entropy composes log_softmax over dim 1 with nll_loss
// (class indices) or a weighted sum (class probabilities), as PyTorch does,
// including its label smoothing.
#include "generated/kernels.h"
#include "generated/ops_comparison.h"
#include "generated/ops_nn_activation.h"
#include "generated/ops_nn_loss.h"
#include "generated/ops_pointwise.h"
#include "generated/ops_reduction.h"
#include "generated/ops_shape.h"
#include "generated/ops_tensor.h"
#include "ops/nn_kernels.h"

namespace flambeau::ops {

namespace {

const OutArg kNew = OutArg::none();

struct NllShape {
  int64_t n = 1, c = 1, d = 1;
};

NllShape check_nll(const Tensor& self, const Tensor& target, const Tensor& weight,
                   int64_t reduction, const char* name) {
  FLB_CHECK_T(ValueError, reduction >= 0 && reduction <= 2, name, ": ", reduction,
              " is not a valid value for reduction (0: none, 1: mean, 2: sum)");
  FLB_CHECK(self->dim() >= 1, name, ": input tensor should be 1D or more, got shape ",
            shape_str(self->sizes()));
  if (!is_floating(self->dtype())) fail_dtype(name, self->dtype());
  FLB_CHECK(target->dtype() == ScalarType::Int64, name,
            ": expected scalar type Long for target but found ", dtype_name(target->dtype()));
  NllShape s;
  if (self->dim() == 1) {
    FLB_CHECK(target->dim() == 0, name, ": 0D or 1D target tensor expected, multi-target not ",
              "supported (input of shape ", shape_str(self->sizes()), ", target of shape ",
              shape_str(target->sizes()), ")");
    s.c = self->size(0);
  } else {
    s.n = self->size(0);
    s.c = self->size(1);
    FLB_CHECK(target->dim() == self->dim() - 1, name, ": expected target of ", self->dim() - 1,
              " dims for input of shape ", shape_str(self->sizes()), ", got target of shape ",
              shape_str(target->sizes()));
    FLB_CHECK(target->size(0) == s.n, name, ": Expected input batch_size (", s.n,
              ") to match target batch_size (", target->size(0), ").");
    for (int64_t i = 2; i < self->dim(); ++i) {
      FLB_CHECK(target->size(i - 1) == self->size(i), name, ": expected target of shape ",
                "(N, d1, ...) matching input of shape ", shape_str(self->sizes()),
                ", got target of shape ", shape_str(target->sizes()));
      s.d *= self->size(i);
    }
  }
  FLB_CHECK(!weight || (weight->dim() == 1 && weight->numel() == s.c), name,
            ": weight tensor should be defined either for all ", s.c,
            " classes or no classes but got weight tensor of shape: ",
            shape_str(weight ? weight->sizes() : IntList{}));
  return s;
}

Tensor weight_as(const Tensor& weight, ScalarType t) {
  return weight ? contiguous(to_dtype(weight, t)) : Tensor();
}

}  // namespace

std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& self, const Tensor& target,
                                            const Tensor& weight, int64_t reduction,
                                            int64_t ignore_index) {
  NllShape s = check_nll(self, target, weight, reduction, "nll_loss_forward");
  const ScalarType t = self->dtype();
  Tensor out =
      reduction == 0 ? empty(target->sizes(), t, self->device()) : empty({}, t, self->device());
  Tensor total = empty({}, t, self->device());
  kernel<kernels::nll_loss_forward>(self->device())(out, total, contiguous(self),
                                                    contiguous(target), weight_as(weight, t), s.n,
                                                    s.c, s.d, reduction, ignore_index);
  return {out, total};
}

Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                         const Tensor& weight, int64_t reduction, int64_t ignore_index,
                         const Tensor& total_weight) {
  const char* name = "nll_loss_backward";
  NllShape s = check_nll(self, target, weight, reduction, name);
  const ScalarType t = self->dtype();
  Tensor g = to_dtype(grad_output, t);
  if (reduction == 0) {
    FLB_CHECK(g->sizes() == target->sizes(), name, ": grad_output of shape ", shape_str(g->sizes()),
              " does not match target of shape ", shape_str(target->sizes()));
  } else {
    FLB_CHECK(g->numel() == 1, name, ": Expected a single element grad_output tensor, but got ",
              "shape ", shape_str(g->sizes()));
    if (reduction == 1) g = div(g, to_dtype(total_weight, t), std::nullopt, kNew);
  }
  Tensor gi = empty(self->sizes(), t, self->device());
  kernel<kernels::nll_loss_backward>(self->device())(gi, contiguous(g), contiguous(target),
                                                     weight_as(weight, t), s.n, s.c, s.d, reduction,
                                                     ignore_index);
  return gi;
}

Tensor nll_loss(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                int64_t ignore_index) {
  return std::get<0>(nll_loss_forward(self, target, weight, reduction, ignore_index));
}

Tensor cross_entropy_loss(const Tensor& self, const Tensor& target, const Tensor& weight,
                          int64_t reduction, int64_t ignore_index, double label_smoothing) {
  const char* name = "cross_entropy_loss";
  FLB_CHECK(label_smoothing >= 0 && label_smoothing <= 1, name,
            ": label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
  FLB_CHECK_T(ValueError, reduction >= 0 && reduction <= 2, name, ": ", reduction,
              " is not a valid value for reduction (0: none, 1: mean, 2: sum)");
  FLB_CHECK(self->dim() >= 1, name, ": input tensor should be 1D or more, got shape ",
            shape_str(self->sizes()));
  const int64_t class_dim = self->dim() == 1 ? 0 : 1;
  const int64_t c = self->size(class_dim);
  Tensor logp = log_softmax(self, class_dim, std::nullopt);
  const ScalarType t = logp->dtype();
  // weight viewed along the class dim, for broadcasting against logp.
  Tensor wb;
  if (weight) {
    FLB_CHECK(
        weight->dim() == 1 && weight->numel() == c, name,
        ": weight tensor should be defined either for all ", c,
        " classes or no classes but got weight tensor of shape: ", shape_str(weight->sizes()));
    DimVector shape(self->dim(), 1);
    shape[class_dim] = c;
    wb = reshape(to_dtype(weight, t), shape);
  }
  const DimVector cdim{class_dim};
  if (is_floating(target->dtype())) {
    // Class probabilities: -(sum over classes of w * target * logp).
    FLB_CHECK(target->sizes() == self->sizes(), name, ": Expected target of shape ",
              shape_str(self->sizes()), " (class probabilities), got ", shape_str(target->sizes()));
    Tensor tp = to_dtype(target, t);
    if (label_smoothing > 0) {
      tp = add(mul(tp, scalar_tensor(Scalar(1 - label_smoothing), t), kNew),
               scalar_tensor(Scalar(label_smoothing / c), t), Scalar(1), kNew);
    }
    Tensor prod = mul(logp, tp, kNew);
    if (wb) prod = mul(prod, wb, kNew);
    Tensor loss = neg(sum(prod, cdim, false, std::nullopt, kNew), kNew);
    if (reduction == 0) return loss;
    Tensor total = sum(loss, std::nullopt, false, std::nullopt, kNew);
    if (reduction == 2) return total;
    const double batch = c == 0 ? 0.0 : static_cast<double>(self->numel() / c);
    return div(total, scalar_tensor(Scalar(batch), t), std::nullopt, kNew);
  }
  auto [nll, total_weight] = nll_loss_forward(logp, target, weight, reduction, ignore_index);
  if (label_smoothing <= 0) return nll;
  // Label smoothing adds ls/C times the (weighted) sum of -logp over classes,
  // zero at ignored targets, normalised like nll (by the counted weight for mean).
  Tensor lw = wb ? mul(logp, wb, kNew) : logp;
  Tensor smooth = neg(sum(lw, cdim, false, std::nullopt, kNew), kNew);
  Tensor ignored = eq(target, wrapped_scalar(Scalar(ignore_index)), kNew);
  smooth = where(ignored, scalar_tensor(Scalar(0.0), t), smooth, kNew);
  if (reduction == 2) {
    smooth = sum(smooth, std::nullopt, false, std::nullopt, kNew);
  } else if (reduction == 1) {
    smooth =
        div(sum(smooth, std::nullopt, false, std::nullopt, kNew), total_weight, std::nullopt, kNew);
  }
  return add(mul(nll, scalar_tensor(Scalar(1 - label_smoothing), t), kNew),
             mul(smooth, scalar_tensor(Scalar(label_smoothing / c), t), kNew), Scalar(1), kNew);
}

}  // namespace flambeau::ops
