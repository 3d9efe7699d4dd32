// Frontends of cumulative scans: cumsum, cumprod.
#include "generated/kernels.h"
#include "generated/ops.h"
#include "ops/reduce_util.h"

namespace flambeau::ops {

namespace {

template <class K>
Tensor scan(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype, const OutArg& out) {
  const char* name = K::name;
  const auto& op = handle<K>();
  const int64_t d = wrap_dim(dim, input->dim(), name);
  // In-place keeps self's dtype; otherwise integers and bool accumulate in int64.
  ScalarType t = out.inplace ? out.tensor->dtype() : sum_type(input->dtype(), dtype);
  if (!is_floating(t) && !is_complex(t) && !is_integral(t, true)) fail_dtype(name, t);
  Tensor src = to_dtype(input, t);
  Tensor dest = prepare_out(out, input->sizes(), t, input->device(), name);
  Tensor target = dest->dtype() == t && dest->is_contiguous() && dest != input
                      ? dest
                      : empty(input->sizes(), t, input->device());
  if (input->dim() == 0) {
    copy_into(target, src);
  } else {
    kernel_for(op, input->device())(target, src, d);
  }
  if (target != dest) copy_into(dest, target);
  return dest;
}

}  // namespace

Tensor cumsum(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype,
              const OutArg& out) {
  return scan<kernels::cumsum>(input, dim, dtype, out);
}

Tensor cumprod(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype,
               const OutArg& out) {
  return scan<kernels::cumprod>(input, dim, dtype, out);
}

}  // namespace flambeau::ops
