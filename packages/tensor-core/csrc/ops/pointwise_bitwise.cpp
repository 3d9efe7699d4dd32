// Frontends of bitwise operators (integers and bool) and logical operators
// (any dtype; the result is bool unless an out= / in-place tensor says otherwise).
#include "generated/kernels.h"
#include "generated/ops.h"

namespace flambeau::ops {

namespace {
constexpr uint32_t kIntBool = kIntTypes | kBoolTypes;
}  // namespace

#define FLB_BITWISE_OP(NAME, DTYPES)                                                               \
  Tensor NAME(const Tensor& input, const Tensor& other, const OutArg& out) {                       \
    return elementwise(handle<kernels::NAME>(), {#NAME, Promote::Default, DTYPES}, {input, other}, \
                       {}, out);                                                                   \
  }
FLB_BITWISE_OP(bitwise_and, kIntBool)
FLB_BITWISE_OP(bitwise_or, kIntBool)
FLB_BITWISE_OP(bitwise_xor, kIntBool)
FLB_BITWISE_OP(bitwise_left_shift, kIntTypes)
FLB_BITWISE_OP(bitwise_right_shift, kIntTypes)
#undef FLB_BITWISE_OP

Tensor bitwise_not(const Tensor& input, const OutArg& out) {
  return elementwise(handle<kernels::bitwise_not>(), {"bitwise_not", Promote::Default, kIntBool},
                     {input}, {}, out);
}

#define FLB_LOGICAL_OP(NAME)                                                                   \
  Tensor NAME(const Tensor& input, const Tensor& other, const OutArg& out) {                   \
    return elementwise(handle<kernels::NAME>(), {#NAME, Promote::BoolOut}, {input, other}, {}, \
                       out);                                                                   \
  }
FLB_LOGICAL_OP(logical_and)
FLB_LOGICAL_OP(logical_or)
FLB_LOGICAL_OP(logical_xor)
#undef FLB_LOGICAL_OP

Tensor logical_not(const Tensor& input, const OutArg& out) {
  return elementwise(handle<kernels::logical_not>(), {"logical_not", Promote::BoolOut}, {input}, {},
                     out);
}

}  // namespace flambeau::ops
