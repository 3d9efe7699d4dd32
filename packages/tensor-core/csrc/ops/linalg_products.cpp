// Products built on the matrix-product frontends: vdot, outer, the addmm
// family, tensordot, kron, cross and trace, plus the helpers of linalg_util.h.
#include <algorithm>
#include <complex>

#include "generated/ops_complex.h"
#include "generated/ops_linalg.h"
#include "generated/ops_pointwise.h"
#include "generated/ops_reduction.h"
#include "generated/ops_shape.h"
#include "generated/ops_tensor.h"
#include "ops/linalg_util.h"

namespace flambeau::ops {

namespace linalg {

Tensor conj(const Tensor& t) {
  if (!is_complex(t->dtype())) return t;
  return ops::contiguous(ops::conj_physical(t, OutArg::none()));  // (on t's device)
}

Tensor adjoint(const Tensor& t) { return conj(transpose(t, -2, -1)); }

DimVector batch_of(const Tensor& t) { return DimVector(IntList(t->sizes().data(), t->dim() - 2)); }

ScalarType real_dtype(ScalarType t) {
  if (t == ScalarType::Complex64) return ScalarType::Float32;
  if (t == ScalarType::Complex128) return ScalarType::Float64;
  return t;
}

}  // namespace linalg

namespace {

Tensor scaled(const Tensor& t, const Scalar& s) {
  if (!s.is_complex() && s.to_double() == 1.0) return t;
  return mul(t, wrapped_scalar(s), OutArg::none());
}

void check_int_scalars(const char* op, const Tensor& t, const Scalar& beta, const Scalar& alpha) {
  if (is_complex(t->dtype()) || is_floating(t->dtype())) return;
  FLB_CHECK(!beta.is_floating() && !beta.is_complex(), op,
            ": For integral input tensors, argument beta must not be a floating point number.");
  FLB_CHECK(!alpha.is_floating() && !alpha.is_complex(), op,
            ": For integral input tensors, argument alpha must not be a floating point number.");
}

// beta * input + alpha * product, input broadcast to the product's shape; with
// beta == 0 the input is ignored (NaNs in it do not propagate), as in PyTorch.
Tensor add_scaled(const char* op, const Tensor& input, const Tensor& product, const Scalar& beta,
                  const Scalar& alpha, const OutArg& out) {
  check_int_scalars(op, product, beta, alpha);
  FLB_CHECK(input->dtype() == product->dtype(), op,
            ": expected self and the matrices to have the same dtype, but got ",
            dtype_name(input->dtype()), " and ", dtype_name(product->dtype()));
  if (out.inplace)
    FLB_CHECK(out.tensor->sizes() == product->sizes(), op, ": the in-place result of shape ",
              shape_str(out.tensor->sizes()), " cannot hold the product of shape ",
              shape_str(product->sizes()));
  Tensor p = scaled(product, alpha);
  const bool beta_zero = !beta.is_complex() && beta.to_double() == 0.0;
  Tensor res = beta_zero ? p : add(scaled(expand_to(input, p->sizes(), op), beta), p, 1, {});
  return write_out(out, res, op);
}

}  // namespace

Tensor vdot(const Tensor& input, const Tensor& other, const OutArg& out) {
  FLB_CHECK(input->dim() == 1 && other->dim() == 1, "vdot: 1D tensors expected, but got ",
            input->dim(), "D and ", other->dim(), "D tensors");
  FLB_CHECK(input->dtype() == other->dtype(),
            "vdot: expected both vectors to have same dtype, but found ",
            dtype_name(input->dtype()), " and ", dtype_name(other->dtype()));
  return dot(linalg::conj(input), other, out);
}

Tensor outer(const Tensor& input, const Tensor& vec2, const OutArg& out) {
  FLB_CHECK(input->dim() == 1 && vec2->dim() == 1, "outer: expected 1-D vectors, but got ",
            input->dim(), "-D and ", vec2->dim(), "-D tensors");
  return mul(unsqueeze(input, 1), unsqueeze(vec2, 0), out);
}

Tensor ger(const Tensor& input, const Tensor& vec2, const OutArg& out) {
  return outer(input, vec2, out);
}

Tensor addmm(const Tensor& input, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
             const Scalar& alpha, const OutArg& out) {
  return add_scaled("addmm", input, mm(mat1, mat2, {}), beta, alpha, out);
}

Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
               const Scalar& alpha, const OutArg& out) {
  return add_scaled("baddbmm", input, bmm(batch1, batch2, {}), beta, alpha, out);
}

Tensor addbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
              const Scalar& alpha, const OutArg& out) {
  FLB_CHECK(batch1->dim() == 3 && batch2->dim() == 3,
            "addbmm: expected 3-D batch1 and batch2, but got ", batch1->dim(), "-D and ",
            batch2->dim(), "-D");
  FLB_CHECK(batch1->size(0) == batch2->size(0), "addbmm: batch1 and batch2 must have the ",
            "same number of matrices, but got ", batch1->size(0), " and ", batch2->size(0));
  FLB_CHECK(batch1->size(2) == batch2->size(1), "addbmm: shapes ", shape_str(batch1->sizes()),
            " and ", shape_str(batch2->sizes()), " cannot be multiplied");
  // The sum over the batch is one GEMM: (n, b*m) @ (b*m, p).
  const int64_t b = batch1->size(0), n = batch1->size(1), m = batch1->size(2);
  const int64_t p = batch2->size(2);
  Tensor lhs = reshape(permute(batch1, {1, 0, 2}), {n, b * m});
  Tensor rhs = reshape(batch2, {b * m, p});
  return add_scaled("addbmm", input, mm(lhs, rhs, {}), beta, alpha, out);
}

Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, const Scalar& beta,
             const Scalar& alpha, const OutArg& out) {
  return add_scaled("addmv", input, mv(mat, vec, {}), beta, alpha, out);
}

Tensor addr(const Tensor& input, const Tensor& vec1, const Tensor& vec2, const Scalar& beta,
            const Scalar& alpha, const OutArg& out) {
  FLB_CHECK(vec1->dim() == 1 && vec2->dim() == 1, "addr: expected 1-D vectors, but got ",
            vec1->dim(), "-D and ", vec2->dim(), "-D");
  FLB_CHECK(vec1->dtype() == vec2->dtype(), "addr: expected both vectors to have the same dtype");
  return add_scaled("addr", input, outer(vec1, vec2, {}), beta, alpha, out);
}

Tensor tensordot(const Tensor& a, const Tensor& b, IntList dims_a, IntList dims_b,
                 const OutArg& out) {
  FLB_CHECK(dims_a.size() == dims_b.size(),
            "tensordot: both dimension lists should have the same length, but got ", dims_a.size(),
            " and ", dims_b.size());
  FLB_CHECK_T(IndexError, dims_a.empty() || (a->dim() > 0 && b->dim() > 0),
              "tensordot: cannot contract a dimension of a 0-dim tensor (a has ", a->dim(),
              " dims, b has ", b->dim(), ")");
  std::vector<bool> in_a(static_cast<size_t>(a->dim())), in_b(static_cast<size_t>(b->dim()));
  DimVector ca, cb;
  int64_t k = 1;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    int64_t da = wrap_dim(dims_a[i], a->dim(), "tensordot");
    int64_t db = wrap_dim(dims_b[i], b->dim(), "tensordot");
    FLB_CHECK(!in_a[da] && !in_b[db], "tensordot: a dimension is contracted more than once");
    FLB_CHECK(a->size(da) == b->size(db),
              "tensordot: contracted dimensions need to match, but first has size ", a->size(da),
              " in dim ", da, " and second has size ", b->size(db), " in dim ", db);
    in_a[da] = in_b[db] = true;
    ca.push_back(da);
    cb.push_back(db);
    k *= a->size(da);
  }
  DimVector perm_a, perm_b, shape;
  int64_t m = 1, n = 1;
  for (int64_t d = 0; d < a->dim(); ++d)
    if (!in_a[d]) perm_a.push_back(d), shape.push_back(a->size(d)), m *= a->size(d);
  for (int64_t d : ca) perm_a.push_back(d);
  for (int64_t d : cb) perm_b.push_back(d);
  for (int64_t d = 0; d < b->dim(); ++d)
    if (!in_b[d]) perm_b.push_back(d), shape.push_back(b->size(d)), n *= b->size(d);
  ScalarType dt = result_type({&a, &b});
  Tensor lhs = reshape(permute(to_dtype(a, dt), perm_a), {m, k});
  Tensor rhs = reshape(permute(to_dtype(b, dt), perm_b), {k, n});
  return write_out(out, reshape(mm(lhs, rhs, {}), shape), "tensordot");
}

Tensor tensordot_int(const Tensor& a, const Tensor& b, int64_t dims, const OutArg& out) {
  FLB_CHECK(dims >= 0, "tensordot expects dims >= 0, but got dims=", dims);
  FLB_CHECK(dims <= a->dim() && dims <= b->dim(), "tensordot expects dims < ndim_a or ndim_b",
            ", but got dims=", dims);
  DimVector da, db;
  for (int64_t i = 0; i < dims; ++i) {
    da.push_back(a->dim() - dims + i);
    db.push_back(i);
  }
  return tensordot(a, b, da, db, out);
}

Tensor kron(const Tensor& input, const Tensor& other, const OutArg& out) {
  const int64_t nd = std::max(input->dim(), other->dim());
  // a as (a0, 1, a1, 1, ...) times b as (1, b0, 1, b1, ...), then merged pairs.
  DimVector sa, sb, shape;
  for (int64_t d = 0; d < nd; ++d) {
    int64_t ia = d - (nd - input->dim()), ib = d - (nd - other->dim());
    int64_t na = ia >= 0 ? input->size(ia) : 1, nb = ib >= 0 ? other->size(ib) : 1;
    sa.push_back(na), sa.push_back(1);
    sb.push_back(1), sb.push_back(nb);
    shape.push_back(na * nb);
  }
  Tensor prod = mul(reshape(input, sa), reshape(other, sb), {});
  return write_out(out, reshape(prod, shape), "kron");
}

namespace {

Tensor cross_impl(const char* op, const Tensor& input, const Tensor& other, int64_t dim,
                  const OutArg& out) {
  FLB_CHECK(input->dim() == other->dim(), op,
            ": inputs must have the same number of dimensions, but got ", input->dim(), " and ",
            other->dim());
  DimVector shape = broadcast_shapes(input->sizes(), other->sizes(), op);
  int64_t d = wrap_dim(dim, static_cast<int64_t>(shape.size()), op);
  FLB_CHECK(input->size(d) == 3 && other->size(d) == 3, op, ": inputs dimension ", dim,
            " must have length 3, but got ", input->size(d), " and ", other->size(d));
  ScalarType dt = result_type({&input, &other});
  Tensor a = expand_to(to_dtype(input, dt), shape, op),
         b = expand_to(to_dtype(other, dt), shape, op);
  // c_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1}, indices mod 3: rolls along dim.
  Tensor t1 = mul(roll(a, {-1}, DimVector{d}), roll(b, {-2}, DimVector{d}), {});
  Tensor t2 = mul(roll(a, {-2}, DimVector{d}), roll(b, {-1}, DimVector{d}), {});
  return sub(t1, t2, 1, out);
}

}  // namespace

Tensor cross(const Tensor& input, const Tensor& other, std::optional<int64_t> dim,
             const OutArg& out) {
  if (!dim) {  // PyTorch's deprecated default: the first dim of size 3
    DimVector shape = broadcast_shapes(input->sizes(), other->sizes(), "cross");
    for (size_t i = 0; i < shape.size() && !dim; ++i)
      if (shape[i] == 3) dim = static_cast<int64_t>(i);
    FLB_CHECK(dim.has_value(), "cross: no dimension of size 3 in input");
  }
  return cross_impl("cross", input, other, *dim, out);
}

Tensor linalg_cross(const Tensor& input, const Tensor& other, int64_t dim, const OutArg& out) {
  return cross_impl("linalg.cross", input, other, dim, out);
}

Tensor trace(const Tensor& input) {
  FLB_CHECK(input->dim() == 2, "trace: expected a matrix, but got tensor with dim ", input->dim());
  return sum(diagonal(input, 0, 0, 1), std::nullopt, false, std::nullopt, {});
}

}  // namespace flambeau::ops
