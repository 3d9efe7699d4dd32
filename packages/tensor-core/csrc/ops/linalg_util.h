// Helpers shared by the linear-algebra frontends (ops/linalg_*.cpp).
#pragma once
#include "core/error.h"
#include "ops/common.h"

namespace flambeau::ops::linalg {

// The complex conjugate of t (t itself when it is real).
Tensor conj(const Tensor& t);
// t with its last two dims swapped and conjugated (the adjoint A^H).
Tensor adjoint(const Tensor& t);
// The leading (batch) dims of a batch of matrices.
DimVector batch_of(const Tensor& t);
// The real type of a complex dtype (itself for real types).
ScalarType real_dtype(ScalarType t);

}  // namespace flambeau::ops::linalg
