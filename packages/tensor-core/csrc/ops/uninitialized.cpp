#include "ops/uninitialized.h"

#include <cstdint>
#include <limits>

#include "generated/ops_tensor.h"

namespace flambeau::ops {

namespace {
Scalar uninitialized_value(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Bool:
      return Scalar(true);
    case ScalarType::UInt8:
      return Scalar(int64_t{std::numeric_limits<uint8_t>::max()});
    case ScalarType::Int8:
      return Scalar(int64_t{std::numeric_limits<int8_t>::max()});
    case ScalarType::Int16:
      return Scalar(int64_t{std::numeric_limits<int16_t>::max()});
    case ScalarType::Int32:
      return Scalar(int64_t{std::numeric_limits<int32_t>::max()});
    case ScalarType::Int64:
      return Scalar(std::numeric_limits<int64_t>::max());
    default:  // floating and complex
      return Scalar(std::numeric_limits<double>::quiet_NaN());
  }
}
}  // namespace

void fill_uninitialized(const Tensor& t) {
  const int64_t n = static_cast<int64_t>(t->storage()->nbytes() / t->itemsize());
  if (n == 0) return;
  fill_(make_view(t, {n}, {1}, 0), uninitialized_value(t->dtype()));
}

void fill_uninitialized_elements(const Tensor& t) {
  if (t->numel() > 0) fill_(t, uninitialized_value(t->dtype()));
}

}  // namespace flambeau::ops
