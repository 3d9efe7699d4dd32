// Frontends of clamp, lerp, addcmul/addcdiv, the min/max family and the
// float-only binary functions (hypot, atan2, logaddexp, copysign).
#include "generated/kernels.h"
#include "generated/ops.h"

namespace flambeau::ops {

namespace {
template <class K>
Tensor binary(Promote promote, uint32_t dtypes, const Tensor& a, const Tensor& b,
              const OutArg& out) {
  const char* name = K::name;
  return elementwise(handle<K>(), {name, promote, dtypes}, {a, b}, {}, out);
}
}  // namespace

Tensor clamp(const Tensor& input, const Tensor& min, const Tensor& max, const OutArg& out) {
  FLB_CHECK(min || max, "clamp: At least one of 'min' or 'max' must not be None");
  FLB_CHECK(!is_complex(input->dtype()), "clamp is not supported for complex types");
  if (!max) return clamp_min(input, min, out);
  if (!min) return clamp_max(input, max, out);
  return elementwise(handle<kernels::clamp>(), {"clamp", Promote::Default, kRealTypes | kBoolTypes},
                     {input, min, max}, {}, out);
}

Tensor clip(const Tensor& input, const Tensor& min, const Tensor& max, const OutArg& out) {
  return clamp(input, min, max, out);
}

Tensor clamp_min(const Tensor& input, const Tensor& min, const OutArg& out) {
  FLB_CHECK(!is_complex(input->dtype()), "clamp is not supported for complex types");
  return binary<kernels::clamp_min>(Promote::Default, kRealTypes | kBoolTypes, input, min, out);
}

Tensor clamp_max(const Tensor& input, const Tensor& max, const OutArg& out) {
  FLB_CHECK(!is_complex(input->dtype()), "clamp is not supported for complex types");
  return binary<kernels::clamp_max>(Promote::Default, kRealTypes | kBoolTypes, input, max, out);
}

Tensor lerp(const Tensor& input, const Tensor& end, const Tensor& weight, const OutArg& out) {
  // No promotion of integer inputs (a Python float weight would otherwise promote them).
  if (!is_floating(input->dtype()) && !is_complex(input->dtype())) {
    fail_dtype("lerp", input->dtype());
  }
  FLB_CHECK(input->dtype() == end->dtype(), "lerp: expected dtype ", dtype_name(input->dtype()),
            " for `end` but got dtype ", dtype_name(end->dtype()));
  FLB_CHECK(weight->is_wrapped_number() || weight->dtype() == input->dtype(),
            "lerp: expected dtype ", dtype_name(input->dtype()), " for `weight` but got dtype ",
            dtype_name(weight->dtype()));
  return elementwise(handle<kernels::lerp>(),
                     {"lerp", Promote::Default, kFloatTypes | kComplexTypes}, {input, end, weight},
                     {}, out);
}

Tensor addcmul(const Tensor& input, const Tensor& tensor1, const Tensor& tensor2,
               const Scalar& value, const OutArg& out) {
  ScalarType t = result_type({&input, &tensor1, &tensor2});
  FLB_CHECK(!(is_integral(t, true) && !value.is_integral()),
            "addcmul: for integral input tensors, argument value must not be a floating point "
            "number");
  return elementwise(handle<kernels::addcmul>(),
                     {"addcmul", Promote::Default, kRealTypes | kComplexTypes},
                     {input, tensor1, tensor2}, {value}, out);
}

Tensor addcdiv(const Tensor& input, const Tensor& tensor1, const Tensor& tensor2,
               const Scalar& value, const OutArg& out) {
  FLB_CHECK(!(is_integral(tensor1->dtype(), true) && is_integral(tensor2->dtype(), true)),
            "addcdiv: Integer division with addcdiv is no longer supported, and in a future "
            "release addcdiv will perform a true division of tensor1 and tensor2. The "
            "historic addcdiv behavior can be implemented as (input + value * "
            "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input "
            "+ value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is "
            "just the latter implementation: (input + value * tensor1 / tensor2), for all "
            "dtypes.");
  return elementwise(handle<kernels::addcdiv>(),
                     {"addcdiv", Promote::Default, kFloatTypes | kComplexTypes},
                     {input, tensor1, tensor2}, {value}, out);
}

#define FLB_MINMAX_OP(NAME)                                                                     \
  Tensor NAME(const Tensor& input, const Tensor& other, const OutArg& out) {                    \
    FLB_CHECK(!is_complex(input->dtype()) && !is_complex(other->dtype()), #NAME,                \
              " not implemented for complex tensors.");                                         \
    return binary<kernels::NAME>(Promote::Default, kRealTypes | kBoolTypes, input, other, out); \
  }
FLB_MINMAX_OP(maximum)
FLB_MINMAX_OP(minimum)
FLB_MINMAX_OP(fmax)
FLB_MINMAX_OP(fmin)
#undef FLB_MINMAX_OP

Tensor hypot(const Tensor& input, const Tensor& other, const OutArg& out) {
  return binary<kernels::hypot>(Promote::Default, kFloatTypes, input, other, out);
}
Tensor atan2(const Tensor& input, const Tensor& other, const OutArg& out) {
  return binary<kernels::atan2>(Promote::IntToFloat, kFloatTypes, input, other, out);
}
Tensor arctan2(const Tensor& input, const Tensor& other, const OutArg& out) {
  return atan2(input, other, out);
}
Tensor logaddexp(const Tensor& input, const Tensor& other, const OutArg& out) {
  return binary<kernels::logaddexp>(Promote::Default, kFloatTypes | kComplexTypes, input, other,
                                    out);
}
Tensor logaddexp2(const Tensor& input, const Tensor& other, const OutArg& out) {
  return binary<kernels::logaddexp2>(Promote::Default, kFloatTypes, input, other, out);
}
Tensor copysign(const Tensor& input, const Tensor& other, const OutArg& out) {
  return binary<kernels::copysign>(Promote::IntToFloat, kFloatTypes, input, other, out);
}

}  // namespace flambeau::ops
