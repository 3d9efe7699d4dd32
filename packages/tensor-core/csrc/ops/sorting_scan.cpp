// Frontends of the sorting family's scans: cummax, cummin, logcumsumexp, diff.
#include "generated/kernels.h"
#include "generated/ops_bitwise.h"
#include "generated/ops_pointwise.h"
#include "generated/ops_shape.h"
#include "generated/ops_sorting.h"
#include "generated/ops_tensor.h"
#include "ops/sorting_kernels.h"

namespace flambeau::ops {

namespace {

std::tuple<Tensor, Tensor> cum_extreme(bool is_max, const Tensor& input, int64_t dim,
                                       const std::vector<Tensor>& out) {
  const char* name = is_max ? "cummax" : "cummin";
  check_out_tuple(out, 2, name);
  check_sortable(input, name);
  const int64_t d = wrap_dim(dim, input->dim(), name);
  Tensor rows = to_rows(input, d);
  const int64_t n = rows->sizes()[1];
  Tensor v = empty(rows->sizes(), input->dtype(), input->device());
  Tensor i = empty(rows->sizes(), ScalarType::Int64, input->device());
  if (rows->numel() > 0) kernel<kernels::cummax>(input->device())(v, i, rows, is_max);
  return {write_out(out, 0, from_rows(v, input->sizes(), d, n, true), name),
          write_out(out, 1, from_rows(i, input->sizes(), d, n, true), name)};
}

}  // namespace

std::tuple<Tensor, Tensor> cummax(const Tensor& input, int64_t dim,
                                  const std::vector<Tensor>& out) {
  return cum_extreme(true, input, dim, out);
}

std::tuple<Tensor, Tensor> cummin(const Tensor& input, int64_t dim,
                                  const std::vector<Tensor>& out) {
  return cum_extreme(false, input, dim, out);
}

Tensor logcumsumexp(const Tensor& input, int64_t dim, const OutArg& out) {
  FLB_CHECK(is_floating(input->dtype()), "logcumsumexp(): expected a floating point input, got ",
            dtype_name(input->dtype()));
  const int64_t d = wrap_dim(dim, input->dim(), "logcumsumexp");
  Tensor rows = to_rows(input, d);
  Tensor r = empty(rows->sizes(), input->dtype(), input->device());
  if (rows->numel() > 0) kernel<kernels::logcumsumexp>(input->device())(r, rows);
  return write_out(out, from_rows(r, input->sizes(), d, rows->sizes()[1], true), "logcumsumexp");
}

Tensor diff(const Tensor& input, int64_t n, int64_t dim, const Tensor& prepend,
            const Tensor& append, const OutArg& out) {
  FLB_CHECK(input->dim() >= 1, "diff(): expects input to be at least one-dimensional");
  FLB_CHECK(n >= 0, "diff(): order must be non-negative but got ", n);
  const int64_t d = wrap_dim(dim, input->dim(), "diff");
  Tensor x = input;
  if (prepend || append) {
    std::vector<Tensor> parts;
    for (const Tensor& t : {prepend, input, append}) {
      if (!t) continue;
      // A number (0-dim) stands for a slice of that value, as in NumPy.
      DimVector shape = input->sizes();
      shape[d] = 1;
      parts.push_back(t->dim() == 0 ? ops::expand(t, shape) : t);
      FLB_CHECK(parts.back()->dim() == input->dim(), "diff(): prepend/append must have ",
                input->dim(), " dims like input, got shape ", shape_str(t->sizes()));
    }
    x = ops::cat(parts, d, OutArg::none());
  }
  const bool is_bool = x->dtype() == ScalarType::Bool;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t len = x->sizes()[d];
    if (len <= 1) {
      x = ops::narrow(x, d, 0, 0);
      break;
    }
    Tensor hi = ops::narrow(x, d, 1, len - 1), lo = ops::narrow(x, d, 0, len - 1);
    x = is_bool ? ops::logical_xor(hi, lo, OutArg::none())
                : ops::sub(hi, lo, Scalar(int64_t(1)), OutArg::none());
  }
  if (x == input) x = contiguous_copy(input);
  return write_out(out, x, "diff");
}

}  // namespace flambeau::ops
