// Frontends of matrix products. Every product is reduced to one batched
// kernel, "bmm": out (B, M, N) = a (B, M, K) @ b (B, K, N).
#include "generated/kernels.h"
#include "generated/ops.h"

namespace flambeau::ops {

namespace {

// BmmKernel: declared in kernels/table.yaml.

void check_operands(const char* op, const Tensor& a, const Tensor& b) {
  FLB_CHECK(a->dtype() == b->dtype(), op,
            ": expected both operands to have the same dtype, but got ", dtype_name(a->dtype()),
            " and ", dtype_name(b->dtype()));
  FLB_CHECK(a->dtype() != ScalarType::Bool, op, ": not implemented for dtype bool");
  common_device({&a, &b}, op);
}

[[noreturn]] void fail_shapes(const char* op, const Tensor& a, const Tensor& b, int64_t k1,
                              int64_t k2) {
  fail(op, ": shapes ", shape_str(a->sizes()), " and ", shape_str(b->sizes()),
       " cannot be multiplied (", k1, " != ", k2, ")");
}

// a: (B, M, K), b: (B, K, N), both already checked; writes into `out` of shape
// `result_shape` (any layout), returning it.
Tensor run_bmm(const char* op, const Tensor& a, const Tensor& b, IntList result_shape,
               const OutArg& out) {
  // As PyTorch: the product's out= must have the operands' dtype (the kernel writes
  // out's memory in the operands' dtype).
  FLB_CHECK(!out.given() || out.tensor->dtype() == a->dtype(), op,
            ": expected out tensor to have dtype ", dtype_name(a->dtype()), ", but got ",
            dtype_name(out.tensor->dtype()), " instead");
  Tensor dest = prepare_out(out, result_shape, a->dtype(), a->device(), op);
  DimVector bmn = {a->sizes()[0], a->sizes()[1], b->sizes()[2]};
  Tensor target = dest->is_contiguous()
                      ? make_view(dest, bmn, contiguous_strides(bmn), dest->offset())
                      : empty(bmn, a->dtype(), a->device());
  if (target->numel() > 0) kernel<kernels::bmm>(a->device())(target, a, b);
  if (target->storage() != dest->storage())
    copy_into(dest, make_view(target, result_shape, contiguous_strides(result_shape), 0));
  return dest;
}

Tensor as_batch(const Tensor& t, int64_t rows, int64_t cols) { return reshape(t, {1, rows, cols}); }

}  // namespace

Tensor mm(const Tensor& input, const Tensor& mat2, const OutArg& out) {
  check_operands("mm", input, mat2);
  FLB_CHECK(input->dim() == 2 && mat2->dim() == 2, "mm: expected 2-D tensors, but got ",
            input->dim(), "-D and ", mat2->dim(), "-D");
  if (input->sizes()[1] != mat2->sizes()[0])
    fail_shapes("mm", input, mat2, input->sizes()[1], mat2->sizes()[0]);
  int64_t m = input->sizes()[0], k = input->sizes()[1], n = mat2->sizes()[1];
  return run_bmm("mm", as_batch(input, m, k), as_batch(mat2, k, n), {m, n}, out);
}

Tensor bmm(const Tensor& input, const Tensor& mat2, const OutArg& out) {
  check_operands("bmm", input, mat2);
  FLB_CHECK(input->dim() == 3 && mat2->dim() == 3, "bmm: expected 3-D tensors, but got ",
            input->dim(), "-D and ", mat2->dim(), "-D");
  FLB_CHECK(input->sizes()[0] == mat2->sizes()[0], "bmm: batch sizes differ (", input->sizes()[0],
            " != ", mat2->sizes()[0], ")");
  if (input->sizes()[2] != mat2->sizes()[1])
    fail_shapes("bmm", input, mat2, input->sizes()[2], mat2->sizes()[1]);
  return run_bmm("bmm", input, mat2, {input->sizes()[0], input->sizes()[1], mat2->sizes()[2]}, out);
}

Tensor mv(const Tensor& input, const Tensor& vec, const OutArg& out) {
  check_operands("mv", input, vec);
  FLB_CHECK(input->dim() == 2 && vec->dim() == 1,
            "mv: expected a 2-D matrix and a 1-D vector, "
            "but got ",
            input->dim(), "-D and ", vec->dim(), "-D");
  int64_t m = input->sizes()[0], k = input->sizes()[1];
  if (k != vec->sizes()[0]) fail_shapes("mv", input, vec, k, vec->sizes()[0]);
  return run_bmm("mv", as_batch(input, m, k), as_batch(vec, k, 1), {m}, out);
}

Tensor dot(const Tensor& input, const Tensor& other, const OutArg& out) {
  check_operands("dot", input, other);
  FLB_CHECK(input->dim() == 1 && other->dim() == 1, "dot: 1D tensors expected, but got ",
            input->dim(), "D and ", other->dim(), "D tensors");
  FLB_CHECK(input->numel() == other->numel(), "dot: inconsistent tensor size, expected tensor [",
            input->numel(), "] and src [", other->numel(),
            "] to have the same number of elements, but got ", input->numel(), " and ",
            other->numel(), " elements respectively");
  int64_t k = input->numel();
  return run_bmm("dot", as_batch(input, 1, k), as_batch(other, k, 1), {}, out);
}

Tensor matmul(const Tensor& input, const Tensor& other, const OutArg& out) {
  const int64_t da = input->dim(), db = other->dim();
  FLB_CHECK(da > 0 && db > 0,
            "matmul: both arguments to matmul need to be at least 1D, but they "
            "are ",
            da, "D and ", db, "D");
  check_operands("matmul", input, other);
  // 1-D operands act as a row (left) or a column (right) vector.
  IntList as = input->sizes(), bs = other->sizes();
  DimVector a_mat = da == 1 ? DimVector{1, as[0]} : DimVector{as[da - 2], as[da - 1]};
  DimVector b_mat = db == 1 ? DimVector{bs[0], 1} : DimVector{bs[db - 2], bs[db - 1]};
  if (a_mat[1] != b_mat[0]) fail_shapes("matmul", input, other, a_mat[1], b_mat[0]);
  if (da == 1 && db == 1) return dot(input, other, out);
  if (da == 2 && db == 1) return mv(input, other, out);
  if (da == 2 && db == 2) return mm(input, other, out);
  DimVector a_batch(da > 2 ? IntList(as.data(), da - 2) : IntList());
  DimVector b_batch(db > 2 ? IntList(bs.data(), db - 2) : IntList());
  DimVector batch = broadcast_shapes(a_batch, b_batch, "matmul");
  int64_t nb = numel_of(batch);
  DimVector a_full = batch, b_full = batch;
  a_full.push_back(a_mat[0]);
  a_full.push_back(a_mat[1]);
  b_full.push_back(b_mat[0]);
  b_full.push_back(b_mat[1]);
  Tensor a3 = reshape(expand_to(reshape(input, da == 1 ? IntList(a_mat) : as), a_full, "matmul"),
                      {nb, a_mat[0], a_mat[1]});
  Tensor b3 = reshape(expand_to(reshape(other, db == 1 ? IntList(b_mat) : bs), b_full, "matmul"),
                      {nb, b_mat[0], b_mat[1]});
  DimVector result = batch;
  if (da > 1) result.push_back(a_mat[0]);
  if (db > 1) result.push_back(b_mat[1]);
  return run_bmm("matmul", a3, b3, result, out);
}

}  // namespace flambeau::ops
