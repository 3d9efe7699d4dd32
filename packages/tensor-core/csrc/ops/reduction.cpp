// Frontends of reductions.
#include "generated/ops.h"
#include "ops/reduce_util.h"

namespace flambeau::ops {

Tensor sum(const Tensor& input, const std::optional<DimVector>& dim, bool keepdim,
           std::optional<ScalarType> dtype) {
  static const OperatorEntry& op = Dispatcher::op("sum");
  ScalarType t = dtype.value_or(is_integral(input->dtype(), true) ? ScalarType::Int64
                                                                   : input->dtype());
  Tensor src = to_dtype(input, t);
  return reduce(op, "sum", src, dim, keepdim, t, {});
}

}  // namespace flambeau::ops
