// Helpers of the LAPACK-backed frontends (see ops/lapack_frontend.h).
#include "ops/lapack_frontend.h"

#include "generated/ops_shape.h"
#include "generated/ops_tensor.h"
#include "ops/linalg_util.h"
#include "ops/reduce_util.h"  // torch_type_name

namespace flambeau::ops::lapack_frontend {

using linalg::batch_of;

void check_dtype(const char* op, const Tensor& a) {
  ScalarType t = a->dtype();
  FLB_CHECK(t == ScalarType::Float32 || t == ScalarType::Float64 || is_complex(t), op,
            ": Expected a floating point or complex tensor as input. Got ", torch_type_name(t));
}

void check_matrix(const char* op, const Tensor& a, bool square) {
  FLB_CHECK(a->dim() >= 2, op, ": The input tensor A must have at least 2 dimensions.");
  check_dtype(op, a);
  if (square)
    FLB_CHECK(a->size(-1) == a->size(-2), op,
              ": A must be batches of square matrices, but they are ", a->size(-2), " by ",
              a->size(-1), " matrices");
}

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  FLB_CHECK(a->dtype() == b->dtype(), op, ": Expected A and B to have the same dtype, but found A",
            " of type ", torch_type_name(a->dtype()), " and B of type ",
            torch_type_name(b->dtype()), " instead");
}

DimVector with(IntList batch, std::initializer_list<int64_t> tail) {
  DimVector s(batch);
  for (int64_t x : tail) s.push_back(x);
  return s;
}

Tensor colmajor(const Tensor& a) {
  const int64_t rows = a->size(-2), cols = a->size(-1);
  DimVector batch = batch_of(a);
  Tensor w = empty({numel_of(batch), cols, rows}, a->dtype(), a->device());
  DimVector shape = with(batch, {cols, rows});
  copy_into(make_view(w, shape, contiguous_strides(shape), 0), transpose(a, -2, -1));
  return w;
}

Tensor as_matrices(const Tensor& w, IntList batch, int64_t rows, int64_t cols) {
  DimVector strides = contiguous_strides(batch);
  for (int64_t& s : strides) s *= rows * cols;
  strides.push_back(1);
  strides.push_back(rows);
  return make_view(w, with(batch, {rows, cols}), strides, w->offset());
}

Tensor int32_zeros(IntList shape, Device device) {
  return zeros(shape, ScalarType::Int32, device, false);
}

DimVector broadcast_batch(const Tensor& a, const Tensor& b, const char* op) {
  return broadcast_shapes(batch_of(a), batch_of(b), op);
}

Tensor expand_batch(const Tensor& t, IntList batch, const char* op) {
  return expand_to(t, with(batch, {t->size(-2), t->size(-1)}), op);
}

}  // namespace flambeau::ops::lapack_frontend
