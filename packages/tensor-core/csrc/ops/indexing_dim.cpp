// Frontends of the dim-wise indexing operators: gather / scatter (and its
// reductions), index_select / index_add / index_copy / index_fill, take and
// take_along_dim. 0-dim tensors act as 1-d tensors of size 1.
#include <limits>
#include <string>

#include "generated/kernels.h"
#include "generated/ops_indexing.h"
#include "generated/ops_pointwise.h"
#include "generated/ops_tensor.h"
#include "ops/indexing_util.h"

namespace flambeau::ops {

using indexing::along_dim_view;
using indexing::as_1d;
using indexing::finish;
using indexing::index_along;
using indexing::long_index;
using indexing::target_for;

namespace {

void gather_kernel(const Tensor& out, const Tensor& src, const Tensor& index,
                   const IndexSpec& spec) {
  if (out->numel() > 0) kernel<kernels::gather>(out->device())(out, src, index, spec);
}

void put_kernel(const Tensor& dst, const Tensor& values, const Tensor& index, const IndexSpec& spec,
                PutMode mode) {
  if (dst->numel() > 0) kernel<kernels::scatter>(dst->device())(dst, values, index, spec, mode);
}

// gather/scatter's shape rules: index has self's number of dims, is no larger
// than self outside dim and no larger than src (when given) anywhere.
void check_shapes(const Tensor& self, int64_t d, const Tensor& index, const Tensor& src,
                  const char* op) {
  FLB_CHECK(index->dim() == self->dim(), op,
            "(): Index tensor must have the same number of dimensions as self tensor (got ",
            index->dim(), " and ", self->dim(), ")");
  if (src) {
    FLB_CHECK(src->dim() == self->dim(), op,
              "(): Index tensor must have the same number of dimensions as src tensor (got ",
              index->dim(), " and ", src->dim(), ")");
  }
  if (index->numel() == 0) return;
  for (int64_t k = 0; k < self->dim(); ++k) {
    int64_t s = index->sizes()[k];
    FLB_CHECK(k == d || s <= self->sizes()[k], op, "(): Size does not match at dimension ", k,
              " expected index ", shape_str(index->sizes()), " to be no larger than self ",
              shape_str(self->sizes()), " apart from dimension ", d);
    FLB_CHECK(!src || s <= src->sizes()[k], op, "(): Expected index ", shape_str(index->sizes()),
              " to be no larger than src ", shape_str(src->sizes()), " at dimension ", k);
  }
}

// Writes values (or `value` everywhere) into target at index along dim.
void scatter_into(const Tensor& target, int64_t dim, const Tensor& index, const Tensor& src,
                  const Scalar* value, PutMode mode, const char* op) {
  Tensor idx = as_1d(long_index(index, op, false));
  Tensor t1 = as_1d(target);
  Tensor s1 = src ? as_1d(src) : Tensor();
  const int64_t d = wrap_dim(dim, t1->dim(), op);
  check_shapes(t1, d, idx, s1, op);
  if (idx->numel() == 0) return;
  Tensor values = src ? make_view(s1, idx->sizes(), s1->strides(), s1->offset())
                      : expand_to(scalar_tensor(*value, target->dtype()), idx->sizes(), op);
  put_kernel(along_dim_view(t1, idx->sizes(), d), values, idx,
             IndexSpec{t1->strides()[d], t1->sizes()[d], d, false, op}, mode);
}

PutMode scatter_mode(const std::optional<std::string>& reduce) {
  if (!reduce) return PutMode::Assign;
  if (*reduce == "add") return PutMode::Add;
  if (*reduce == "multiply") return PutMode::Multiply;
  fail("scatter(): reduce argument must be either add or multiply, got '", *reduce, "'");
}

Scalar lowest(ScalarType t, bool max) {
  return visit_dtype<kRealTypes | kBoolTypes>(t, "scatter_reduce", [&](auto tag) -> Scalar {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return Scalar(!max);
    } else if constexpr (std::is_integral_v<T>) {
      return Scalar(static_cast<int64_t>(max ? std::numeric_limits<T>::lowest()
                                             : std::numeric_limits<T>::max()));
    } else {
      return Scalar(max ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity());
    }
  });
}

void check_same_dtype(const Tensor& self, const Tensor& src, const char* op) {
  FLB_CHECK(self->dtype() == src->dtype(), op,
            "(): Expected self.dtype to be equal to src.dtype"
            " (got ",
            dtype_name(self->dtype()), " and ", dtype_name(src->dtype()), ")");
}

// index_add / index_copy / index_fill: index is a vector of positions along dim.
void put_along(const Tensor& target, int64_t dim, const Tensor& index, const Tensor& source,
               const Scalar* value, PutMode mode, bool allow_negative, const char* op) {
  Tensor idx = long_index(index, op, true);
  FLB_CHECK_T(IndexError, idx->dim() <= 1, op, "(): Index is supposed to be a vector, got ",
              idx->dim(), " dims");
  idx = as_1d(idx);
  Tensor t1 = as_1d(target);
  const int64_t d = wrap_dim(dim, t1->dim(), op);
  DimVector sizes(t1->sizes());
  sizes[d] = idx->numel();
  Tensor values;
  if (source) {
    Tensor s1 = as_1d(source);
    FLB_CHECK(s1->dim() == t1->dim(), op,
              "(): source and self must have the same number of "
              "dims (got ",
              source->dim(), " and ", target->dim(), ")");
    FLB_CHECK(s1->sizes()[d] == idx->numel(), op, "(): Number of indices (", idx->numel(),
              ") should be equal to source.size(dim) (", s1->sizes()[d], ")");
    FLB_CHECK(s1->sizes() == IntList(sizes), op,
              "(): source tensor shape must match self tensor shape, excluding the specified "
              "dimension. Got self.shape = ",
              shape_str(target->sizes()), " source.shape = ", shape_str(source->sizes()));
    values = s1;
  } else {
    values = expand_to(scalar_tensor(*value, target->dtype()), sizes, op);
  }
  if (numel_of(sizes) == 0) return;
  put_kernel(along_dim_view(t1, sizes, d), values, index_along(idx, sizes, d),
             IndexSpec{t1->strides()[d], t1->sizes()[d], d, allow_negative, op}, mode);
}

}  // namespace

Tensor gather(const Tensor& input, int64_t dim, const Tensor& index, bool sparse_grad,
              const OutArg& out) {
  (void)sparse_grad;  // gradients are always dense
  Tensor idx = long_index(index, "gather", false);
  Tensor in1 = as_1d(input), idx1 = as_1d(idx);
  const int64_t d = wrap_dim(dim, in1->dim(), "gather");
  check_shapes(in1, d, idx1, Tensor(), "gather");
  Tensor r = flambeau::empty(idx->sizes(), input->dtype(), input->device());
  gather_kernel(as_1d(r), along_dim_view(in1, idx1->sizes(), d), idx1,
                IndexSpec{in1->strides()[d], in1->sizes()[d], d, false, "gather"});
  return finish(r, out, "gather");
}

Tensor scatter_src(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& src,
                   const std::optional<std::string>& reduce, const OutArg& out) {
  if (src->is_wrapped_number())  // scatter(x, dim, index, 2.0): the value overload
    return scatter_value(input, dim, index, indexing::scalar_value(src, "scatter"), reduce, out);
  check_same_dtype(input, src, "scatter");
  PutMode mode = scatter_mode(reduce);
  Tensor target = target_for(input, out, "scatter");
  scatter_into(target, dim, index, src, nullptr, mode, "scatter");
  return finish(target, out, "scatter");
}

Tensor scatter_value(const Tensor& input, int64_t dim, const Tensor& index, const Scalar& value,
                     const std::optional<std::string>& reduce, const OutArg& out) {
  PutMode mode = scatter_mode(reduce);
  Tensor target = target_for(input, out, "scatter");
  scatter_into(target, dim, index, Tensor(), &value, mode, "scatter");
  return finish(target, out, "scatter");
}

Tensor scatter_add(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& src,
                   const OutArg& out) {
  check_same_dtype(input, src, "scatter_add");
  Tensor target = target_for(input, out, "scatter_add");
  scatter_into(target, dim, index, src, nullptr, PutMode::Add, "scatter_add");
  return finish(target, out, "scatter_add");
}

Tensor scatter_reduce_two(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& src,
                          const std::string& reduce, bool include_self, const OutArg& out) {
  const char* op = "scatter_reduce";
  check_same_dtype(input, src, op);
  PutMode mode;
  Scalar identity;
  const ScalarType t = input->dtype();
  if (reduce == "sum" || reduce == "mean") {
    mode = PutMode::Add;
    identity = Scalar(int64_t(0));
  } else if (reduce == "prod") {
    mode = PutMode::Multiply;
    identity = Scalar(int64_t(1));
  } else if (reduce == "amax" || reduce == "amin") {
    FLB_CHECK(!is_complex(t), op, "(): reduce='", reduce, "' does not support complex inputs");
    mode = reduce == "amax" ? PutMode::Max : PutMode::Min;
    identity = lowest(t, reduce == "amax");
  } else {
    fail(op, "(): reduce argument must be one of 'sum', 'prod', 'mean', 'amax', 'amin', got '",
         reduce, "'");
  }
  Tensor target = target_for(input, out, op);
  if (!include_self) scatter_into(target, dim, index, Tensor(), &identity, PutMode::Assign, op);
  scatter_into(target, dim, index, src, nullptr, mode, op);
  if (reduce == "mean") {
    Tensor count = ones_like(target, std::nullopt, std::nullopt, false, MemoryFormat::Contiguous);
    Scalar zero(int64_t(0)), one(int64_t(1));
    if (!include_self) scatter_into(count, dim, index, Tensor(), &zero, PutMode::Assign, op);
    scatter_into(count, dim, index, Tensor(), &one, PutMode::Add, op);
    std::optional<std::string> rounding;
    if (!is_floating(t) && !is_complex(t)) rounding = "floor";
    // Every reached position counts at least one value; the others count 1 (kept as is).
    div(target, count, rounding, OutArg::self(target));
  }
  return finish(target, out, op);
}

Tensor index_select(const Tensor& input, int64_t dim, const Tensor& index, const OutArg& out) {
  const char* op = "index_select";
  Tensor idx = long_index(index, op, true);
  FLB_CHECK_T(IndexError, idx->dim() <= 1, op, "(): Index is supposed to be a vector, got ",
              idx->dim(), " dims");
  idx = as_1d(idx);
  Tensor in1 = as_1d(input);
  const int64_t d = wrap_dim(dim, in1->dim(), op);
  DimVector sizes(in1->sizes());
  sizes[d] = idx->numel();
  Tensor r = flambeau::empty(sizes, input->dtype(), input->device());
  gather_kernel(r, along_dim_view(in1, sizes, d), index_along(idx, sizes, d),
                IndexSpec{in1->strides()[d], in1->sizes()[d], d, false, op});
  if (input->dim() == 0) r = make_view(r, DimVector{}, DimVector{}, r->offset());
  return finish(r, out, op);
}

Tensor index_add(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& source,
                 const Scalar& alpha, const OutArg& out) {
  FLB_CHECK(input->dtype() == source->dtype(), "index_add(): self (", dtype_name(input->dtype()),
            ") and source (", dtype_name(source->dtype()), ") must have the same scalar type");
  Tensor values = source;
  bool unit =
      alpha.is_integral() ? alpha.to_int() == 1 : (!alpha.is_complex() && alpha.to_double() == 1.0);
  if (!unit) values = to_dtype(mul(source, wrapped_scalar(alpha), OutArg::none()), input->dtype());
  Tensor target = target_for(input, out, "index_add");
  put_along(target, dim, index, values, nullptr, PutMode::Add, false, "index_add");
  return finish(target, out, "index_add");
}

Tensor index_copy(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& source,
                  const OutArg& out) {
  FLB_CHECK(input->dtype() == source->dtype(), "index_copy(): self (", dtype_name(input->dtype()),
            ") and source (", dtype_name(source->dtype()), ") must have the same scalar type");
  Tensor target = target_for(input, out, "index_copy");
  put_along(target, dim, index, source, nullptr, PutMode::Assign, false, "index_copy");
  return finish(target, out, "index_copy");
}

Tensor index_fill(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& value,
                  const OutArg& out) {
  Scalar v = indexing::scalar_value(value, "index_fill");
  Tensor target = target_for(input, out, "index_fill");
  put_along(target, dim, index, Tensor(), &v, PutMode::Assign, true, "index_fill");
  return finish(target, out, "index_fill");
}

Tensor take(const Tensor& input, const Tensor& index, const OutArg& out) {
  Tensor idx = long_index(index, "take", false);
  Tensor flat = contiguous(input);
  Tensor r = flambeau::empty(idx->sizes(), input->dtype(), input->device());
  DimVector zeros(static_cast<size_t>(idx->dim()), 0);
  gather_kernel(r, make_view(flat, idx->sizes(), zeros, flat->offset()), idx,
                IndexSpec{1, flat->numel(), 0, true, "take"});
  return finish(r, out, "take");
}

Tensor take_along_dim(const Tensor& input, const Tensor& indices, std::optional<int64_t> dim,
                      const OutArg& out) {
  const char* op = "take_along_dim";
  FLB_CHECK(indices->dtype() == ScalarType::Int64,
            "torch.take_along_dim(): dtype of indices "
            "should be int64 but got ",
            dtype_name(indices->dtype()));
  if (!dim) {
    Tensor flat = contiguous(input), idx = contiguous(indices);
    Tensor f1 = make_view(flat, DimVector{flat->numel()}, DimVector{1}, flat->offset());
    Tensor i1 = make_view(idx, DimVector{idx->numel()}, DimVector{1}, idx->offset());
    return gather(f1, 0, i1, false, out);
  }
  FLB_CHECK(input->dim() == indices->dim(),
            "torch.take_along_dim(): input and indices should "
            "have the same number of dimensions, but got ",
            input->dim(), " dimensions for input, and ", indices->dim(), " dimensions for indices");
  Tensor in1 = as_1d(input), ix1 = as_1d(indices);
  const int64_t d = wrap_dim(*dim, in1->dim(), op);
  DimVector in_sizes(in1->sizes()), ix_sizes(ix1->sizes());
  for (int64_t k = 0; k < in1->dim(); ++k) {
    if (k == d) continue;
    int64_t a = in_sizes[k], b = ix_sizes[k];
    FLB_CHECK(a == b || a == 1 || b == 1, op, "(): input ", shape_str(input->sizes()),
              " and indices ", shape_str(indices->sizes()),
              " cannot be broadcast outside dimension ", d);
    in_sizes[k] = ix_sizes[k] = a == 1 ? b : a;
  }
  Tensor r =
      gather(expand_to(in1, in_sizes, op), d, expand_to(ix1, ix_sizes, op), false, OutArg::none());
  if (input->dim() == 0) r = make_view(r, DimVector{}, DimVector{}, r->offset());
  return finish(r, out, op);
}

}  // namespace flambeau::ops
