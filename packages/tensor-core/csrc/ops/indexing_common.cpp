// Frontend helpers shared by the indexing operators (see ops/indexing_util.h).
#include "generated/ops_indexing.h"
#include "generated/ops_tensor.h"
#include "ops/indexing_util.h"

namespace flambeau {

void fail_index_bounds(int64_t index, int64_t dim, int64_t size) {
  fail<IndexError>("index ", index, " is out of bounds for dimension ", dim, " with size ", size);
}

namespace indexing {

Tensor target_for(const Tensor& input, const OutArg& out, const char* op) {
  if (out.inplace) {
    prepare_out(out, out.tensor->sizes(), out.tensor->dtype(), out.tensor->device(), op);
    return out.tensor;
  }
  return contiguous_copy(input);
}

Tensor finish(const Tensor& result, const OutArg& out, const char* op) {
  if (!out.given() || out.inplace) return result;
  FLB_CHECK(out.tensor->dtype() == result->dtype(), op, ": expected out= to have dtype ",
            dtype_name(result->dtype()), ", but got ", dtype_name(out.tensor->dtype()));
  return write_out(out, result, op);
}

Tensor long_index(const Tensor& index, const char* op, bool allow_int32) {
  ScalarType t = index->dtype();
  if (t == ScalarType::Int64) return index;
  if (allow_int32 && t == ScalarType::Int32) return to_dtype(index, ScalarType::Int64);
  fail(op, "(): Expected dtype ", allow_int32 ? "int32 or int64" : "int64", " for index, but got ",
       dtype_name(t));
}

Tensor as_1d(const Tensor& t) {
  if (t->dim() != 0) return t;
  return make_view(t, DimVector{1}, DimVector{1}, t->offset());
}

Scalar scalar_value(const Tensor& value, const char* op) {
  FLB_CHECK(value->dim() == 0, op,
            " only supports a 0-dimensional value tensor, but got tensor "
            "with ",
            value->dim(), " dimension(s).");
  return visit_dtype<kAllTypes>(value->dtype(), op, [&](auto tag) -> Scalar {
    using T = typename decltype(tag)::type;
    T v = *ops::cpu(value)->data_as<T>();  // (a device's value is copied to the host)
    if constexpr (std::is_same_v<T, bool>) {
      return Scalar(v);
    } else if constexpr (is_complex_t<T>::value) {
      return Scalar(convert<c128>(v));
    } else if constexpr (std::is_integral_v<T>) {
      return Scalar(static_cast<int64_t>(v));
    } else {
      return Scalar(convert<double>(v));
    }
  });
}

Tensor along_dim_view(const Tensor& t, IntList sizes, int64_t dim) {
  DimVector strides(t->strides());
  strides[dim] = 0;
  return make_view(t, sizes, strides, t->offset());
}

Tensor index_along(const Tensor& index, IntList sizes, int64_t dim) {
  DimVector strides(sizes.size(), 0);
  strides[dim] = index->dim() == 0 ? 0 : index->strides()[0];
  return make_view(index, sizes, strides, index->offset());
}

}  // namespace indexing
}  // namespace flambeau
