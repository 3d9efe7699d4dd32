// Frontends of comparisons, value tests (isnan, isclose, equal, ...) and where.
#include "generated/kernels.h"
#include "generated/ops.h"

namespace flambeau::ops {

namespace {
constexpr uint32_t kOrdered = kRealTypes | kBoolTypes;

// Whether every element of a bool tensor is true. Read on the host: a plugin
// device's memory is copied over first (it need not be host memory).
bool all_true(const Tensor& t) {
  Tensor h = t->device().is_cpu() ? t : cpu(t);
  Tensor c = h->is_contiguous() ? h : contiguous_copy(h);
  const bool* p = c->data_as<bool>();
  for (int64_t i = 0, n = c->numel(); i < n; ++i)
    if (!p[i]) return false;
  return true;
}
}  // namespace

#define FLB_COMPARE_OP(NAME, DTYPES)                                                               \
  Tensor NAME(const Tensor& input, const Tensor& other, const OutArg& out) {                       \
    return elementwise(handle<kernels::NAME>(), {#NAME, Promote::BoolOut, DTYPES}, {input, other}, \
                       {}, out);                                                                   \
  }
FLB_COMPARE_OP(eq, kAllTypes)
FLB_COMPARE_OP(ne, kAllTypes)
FLB_COMPARE_OP(lt, kOrdered)
FLB_COMPARE_OP(le, kOrdered)
FLB_COMPARE_OP(gt, kOrdered)
FLB_COMPARE_OP(ge, kOrdered)
#undef FLB_COMPARE_OP

Tensor not_equal(const Tensor& input, const Tensor& other, const OutArg& out) {
  return ne(input, other, out);
}
Tensor less(const Tensor& input, const Tensor& other, const OutArg& out) {
  return lt(input, other, out);
}
Tensor less_equal(const Tensor& input, const Tensor& other, const OutArg& out) {
  return le(input, other, out);
}
Tensor greater(const Tensor& input, const Tensor& other, const OutArg& out) {
  return gt(input, other, out);
}
Tensor greater_equal(const Tensor& input, const Tensor& other, const OutArg& out) {
  return ge(input, other, out);
}

Tensor isclose(const Tensor& input, const Tensor& other, double rtol, double atol, bool equal_nan) {
  FLB_CHECK(input->dtype() == other->dtype() || other->is_wrapped_number(),
            "isclose(): expected both inputs to have same dtype, but got ",
            dtype_name(input->dtype()), " and ", dtype_name(other->dtype()));
  FLB_CHECK(rtol >= 0, "isclose(): rtol must be greater than or equal to zero, but got ", rtol);
  FLB_CHECK(atol >= 0, "isclose(): atol must be greater than or equal to zero, but got ", atol);
  Tensor o = other->is_wrapped_number() ? to_dtype(other, input->dtype()) : other;
  return elementwise(handle<kernels::isclose>(), {"isclose", Promote::BoolOut}, {input, o},
                     {Scalar(rtol), Scalar(atol), Scalar(equal_nan)}, OutArg::none());
}

bool allclose(const Tensor& input, const Tensor& other, double rtol, double atol, bool equal_nan) {
  return all_true(isclose(input, other, rtol, atol, equal_nan));
}

bool equal(const Tensor& input, const Tensor& other) {
  if (input->sizes() != other->sizes()) return false;
  return all_true(eq(input, other, OutArg::none()));
}

#define FLB_TEST_OP(NAME, DTYPES)                                                               \
  Tensor NAME(const Tensor& input) {                                                            \
    return elementwise(handle<kernels::NAME>(), {#NAME, Promote::BoolOut, DTYPES}, {input}, {}, \
                       OutArg::none());                                                         \
  }
FLB_TEST_OP(isnan, kAllTypes)
FLB_TEST_OP(isinf, kAllTypes)
FLB_TEST_OP(isfinite, kAllTypes)
FLB_TEST_OP(isreal, kAllTypes)
#undef FLB_TEST_OP

Tensor isposinf(const Tensor& input, const OutArg& out) {
  FLB_CHECK(!is_complex(input->dtype()), "isposinf does not support complex inputs.");
  return elementwise(handle<kernels::isposinf>(), {"isposinf", Promote::BoolOut, kOrdered}, {input},
                     {}, out);
}

Tensor isneginf(const Tensor& input, const OutArg& out) {
  FLB_CHECK(!is_complex(input->dtype()), "isneginf does not support complex inputs.");
  return elementwise(handle<kernels::isneginf>(), {"isneginf", Promote::BoolOut, kOrdered}, {input},
                     {}, out);
}

Tensor where(const Tensor& condition, const Tensor& input, const Tensor& other, const OutArg& out) {
  FLB_CHECK(condition->dtype() == ScalarType::Bool || condition->dtype() == ScalarType::UInt8,
            "where expected condition to be a boolean tensor, but got a tensor with dtype ",
            dtype_name(condition->dtype()));
  Tensor operands[] = {condition, input, other};  // a 0-dim CPU tensor goes along, as a number
  Device device = operand_device(Span<Tensor>(operands, 3), "where");
  ScalarType result = result_type({&input, &other});
  DimVector shape = broadcast_shapes(condition->sizes(), input->sizes(), "where");
  shape = broadcast_shapes(shape, other->sizes(), "where");
  Tensor dest = prepare_out(out, shape, result, device, "where");
  Tensor target = dest->dtype() == result ? dest : empty(shape, result, device);
  Tensor in[] = {expand_to(to_dtype(condition, ScalarType::Bool), shape, "where"),
                 expand_to(to_dtype(input, result), shape, "where"),
                 expand_to(to_dtype(other, result), shape, "where")};
  if (target->numel() > 0) kernel<kernels::where>(device)(target, Span<Tensor>(in, 3), {});
  if (target != dest) copy_into(dest, target);
  return dest;
}

std::vector<Tensor> where_condition(const Tensor& condition) {
  return nonzero_tuple(condition, /*as_tuple=*/true);
}

}  // namespace flambeau::ops
