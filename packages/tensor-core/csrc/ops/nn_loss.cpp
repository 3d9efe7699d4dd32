// Frontends of the pointwise losses: the per-element loss (an elementwise
// kernel of cpu/nn_loss_kernels.cpp; inputs broadcast as in PyTorch), an
// optional weight, then the reduction (0 none, 1 mean, 2 sum). Backward
// kernels get the reduction's scale (1/numel for mean) as their last arg.
#include "generated/kernels.h"
#include "generated/ops_nn_loss.h"
#include "generated/ops_pointwise.h"
#include "generated/ops_reduction.h"

namespace flambeau::ops {

namespace {

void check_reduction(int64_t reduction, const char* name) {
  FLB_CHECK_T(ValueError, reduction >= 0 && reduction <= 2, name, ": ", reduction,
              " is not a valid value for reduction (0: none, 1: mean, 2: sum)");
}

Tensor reduce_loss(const Tensor& loss, int64_t reduction) {
  if (reduction == 1) return mean(loss, std::nullopt, false, std::nullopt, OutArg::none());
  if (reduction == 2) return sum(loss, std::nullopt, false, std::nullopt, OutArg::none());
  return loss;
}

template <class K>
Tensor pointwise(std::initializer_list<Tensor> inputs, std::initializer_list<Scalar> args) {
  const char* name = K::name;
  const auto& op = handle<K>();
  return elementwise(op, {name, Promote::Default, kFloatTypes}, inputs, args, OutArg::none());
}

// 1/numel of the broadcast shape of input and target for mean, else 1.
Scalar norm_of(const Tensor& self, const Tensor& target, int64_t reduction, const char* name) {
  if (reduction != 1) return Scalar(1.0);
  DimVector shape = broadcast_shapes(self->sizes(), target->sizes(), name);
  return Scalar(1.0 / static_cast<double>(numel_of(shape)));
}

Tensor weighted(const Tensor& loss, const Tensor& weight) {
  return weight ? mul(loss, weight, OutArg::none()) : loss;
}

}  // namespace

Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  check_reduction(reduction, "mse_loss");
  return reduce_loss(pointwise<kernels::mse_loss>({self, target}, {}), reduction);
}
Tensor mse_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                         int64_t reduction) {
  check_reduction(reduction, "mse_loss_backward");
  return pointwise<kernels::mse_loss_backward>(
      {grad_output, self, target}, {norm_of(self, target, reduction, "mse_loss_backward")});
}

Tensor l1_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  check_reduction(reduction, "l1_loss");
  return reduce_loss(abs(sub(self, target, Scalar(1), OutArg::none()), OutArg::none()), reduction);
}

Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, int64_t reduction, double beta) {
  check_reduction(reduction, "smooth_l1_loss");
  FLB_CHECK(beta >= 0, "smooth_l1_loss: smooth_l1_loss does not support negative values for beta.");
  if (beta == 0) return l1_loss(self, target, reduction);
  return reduce_loss(pointwise<kernels::smooth_l1_loss>({self, target}, {Scalar(beta)}), reduction);
}
Tensor smooth_l1_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                               int64_t reduction, double beta) {
  check_reduction(reduction, "smooth_l1_loss_backward");
  FLB_CHECK(beta >= 0, "smooth_l1_loss_backward: beta must be non-negative, got ", beta);
  return pointwise<kernels::smooth_l1_loss_backward>(
      {grad_output, self, target},
      {Scalar(beta), norm_of(self, target, reduction, "smooth_l1_loss_backward")});
}

Tensor huber_loss(const Tensor& self, const Tensor& target, int64_t reduction, double delta) {
  check_reduction(reduction, "huber_loss");
  FLB_CHECK(delta > 0, "huber_loss: huber_loss does not support non-positive values for delta.");
  return reduce_loss(pointwise<kernels::huber_loss>({self, target}, {Scalar(delta)}), reduction);
}
Tensor huber_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                           int64_t reduction, double delta) {
  check_reduction(reduction, "huber_loss_backward");
  return pointwise<kernels::huber_loss_backward>(
      {grad_output, self, target},
      {Scalar(delta), norm_of(self, target, reduction, "huber_loss_backward")});
}

Tensor binary_cross_entropy(const Tensor& self, const Tensor& target, const Tensor& weight,
                            int64_t reduction) {
  check_reduction(reduction, "binary_cross_entropy");
  FLB_CHECK(self->sizes() == target->sizes(), "binary_cross_entropy: Using a target size ",
            shape_str(target->sizes()), " that is different to the input size ",
            shape_str(self->sizes()), " is deprecated. Please ensure they have the same size.");
  return reduce_loss(weighted(pointwise<kernels::binary_cross_entropy>({self, target}, {}), weight),
                     reduction);
}
Tensor binary_cross_entropy_backward(const Tensor& grad_output, const Tensor& self,
                                     const Tensor& target, const Tensor& weight,
                                     int64_t reduction) {
  check_reduction(reduction, "binary_cross_entropy_backward");
  Tensor g = pointwise<kernels::binary_cross_entropy_backward>(
      {grad_output, self, target},
      {norm_of(self, target, reduction, "binary_cross_entropy_backward")});
  return weighted(g, weight);
}

Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target,
                                        const Tensor& weight, const Tensor& pos_weight,
                                        int64_t reduction) {
  check_reduction(reduction, "binary_cross_entropy_with_logits");
  FLB_CHECK(self->sizes() == target->sizes(), "binary_cross_entropy_with_logits: Target size ",
            shape_str(target->sizes()), " must be the same as input size ",
            shape_str(self->sizes()));
  Tensor pw = pos_weight ? pos_weight : wrapped_scalar(Scalar(1.0));
  return reduce_loss(
      weighted(pointwise<kernels::binary_cross_entropy_with_logits>({self, target, pw}, {}),
               weight),
      reduction);
}

Tensor kl_div(const Tensor& self, const Tensor& target, int64_t reduction, bool log_target) {
  check_reduction(reduction, "kl_div");
  return reduce_loss(pointwise<kernels::kl_div>({self, target}, {Scalar(log_target ? 1.0 : 0.0)}),
                     reduction);
}

}  // namespace flambeau::ops
