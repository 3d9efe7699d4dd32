// Frontends of max/min reductions: max/min (all, along a dim with indices, or
// elementwise against another tensor), amax/amin, argmax/argmin, aminmax.
#include "generated/kernels.h"
#include "generated/ops.h"
#include "ops/reduce_util.h"

namespace flambeau::ops {

namespace {

constexpr uint32_t kMinMaxTypes = kRealTypes | kBoolTypes;

void check_minmax_dtype(const Tensor& input, const char* name) {
  FLB_CHECK(!is_complex(input->dtype()), name, "(): does not support complex input (dtype ",
            dtype_name(input->dtype()), ")");
}

Tensor extreme(bool is_max, const Tensor& input, const std::optional<DimVector>& dim, bool keepdim,
               bool all_dims_error, const char* name, const OutArg& out) {
  static const auto& op_max = handle<kernels::amax>();
  static const auto& op_min = handle<kernels::amin>();
  check_minmax_dtype(input, name);
  ReduceShape r = reduce_shape(input, dim, keepdim, name);
  check_nonempty(input, r, all_dims_error, name);
  return reduce(is_max ? op_max : op_min, name, input, dim, keepdim, input->dtype(), {}, out);
}

// (values, indices) of the max/min along dim, or over the flattened input when
// dim is None (values then left null).
std::tuple<Tensor, Tensor> arg_reduce(bool is_max, const char* name, const Tensor& input,
                                      std::optional<int64_t> dim, bool keepdim, bool want_values) {
  static const auto& op_max = handle<kernels::argmax>();
  static const auto& op_min = handle<kernels::argmin>();
  check_minmax_dtype(input, name);
  Tensor src = input;
  int64_t d = 0;
  DimVector result_shape;
  if (!dim || input->dim() == 0) {
    if (dim) wrap_dim(*dim, input->dim(), name);
    FLB_CHECK_T(IndexError, input->numel() != 0 || dim, name,
                "(): Expected reduction dim to be specified for input.numel() == 0.");
    src = reshape(input, DimVector{input->numel()});
    if (keepdim) result_shape.resize(static_cast<size_t>(input->dim()), 1);
  } else {
    d = wrap_dim(*dim, input->dim(), name);
    FLB_CHECK_T(IndexError, input->sizes()[d] != 0, name, "(): Expected reduction dim ", d,
                " to have non-zero size.");
  }
  ReduceShape r = reduce_shape(src, DimVector{d}, keepdim, name);
  if (dim && input->dim() > 0) result_shape = r.out_shape;
  Tensor indices = empty(r.out_shape, ScalarType::Int64, input->device());
  Tensor values = want_values ? empty(r.out_shape, input->dtype(), input->device()) : Tensor();
  if (indices->numel() > 0 && src->numel() > 0) {
    kernel_for(is_max ? op_max : op_min, input->device())(values ? keep_view(values, r) : Tensor(),
                                                          keep_view(indices, r), src, d);
  }
  auto shaped = [&](const Tensor& t) {
    return t ? make_view(t, result_shape, contiguous_strides(result_shape), 0) : t;
  };
  return {shaped(values), shaped(indices)};
}

Tensor arg_out(bool is_max, const char* name, const Tensor& input, std::optional<int64_t> dim,
               bool keepdim, const OutArg& out) {
  Tensor idx = std::get<1>(arg_reduce(is_max, name, input, dim, keepdim, false));
  if (!out.given()) return idx;
  Tensor dest = prepare_out(out, idx->sizes(), ScalarType::Int64, input->device(), name);
  copy_into(dest, idx);
  return dest;
}

Tensor binary(bool is_max, const Tensor& input, const Tensor& other, const OutArg& out) {
  static const auto& op_max = handle<kernels::max_other>();
  static const auto& op_min = handle<kernels::min_other>();
  const char* name = is_max ? "max" : "min";
  FLB_CHECK(!is_complex(input->dtype()) && !is_complex(other->dtype()), name,
            "(): does not support complex inputs");
  return elementwise(is_max ? op_max : op_min, {name, Promote::Default, kMinMaxTypes},
                     {input, other}, {}, out);
}

}  // namespace

Tensor max(const Tensor& input) {
  return extreme(true, input, std::nullopt, false, true, "max", OutArg::none());
}
Tensor min(const Tensor& input) {
  return extreme(false, input, std::nullopt, false, true, "min", OutArg::none());
}
std::tuple<Tensor, Tensor> max_dim(const Tensor& input, int64_t dim, bool keepdim) {
  return arg_reduce(true, "max", input, dim, keepdim, true);
}
std::tuple<Tensor, Tensor> min_dim(const Tensor& input, int64_t dim, bool keepdim) {
  return arg_reduce(false, "min", input, dim, keepdim, true);
}
Tensor max_other(const Tensor& input, const Tensor& other, const OutArg& out) {
  return binary(true, input, other, out);
}
Tensor min_other(const Tensor& input, const Tensor& other, const OutArg& out) {
  return binary(false, input, other, out);
}

Tensor amax(const Tensor& input, const std::optional<DimVector>& dim, bool keepdim,
            const OutArg& out) {
  return extreme(true, input, dim, keepdim, false, "amax", out);
}
Tensor amin(const Tensor& input, const std::optional<DimVector>& dim, bool keepdim,
            const OutArg& out) {
  return extreme(false, input, dim, keepdim, false, "amin", out);
}

Tensor argmax(const Tensor& input, std::optional<int64_t> dim, bool keepdim, const OutArg& out) {
  return arg_out(true, "argmax", input, dim, keepdim, out);
}
Tensor argmin(const Tensor& input, std::optional<int64_t> dim, bool keepdim, const OutArg& out) {
  return arg_out(false, "argmin", input, dim, keepdim, out);
}

std::tuple<Tensor, Tensor> aminmax(const Tensor& input, std::optional<int64_t> dim, bool keepdim) {
  std::optional<DimVector> dims;
  if (dim) dims = DimVector{*dim};
  bool all = !dim;
  return {extreme(false, input, dims, keepdim, all, "aminmax", OutArg::none()),
          extreme(true, input, dims, keepdim, all, "aminmax", OutArg::none())};
}

}  // namespace flambeau::ops
