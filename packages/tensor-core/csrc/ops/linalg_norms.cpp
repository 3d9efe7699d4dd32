// flambeau.linalg norms: vector norms through the core's norm reduction,
// matrix norms from absolute row/column sums or singular values.
#include <cmath>

#include "generated/ops_linalg_lapack.h"
#include "generated/ops_pointwise.h"
#include "generated/ops_reduction.h"
#include "generated/ops_shape.h"
#include "ops/linalg_util.h"
#include "ops/reduce_util.h"

namespace flambeau::ops {

namespace {

void check_float(const char* op, const Tensor& t, std::optional<ScalarType> dtype) {
  ScalarType in = dtype.value_or(t->dtype());
  FLB_CHECK(is_floating(in) || is_complex(in), op,
            ": Expected a floating point or complex tensor as input. Got ", torch_type_name(in));
}

// The two matrix dims, wrapped and distinct.
std::pair<int64_t, int64_t> matrix_dims(const char* op, const Tensor& A, IntList dim) {
  FLB_CHECK(dim.size() == 2, op, ": dim must be a 2-tuple. Got ", shape_str(dim));
  FLB_CHECK(A->dim() >= 2, op, ": The input tensor A must have at least 2 dimensions.");
  int64_t d0 = wrap_dim(dim[0], A->dim(), op), d1 = wrap_dim(dim[1], A->dim(), op);
  FLB_CHECK(d0 != d1, op, ": dims must be different. Got (", dim[0], ", ", dim[1], ")");
  return {d0, d1};
}

// Reinserts the two reduced dims (size 1) when keepdim.
Tensor keep_dims(Tensor r, int64_t d0, int64_t d1, bool keepdim) {
  if (!keepdim) return r;
  r = unsqueeze(r, std::min(d0, d1));
  return unsqueeze(r, std::max(d0, d1));
}

}  // namespace

Tensor linalg_vector_norm(const Tensor& x, const Scalar& ord, const std::optional<DimVector>& dim,
                          bool keepdim, std::optional<ScalarType> dtype) {
  check_float("linalg.vector_norm", x, dtype);
  return norm(x, ord, dim, keepdim, dtype, {});
}

Tensor linalg_matrix_norm_str(const Tensor& A, const std::string& ord, IntList dim, bool keepdim,
                              std::optional<ScalarType> dtype) {
  const char* op = "linalg.matrix_norm";
  check_float(op, A, dtype);
  auto [d0, d1] = matrix_dims(op, A, dim);
  if (ord == "fro") return norm(A, Scalar(2.0), DimVector{d0, d1}, keepdim, dtype, {});
  FLB_CHECK(ord == "nuc", op, ": Order ", ord, " not supported.");
  Tensor a = dtype ? to_dtype(A, *dtype) : A;
  Tensor s = linalg_svdvals(movedim(a, DimVector{d0, d1}, DimVector{-2, -1}), std::nullopt);
  return keep_dims(sum(s, DimVector{-1}, false, std::nullopt, {}), d0, d1, keepdim);
}

Tensor linalg_matrix_norm(const Tensor& A, const Scalar& ord, IntList dim, bool keepdim,
                          std::optional<ScalarType> dtype) {
  const char* op = "linalg.matrix_norm";
  check_float(op, A, dtype);
  auto [d0, d1] = matrix_dims(op, A, dim);
  const double o = ord.to_double();
  Tensor a = dtype ? to_dtype(A, *dtype) : A;
  if (std::abs(o) == 2) {
    Tensor s = linalg_svdvals(movedim(a, DimVector{d0, d1}, DimVector{-2, -1}), std::nullopt);
    Tensor r = o > 0 ? amax(s, DimVector{-1}, false, {}) : amin(s, DimVector{-1}, false, {});
    return keep_dims(r, d0, d1, keepdim);
  }
  FLB_CHECK(std::abs(o) == 1 || std::isinf(o), op, ": Order ", o, " not supported.");
  // ord 1: largest column sum (sum over rows d0, max over d1); inf: the transpose.
  int64_t sum_dim = std::abs(o) == 1 ? d0 : d1, max_dim = std::abs(o) == 1 ? d1 : d0;
  Tensor sums = sum(abs(a, {}), DimVector{sum_dim}, true, std::nullopt, {});
  Tensor r =
      o > 0 ? amax(sums, DimVector{max_dim}, true, {}) : amin(sums, DimVector{max_dim}, true, {});
  return keepdim ? r : squeeze(r, DimVector{d0, d1});
}

Tensor linalg_norm_str(const Tensor& A, const std::string& ord, const std::optional<DimVector>& dim,
                       bool keepdim, std::optional<ScalarType> dtype) {
  DimVector d = dim ? *dim : DimVector{-2, -1};
  FLB_CHECK(dim || A->dim() == 2,
            "linalg.norm: If dim is not specified but ord is, the input "
            "must be 1D or 2D. Got ",
            A->dim(), "D.");
  return linalg_matrix_norm_str(A, ord, d, keepdim, dtype);
}

Tensor linalg_norm(const Tensor& A, const std::optional<Scalar>& ord,
                   const std::optional<DimVector>& dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  if (dim) {
    FLB_CHECK(dim->size() == 1 || dim->size() == 2,
              "linalg.norm: If dim is specified, it must be of length 1 or 2. Got ",
              shape_str(*dim));
  } else if (ord) {
    FLB_CHECK(A->dim() == 1 || A->dim() == 2, "linalg.norm: If dim is not specified but ord is, ",
              "the input must be 1D or 2D. Got ", A->dim(), "D.");
  }
  const bool matrix = dim ? dim->size() == 2 : (ord && A->dim() == 2);
  if (matrix) {
    DimVector d = dim ? *dim : DimVector{-2, -1};
    if (!ord) return linalg_matrix_norm_str(A, "fro", d, keepdim, dtype);
    return linalg_matrix_norm(A, *ord, d, keepdim, dtype);
  }
  return linalg_vector_norm(A, ord.value_or(Scalar(2.0)), dim, keepdim, dtype);
}

}  // namespace flambeau::ops
