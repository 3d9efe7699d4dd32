// Frontends of binary arithmetic: argument checks, then the shared elementwise
// machinery in ops/common.cpp.
#include "generated/kernels.h"
#include "generated/ops.h"

namespace flambeau::ops {

namespace {
void check_alpha(const char* op, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  ScalarType t = result_type({&a, &b});
  FLB_CHECK(!(is_integral(t, true) && !alpha.is_integral()), op,
            ": for integral input tensors, argument alpha must not be a floating point number");
  FLB_CHECK(!(t == ScalarType::Bool && !alpha.is_bool() && alpha.is_integral() &&
              alpha.to_int() != 1 && alpha.to_int() != 0),
            op, ": boolean alpha only supported for Tensors of type bool");
}

// Rounding modes of div, passed to the "div" kernel as its one argument.
enum DivMode : int64_t { kTrue = 0, kTrunc = 1, kFloor = 2 };

Tensor div_mode(const char* name, const Tensor& a, const Tensor& b, DivMode mode,
                const OutArg& out) {
  if (mode == kTrue) {
    return elementwise(handle<kernels::div>(),
                       {name, Promote::IntToFloat, kFloatTypes | kComplexTypes}, {a, b},
                       {Scalar(int64_t(mode))}, out);
  }
  return elementwise(handle<kernels::div>(), {name, Promote::Default, kRealTypes}, {a, b},
                     {Scalar(int64_t(mode))}, out);
}
}  // namespace

Tensor add(const Tensor& input, const Tensor& other, const Scalar& alpha, const OutArg& out) {
  check_alpha("add", input, other, alpha);
  return elementwise(handle<kernels::add>(), {"add"}, {input, other}, {alpha}, out);
}

Tensor sub(const Tensor& input, const Tensor& other, const Scalar& alpha, const OutArg& out) {
  FLB_CHECK(input->dtype() != ScalarType::Bool && other->dtype() != ScalarType::Bool,
            "sub: Subtraction, the `-` operator, with a bool tensor is not supported. If you "
            "are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  check_alpha("sub", input, other, alpha);
  return elementwise(handle<kernels::sub>(), {"sub", Promote::Default, kRealTypes | kComplexTypes},
                     {input, other}, {alpha}, out);
}

Tensor rsub(const Tensor& input, const Tensor& other, const Scalar& alpha) {
  return sub(other, input, alpha, OutArg::none());
}

Tensor mul(const Tensor& input, const Tensor& other, const OutArg& out) {
  return elementwise(handle<kernels::mul>(), {"mul"}, {input, other}, {}, out);
}

Tensor div(const Tensor& input, const Tensor& other,
           const std::optional<std::string>& rounding_mode, const OutArg& out) {
  if (!rounding_mode) return div_mode("div", input, other, kTrue, out);
  if (*rounding_mode == "trunc") return div_mode("div", input, other, kTrunc, out);
  if (*rounding_mode == "floor") return div_mode("div", input, other, kFloor, out);
  fail<ValueError>("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '",
                   *rounding_mode, "'");
}

Tensor true_divide(const Tensor& input, const Tensor& other, const OutArg& out) {
  return div_mode("true_divide", input, other, kTrue, out);
}

Tensor floor_divide(const Tensor& input, const Tensor& other, const OutArg& out) {
  return div_mode("floor_divide", input, other, kFloor, out);
}

Tensor remainder(const Tensor& input, const Tensor& other, const OutArg& out) {
  return elementwise(handle<kernels::remainder>(), {"remainder", Promote::Default, kRealTypes},
                     {input, other}, {}, out);
}

Tensor fmod(const Tensor& input, const Tensor& other, const OutArg& out) {
  return elementwise(handle<kernels::fmod>(), {"fmod", Promote::Default, kRealTypes},
                     {input, other}, {}, out);
}

Tensor pow(const Tensor& input, const Tensor& exponent, const OutArg& out) {
  ScalarType t = result_type({&input, &exponent});
  if (is_integral(t, true) && exponent->is_wrapped_number() &&
      exponent->dtype() == ScalarType::Int64) {
    // A Python int exponent (the Tensor-Scalar overload in PyTorch).
    FLB_CHECK(*exponent->data_as<int64_t>() >= 0,
              "Integers to negative integer powers are not allowed.");
  }
  // bool ** bool only with a Python bool exponent (PyTorch's Tensor-Scalar kernel).
  if (t == ScalarType::Bool && !exponent->is_wrapped_number()) fail_dtype("pow", t);
  return elementwise(handle<kernels::pow>(), {"pow"}, {input, exponent}, {}, out);
}

Tensor square(const Tensor& input, const OutArg& out) {
  // As pow(input, 2): bool squares in int64.
  if (input->dtype() == ScalarType::Bool) {
    Tensor i = to_dtype(input, ScalarType::Int64);
    return mul(i, i, out);
  }
  return mul(input, input, out);
}

}  // namespace flambeau::ops
