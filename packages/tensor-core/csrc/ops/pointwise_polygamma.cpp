// Frontend of polygamma(n, input): elementwise over input (integers and bool
// compute in the default float type, as digamma), n a non-negative order.
#include "generated/kernels.h"
#include "generated/ops_pointwise.h"

namespace flambeau::ops {

Tensor polygamma(int64_t n, const Tensor& input, const OutArg& out) {
  FLB_CHECK(n >= 0, "polygamma(n, x) does not support negative n, got n = ", n);
  return elementwise(handle<kernels::polygamma>(), {"polygamma", Promote::IntToFloat, kFloatTypes},
                     {input}, {Scalar(n)}, out);
}

}  // namespace flambeau::ops
