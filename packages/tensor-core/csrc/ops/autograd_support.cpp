// detach and requires_grad_: the core's part of autograd.
#include "generated/ops.h"

namespace flambeau::ops {

Tensor detach(const Tensor& input) {
  return make_view(input, input->sizes(), input->strides(), input->offset());
}

Tensor detach_(const Tensor& self) {
  self->set_requires_grad(false);
  return self;
}

Tensor requires_grad_(const Tensor& self, bool requires_grad) {
  FLB_CHECK(!requires_grad || is_floating(self->dtype()) || is_complex(self->dtype()),
            "requires_grad_: only Tensors of floating point and complex dtype can require "
            "gradients, got ",
            dtype_name(self->dtype()));
  if (requires_grad && self->is_inference() && !inference_mode_enabled())
    fail_inference_requires_grad();
  self->set_requires_grad(requires_grad);
  return self;
}

}  // namespace flambeau::ops
