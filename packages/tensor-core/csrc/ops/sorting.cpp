// Frontends of ordering operators: sort, argsort, msort, topk, kthvalue,
// median, nanmedian, mode, and the backward of value-selecting operators.
#include "generated/kernels.h"
#include "generated/ops_shape.h"
#include "generated/ops_sorting.h"
#include "generated/ops_tensor.h"
#include "ops/sorting_kernels.h"

namespace flambeau {

Tensor to_rows(const Tensor& in, int64_t d) {
  if (in->dim() == 0) return ops::reshape(in, DimVector{1, 1});
  const int64_t n = in->sizes()[d];
  int64_t rows = 1;
  for (int64_t i = 0; i < in->dim(); ++i)
    if (i != d) rows *= in->sizes()[i];
  Tensor moved = d == in->dim() - 1 ? in : ops::movedim(in, DimVector{d}, DimVector{-1});
  return ops::reshape(ops::contiguous(moved), DimVector{rows, n});
}

Tensor from_rows(const Tensor& rows, IntList sizes, int64_t d, int64_t m, bool keep_dim) {
  DimVector shape;
  for (size_t i = 0; i < sizes.size(); ++i)
    if (static_cast<int64_t>(i) != d) shape.push_back(sizes[i]);
  if (sizes.empty() || !keep_dim) {  // m == 1 here: the dim (if any) is dropped
    return make_view(rows, shape, contiguous_strides(shape), rows->offset());
  }
  shape.push_back(m);
  Tensor t = make_view(rows, shape, contiguous_strides(shape), rows->offset());
  const int64_t last = static_cast<int64_t>(sizes.size()) - 1;
  return d == last ? t : ops::movedim(t, DimVector{last}, DimVector{d});
}

void check_sortable(const Tensor& in, const char* op, bool allow_bool) {
  FLB_CHECK(!is_complex(in->dtype()), op, "(): does not support complex input (dtype ",
            dtype_name(in->dtype()), ")");
  FLB_CHECK(allow_bool || in->dtype() != ScalarType::Bool, op, "(): does not support bool input");
}

namespace {

std::tuple<Tensor, Tensor> sort_impl(const Tensor& input, int64_t dim, bool descending,
                                     const char* name) {
  check_sortable(input, name);
  const int64_t d = wrap_dim(dim, input->dim(), name);
  Tensor rows = to_rows(input, d);
  const int64_t n = rows->sizes()[1];
  Tensor v = empty(rows->sizes(), input->dtype(), input->device());
  Tensor i = empty(rows->sizes(), ScalarType::Int64, input->device());
  if (rows->numel() > 0) kernel<kernels::sort>(input->device())(v, i, rows, descending);
  return {from_rows(v, input->sizes(), d, n, true), from_rows(i, input->sizes(), d, n, true)};
}

// values/indices of the element SelectKernel picks from every row along dim.
std::tuple<Tensor, Tensor> select_impl(const Tensor& input, int64_t dim, bool keepdim, int64_t k,
                                       Select what, const char* name) {
  const int64_t d = wrap_dim(dim, input->dim(), name);
  Tensor rows = to_rows(input, d);
  const int64_t r = rows->sizes()[0];
  Tensor v = empty(DimVector{r, 1}, input->dtype(), input->device());
  Tensor i = empty(DimVector{r, 1}, ScalarType::Int64, input->device());
  if (r > 0) kernel<kernels::kthvalue>(input->device())(v, i, rows, k, what);
  return {from_rows(v, input->sizes(), d, 1, keepdim), from_rows(i, input->sizes(), d, 1, keepdim)};
}

void check_nonempty_dim(const Tensor& input, int64_t dim, const char* name) {
  const int64_t d = wrap_dim(dim, input->dim(), name);
  FLB_CHECK_T(IndexError, input->dim() == 0 || input->sizes()[d] != 0, name,
              "(): Expected reduction dim ", d, " to have non-zero size.");
}

std::tuple<Tensor, Tensor> median_dim_impl(const Tensor& input, int64_t dim, bool keepdim,
                                           const std::vector<Tensor>& out, Select what,
                                           const char* name) {
  check_out_tuple(out, 2, name);
  check_sortable(input, name, false);
  check_nonempty_dim(input, dim, name);
  const int64_t d = wrap_dim(dim, input->dim(), name);
  const int64_t n = input->dim() ? input->sizes()[d] : 1;
  auto [v, i] = select_impl(input, dim, keepdim, (n - 1) / 2, what, name);
  return {write_out(out, 0, v, name), write_out(out, 1, i, name)};
}

Tensor median_all_impl(const Tensor& input, Select what, const char* name) {
  check_sortable(input, name, false);
  if (input->numel() == 0) {
    FLB_CHECK(is_floating(input->dtype()), name,
              "(): cannot compute the median of an empty tensor of dtype ",
              dtype_name(input->dtype()));
    return ops::full(DimVector{}, Scalar(std::nan("")), input->dtype(), input->device(), false);
  }
  Tensor flat = ops::reshape(input, DimVector{input->numel()});
  return std::get<0>(select_impl(flat, 0, false, (input->numel() - 1) / 2, what, name));
}

}  // namespace

namespace ops {

std::tuple<Tensor, Tensor> sort(const Tensor& input, int64_t dim, bool descending,
                                std::optional<bool> stable, const std::vector<Tensor>& out) {
  (void)stable;  // every sort is stable
  check_out_tuple(out, 2, "sort");
  auto [v, i] = sort_impl(input, dim, descending, "sort");
  return {write_out(out, 0, v, "sort"), write_out(out, 1, i, "sort")};
}

Tensor argsort(const Tensor& input, int64_t dim, bool descending, bool stable, const OutArg& out) {
  (void)stable;
  return write_out(out, std::get<1>(sort_impl(input, dim, descending, "argsort")), "argsort");
}

Tensor msort(const Tensor& input, const OutArg& out) {
  return write_out(out, std::get<0>(sort_impl(input, 0, false, "msort")), "msort");
}

std::tuple<Tensor, Tensor> topk(const Tensor& input, int64_t k, int64_t dim, bool largest,
                                bool sorted, const std::vector<Tensor>& out) {
  check_out_tuple(out, 2, "topk");
  check_sortable(input, "topk", false);
  const int64_t d = wrap_dim(dim, input->dim(), "topk");
  const int64_t n = input->dim() ? input->sizes()[d] : 1;
  FLB_CHECK(k >= 0 && k <= n, "topk(): selected index k out of range (k = ", k, ", size of dim ", d,
            " = ", n, ")");
  Tensor rows = to_rows(input, d);
  const int64_t r = rows->sizes()[0];
  Tensor v = empty(DimVector{r, k}, input->dtype(), input->device());
  Tensor i = empty(DimVector{r, k}, ScalarType::Int64, input->device());
  if (r > 0 && k > 0) {
    kernel<kernels::topk>(input->device())(v, i, rows, k, largest, sorted);
  }
  return {write_out(out, 0, from_rows(v, input->sizes(), d, k, true), "topk"),
          write_out(out, 1, from_rows(i, input->sizes(), d, k, true), "topk")};
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& input, int64_t k, int64_t dim, bool keepdim,
                                    const std::vector<Tensor>& out) {
  check_out_tuple(out, 2, "kthvalue");
  check_sortable(input, "kthvalue", false);
  const int64_t d = wrap_dim(dim, input->dim(), "kthvalue");
  const int64_t n = input->dim() ? input->sizes()[d] : 1;
  FLB_CHECK(k >= 1 && k <= n, "kthvalue(): selected index k out of range (k = ", k,
            ", size of dim ", d, " = ", n, ")");
  auto [v, i] = select_impl(input, dim, keepdim, k - 1, Select::Kth, "kthvalue");
  return {write_out(out, 0, v, "kthvalue"), write_out(out, 1, i, "kthvalue")};
}

Tensor median(const Tensor& input) { return median_all_impl(input, Select::Median, "median"); }

std::tuple<Tensor, Tensor> median_dim(const Tensor& input, int64_t dim, bool keepdim,
                                      const std::vector<Tensor>& out) {
  return median_dim_impl(input, dim, keepdim, out, Select::Median, "median");
}

Tensor nanmedian(const Tensor& input) {
  return median_all_impl(input, Select::NanMedian, "nanmedian");
}

std::tuple<Tensor, Tensor> nanmedian_dim(const Tensor& input, int64_t dim, bool keepdim,
                                         const std::vector<Tensor>& out) {
  return median_dim_impl(input, dim, keepdim, out, Select::NanMedian, "nanmedian");
}

std::tuple<Tensor, Tensor> mode(const Tensor& input, int64_t dim, bool keepdim,
                                const std::vector<Tensor>& out) {
  check_out_tuple(out, 2, "mode");
  check_sortable(input, "mode");
  check_nonempty_dim(input, dim, "mode");
  const int64_t d = wrap_dim(dim, input->dim(), "mode");
  Tensor rows = to_rows(input, d);
  const int64_t r = rows->sizes()[0];
  Tensor v = empty(DimVector{r, 1}, input->dtype(), input->device());
  Tensor i = empty(DimVector{r, 1}, ScalarType::Int64, input->device());
  if (r > 0) kernel<kernels::mode>(input->device())(v, i, rows);
  return {write_out(out, 0, from_rows(v, input->sizes(), d, 1, keepdim), "mode"),
          write_out(out, 1, from_rows(i, input->sizes(), d, 1, keepdim), "mode")};
}

Tensor value_selecting_reduction_backward(const Tensor& grad, int64_t dim, const Tensor& indices,
                                          IntList sizes, bool keepdim) {
  const char* name = "value_selecting_reduction_backward";
  const int64_t nd = static_cast<int64_t>(sizes.size());
  const int64_t d = wrap_dim(dim, nd, name);
  FLB_CHECK(indices->dtype() == ScalarType::Int64, name, "(): indices must be int64, got ",
            dtype_name(indices->dtype()));
  FLB_CHECK(is_floating(grad->dtype()), name, "(): grad must be floating point, got ",
            dtype_name(grad->dtype()));
  Tensor g = grad, idx = indices;
  if (!keepdim && nd > 0) g = ops::unsqueeze(g, d), idx = ops::unsqueeze(idx, d);
  FLB_CHECK(g->sizes() == idx->sizes() && g->dim() == nd, name, "(): grad ",
            shape_str(grad->sizes()), " and indices ", shape_str(indices->sizes()),
            " do not fit sizes ", shape_str(sizes));
  for (int64_t i = 0; i < nd; ++i) {
    FLB_CHECK(i == d || g->sizes()[i] == sizes[i], name, "(): grad ", shape_str(grad->sizes()),
              " does not fit sizes ", shape_str(sizes), " outside dim ", d);
  }
  Tensor grows = to_rows(g, d), irows = to_rows(idx, d);
  const int64_t n = nd ? sizes[d] : 1;
  Tensor out = empty(DimVector{grows->sizes()[0], n}, grad->dtype(), grad->device());
  if (out->numel() > 0)
    kernel<kernels::value_selecting_reduction_backward>(grad->device())(out, grows, irows);
  return ops::contiguous(from_rows(out, sizes, d, n, true));
}

}  // namespace ops
}  // namespace flambeau
