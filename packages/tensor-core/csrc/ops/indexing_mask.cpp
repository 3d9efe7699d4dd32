// Frontends of the boolean-mask operators: masked_fill, masked_select,
// masked_scatter. Masks are bool tensors broadcast against the input.
#include "generated/kernels.h"
#include "generated/ops_indexing.h"
#include "generated/ops_tensor.h"
#include "ops/indexing_util.h"

namespace flambeau::ops {

namespace {

void check_mask(const Tensor& mask, const char* op) {
  FLB_CHECK(mask->dtype() == ScalarType::Bool, op,
            " only supports boolean masks, but got mask with dtype ", dtype_name(mask->dtype()));
}

// Where an in-place or out-of-place masked op writes: self, whose shape the
// mask must broadcast to, or a copy of input broadcast with the mask.
Tensor masked_target(const Tensor& input, const Tensor& mask, const OutArg& out, const char* op) {
  if (out.inplace) {
    expand_to(mask, input->sizes(), op);  // checks that the mask broadcasts to self
    return indexing::target_for(input, out, op);
  }
  DimVector shape = broadcast_shapes(input->sizes(), mask->sizes(), op);
  return contiguous_copy(expand_to(input, shape, op));
}

}  // namespace

Tensor masked_fill(const Tensor& input, const Tensor& mask, const Tensor& value,
                   const OutArg& out) {
  check_mask(mask, "masked_fill");
  Scalar v = indexing::scalar_value(value, "masked_fill");
  FLB_CHECK(!v.is_complex() || is_complex(input->dtype()),
            "masked_fill: cannot fill a tensor of dtype ", dtype_name(input->dtype()),
            " with a complex value");
  Tensor target = masked_target(input, mask, out, "masked_fill");
  if (target->numel() > 0) {
    kernel<kernels::masked_fill>(input->device())(
        target, expand_to(mask, target->sizes(), "masked_fill"), v);
  }
  return target;
}

Tensor masked_select(const Tensor& input, const Tensor& mask, const OutArg& out) {
  check_mask(mask, "masked_select");
  DimVector shape = broadcast_shapes(input->sizes(), mask->sizes(), "masked_select");
  Tensor in = contiguous(expand_to(input, shape, "masked_select"));
  Tensor m = contiguous(expand_to(mask, shape, "masked_select"));
  // Counted first, so that the result is allocated on the input's device (data-sized
  // results cross the plugin ABI in these two steps).
  const Device device = input->device();
  Tensor r = flambeau::empty(DimVector{kernel<kernels::_nonzero_count>(device)(m)}, input->dtype(),
                             device);
  if (r->numel() > 0) kernel<kernels::masked_select>(device)(r, in, m);
  return indexing::finish(r, out, "masked_select");
}

Tensor masked_scatter(const Tensor& input, const Tensor& mask, const Tensor& source,
                      const OutArg& out) {
  check_mask(mask, "masked_scatter");
  FLB_CHECK(input->dtype() == source->dtype(),
            "masked_scatter: expected self and source to have same dtypes but got ",
            dtype_name(input->dtype()), " and ", dtype_name(source->dtype()));
  Tensor target = masked_target(input, mask, out, "masked_scatter");
  Tensor src = contiguous(source);
  src = make_view(src, DimVector{src->numel()}, DimVector{1}, src->offset());
  if (target->numel() > 0) {
    kernel<kernels::masked_scatter>(input->device())(
        target, expand_to(mask, target->sizes(), "masked_scatter"), src);
  }
  return target;
}

}  // namespace flambeau::ops
