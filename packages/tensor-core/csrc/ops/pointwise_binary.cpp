// Frontends of binary arithmetic: argument checks, then the shared elementwise
// machinery in ops/common.cpp.
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
}  // namespace

Tensor add(const Tensor& input, const Tensor& other, const Scalar& alpha, const OutArg& out) {
  static const OperatorEntry& op = Dispatcher::op("add");
  check_alpha("add", input, other, alpha);
  return elementwise(op, {"add"}, {input, other}, {alpha}, out);
}

Tensor sub(const Tensor& input, const Tensor& other, const Scalar& alpha, const OutArg& out) {
  static const OperatorEntry& op = Dispatcher::op("sub");
  FLB_CHECK(input->dtype() != ScalarType::Bool || other->dtype() != ScalarType::Bool,
            "sub: subtraction, the - operator, with two bool tensors is not supported; use "
            "the ^ or logical_xor() operator instead");
  check_alpha("sub", input, other, alpha);
  return elementwise(op, {"sub", Promote::Default, kRealTypes | kComplexTypes}, {input, other},
                     {alpha}, out);
}

Tensor rsub(const Tensor& input, const Tensor& other, const Scalar& alpha) {
  return sub(other, input, alpha, OutArg::none());
}

Tensor mul(const Tensor& input, const Tensor& other, const OutArg& out) {
  static const OperatorEntry& op = Dispatcher::op("mul");
  return elementwise(op, {"mul"}, {input, other}, {}, out);
}

}  // namespace flambeau::ops
