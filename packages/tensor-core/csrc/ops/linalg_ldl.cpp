// Frontends of linalg.ldl_factor(_ex) and linalg.ldl_solve: the Bunch-Kaufman
// LDL^T (LDL^H) factorization of symmetric (Hermitian) matrices by LAPACK's
// sytrf/hetrf from their lower triangle, and solves from it by sytrs/hetrs.
#include <cstdint>

#include "generated/kernels.h"
#include "generated/ops_linalg_lapack.h"
#include "generated/ops_shape.h"
#include "generated/ops_tensor.h"
#include "ops/lapack_frontend.h"
#include "ops/linalg_util.h"
#include "ops/reduce_util.h"
#include "ops/sorting_kernels.h"  // write_out, check_out_tuple: tuple out=

namespace flambeau::ops {

using linalg::batch_of;
using namespace lapack_frontend;

namespace {

std::tuple<Tensor, Tensor, Tensor> ldl_factor_impl(const Tensor& A, bool hermitian,
                                                   bool check_errors, const char* api) {
  // Argument errors name ldl_factor_ex, through which PyTorch's ldl_factor runs.
  check_matrix("torch.linalg.ldl_factor_ex", A, true);
  const int64_t n = A->size(-1);
  DimVector batch = batch_of(A);
  Tensor a = colmajor(A);
  Tensor pivots = int32_zeros({a->size(0), n}, A->device());
  Tensor info = int32_zeros({a->size(0)}, A->device());
  if (a->numel()) kernel<kernels::linalg_sytrf>(A->device())(a, pivots, hermitian, info);
  if (check_errors)
    check_info(api, info, !batch.empty(), [](int32_t i) {
      return str_cat("The input matrix is singular: the diagonal element ", i,
                     " of the block diagonal factor D is zero.");
    });
  // sytrf leaves the strict upper triangle as it found it; PyTorch returns zeros there.
  return {tril(as_matrices(a, batch, n, n), 0, {}), reshape(pivots, with(batch, {n})),
          reshape(info, batch)};
}

// sytrs reads rows by these indices without checking them: each must be in
// [1, n] in absolute value, and a negative one must open a 2x2 block, a pair of
// equal entries (sytrf's convention for the lower triangle). `piv` is a
// contiguous int64 copy, checked before narrowing to LAPACK's int32.
void check_pivots(const Tensor& piv_any, int64_t n) {
  Tensor piv = cpu(piv_any);  // read on the host
  const int64_t* p = piv->data_as<const int64_t>();
  for (int64_t row = 0; n > 0 && row < piv->numel() / n; ++row, p += n) {
    for (int64_t k = 0; k < n; ++k) {
      FLB_CHECK(p[k] != 0, "Pivots given to ldl_solve must all satisfy |pivot| >= 1. ",
                "Did you properly pass the result of ldl_factor?");
      FLB_CHECK(p[k] <= n && p[k] >= -n,
                "Pivots given to ldl_solve must all satisfy |pivot| <= LD.size(-2). ",
                "Did you properly pass the result of ldl_factor?");
      if (p[k] > 0) continue;
      FLB_CHECK(k + 1 < n && p[k + 1] == p[k],
                "Pivots given to ldl_solve must mark each 2x2 block by two equal negative ",
                "entries. Did you properly pass the result of ldl_factor?");
      ++k;
    }
  }
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> linalg_ldl_factor_ex(const Tensor& A, bool hermitian,
                                                        bool check_errors,
                                                        const std::vector<Tensor>& out) {
  const char* op = "linalg.ldl_factor_ex";
  check_out_tuple(out, 3, op);
  auto [LD, pivots, info] =
      ldl_factor_impl(A, hermitian, check_errors, "torch.linalg.ldl_factor_ex");
  return {write_out(out, 0, LD, op), write_out(out, 1, pivots, op), write_out(out, 2, info, op)};
}

std::tuple<Tensor, Tensor> linalg_ldl_factor(const Tensor& A, bool hermitian,
                                             const std::vector<Tensor>& out) {
  const char* op = "linalg.ldl_factor";
  check_out_tuple(out, 2, op);
  auto [LD, pivots, info] = ldl_factor_impl(A, hermitian, true, "torch.linalg.ldl_factor");
  return {write_out(out, 0, LD, op), write_out(out, 1, pivots, op)};
}

Tensor linalg_ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian,
                        const OutArg& out) {
  const char* op = "torch.linalg.ldl_solve";
  check_matrix(op, LD, true);
  FLB_CHECK(is_integral(pivots->dtype(), false), op, ": Expected pivots to be integers. Got ",
            torch_type_name(pivots->dtype()));
  FLB_CHECK(pivots->sizes() == IntList(LD->sizes().data(), LD->dim() - 1), op,
            ": Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with ",
            "shape ", shape_str(pivots->sizes()), " instead");
  FLB_CHECK(B->dtype() == LD->dtype(), "Expected b and A to have the same dtype, but found b of ",
            "type ", torch_type_name(B->dtype()), " and A of type ", torch_type_name(LD->dtype()),
            " instead.");
  wrap_dim(-2, B->dim(), "linalg.ldl_solve");  // B must be a (batch of) matrices
  const int64_t n = LD->size(-1), k = B->size(-1);
  FLB_CHECK(B->size(-2) == n, "Incompatible matrix sizes for ", op, ": each A matrix is ", n,
            " by ", n, " but each b matrix is ", B->size(-2), " by ", k);
  DimVector batch = broadcast_batch(LD, B, op);
  const int64_t bn = numel_of(batch);
  Tensor piv =
      contiguous_copy(expand_to(to_dtype(pivots, ScalarType::Int64), with(batch, {n}), op));
  check_pivots(piv, n);
  piv = to_dtype(piv, ScalarType::Int32);
  Tensor rhs = colmajor(expand_batch(B, batch, op));
  if (rhs->numel() && n > 0)
    kernel<kernels::linalg_sytrs>(LD->device())(colmajor(expand_batch(LD, batch, op)),
                                                reshape(piv, {bn, n}), rhs, hermitian);
  return write_out(out, as_matrices(rhs, batch, n, k), "linalg.ldl_solve");
}

}  // namespace flambeau::ops
