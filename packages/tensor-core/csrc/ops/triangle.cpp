// Triangles and diagonals of matrices: tril, triu, diag, diag_embed.
#include "generated/kernels.h"
#include "generated/ops.h"
#include "ops/shape_util.h"

namespace flambeau::ops {

namespace {

// TriangleKernel: declared in kernels/table.yaml.

template <class K>
Tensor triangle(const Tensor& input, int64_t diagonal, const OutArg& out) {
  const char* name = K::name;
  FLB_CHECK(input->dim() >= 2, name, ": input tensor must have at least 2 dimensions");
  FLB_CHECK(
      !out.given() || out.tensor.get() == input.get() || out.tensor->storage() != input->storage(),
      name,
      ": unsupported operation: the input and the written-to tensor share memory. "
      "Please clone() the input first.");
  Tensor result = prepare_out(out, input->sizes(), input->dtype(), input->device(), name);
  if (result.get() != input.get()) copy_into(result, input);
  if (result->numel() > 0) {
    const auto& op = handle<K>();
    kernel_for(op, result->device())(result, diagonal);
  }
  return result;
}

}  // namespace

Tensor tril(const Tensor& input, int64_t diagonal, const OutArg& out) {
  return triangle<kernels::tril>(input, diagonal, out);
}

Tensor triu(const Tensor& input, int64_t diagonal, const OutArg& out) {
  return triangle<kernels::triu>(input, diagonal, out);
}

Tensor diag(const Tensor& input, int64_t diagonal, const OutArg& out) {
  FLB_CHECK(input->dim() == 1 || input->dim() == 2, "diag(): Supports 1D or 2D tensors. Got ",
            input->dim(), "D");
  if (input->dim() == 1) {
    int64_t n = input->sizes()[0] + (diagonal < 0 ? -diagonal : diagonal);
    FLB_CHECK(!out.given() || out.tensor->storage() != input->storage(),
              "diag: unsupported operation: the input and the written-to tensor share memory. "
              "Please clone() the input first.");
    Tensor result = prepare_out(out, {n, n}, input->dtype(), input->device(), "diag");
    zero_(result);
    copy_into(ops::diagonal(result, diagonal, 0, 1), input);
    return result;
  }
  FLB_CHECK(!out.given() || out.tensor->storage() != input->storage(),
            "diag: unsupported operation: the input and the written-to tensor share memory. "
            "Please clone() the input first.");
  Tensor d = ops::diagonal(input, diagonal, 0, 1);
  Tensor result = prepare_out(out, d->sizes(), input->dtype(), input->device(), "diag");
  copy_into(result, d);
  return result;
}

Tensor diag_embed(const Tensor& input, int64_t offset, int64_t dim1, int64_t dim2) {
  FLB_CHECK(input->dim() >= 1, "diag_embed: expected a tensor with at least 1 dim");
  int64_t nd = input->dim() + 1;
  int64_t a = wrap_dim(dim1, nd, "diag_embed"), b = wrap_dim(dim2, nd, "diag_embed");
  FLB_CHECK(a != b, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t n = input->sizes()[input->dim() - 1] + (offset < 0 ? -offset : offset);
  DimVector shape(input->sizes());
  shape.erase(shape.size() - 1);
  shape.insert(static_cast<size_t>(std::min(a, b)), n);
  shape.insert(static_cast<size_t>(std::max(a, b)), n);
  Tensor result = flambeau::empty(shape, input->dtype(), input->device());
  zero_(result);
  copy_into(ops::diagonal(result, offset, a, b), input);
  return result;
}

}  // namespace flambeau::ops
