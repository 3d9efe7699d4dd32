// Joining tensors: cat (and its aliases), stack, hstack, vstack, dstack.
#include <vector>

#include "generated/ops.h"
#include "ops/shape_util.h"

namespace flambeau::ops {

namespace {

// PyTorch's legacy rule: a 1-d empty tensor joins anything (it is skipped).
bool skipped(const Tensor& t) { return t->dim() == 1 && t->sizes()[0] == 0; }

std::vector<Tensor> at_least(const std::vector<Tensor>& ts, int64_t nd) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) {
    if (t->dim() >= nd) {
      out.push_back(t);
    } else if (t->dim() == 0) {
      out.push_back(reshape(t, DimVector(static_cast<size_t>(nd), 1)));
    } else if (t->dim() == 1) {
      DimVector s{1, t->sizes()[0]};
      if (nd == 3) s.push_back(1);
      out.push_back(reshape(t, s));
    } else {  // 2-d to 3-d
      out.push_back(unsqueeze(t, 2));
    }
  }
  return out;
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim, const OutArg& out) {
  FLB_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  const Tensor* ref = nullptr;
  for (size_t i = 0; i < tensors.size(); ++i) {
    FLB_CHECK(tensors[i]->dim() > 0, "zero-dimensional tensor (at position ", i,
              ") cannot be concatenated");
    FLB_CHECK(tensors[i]->device() == tensors[0]->device(),
              "Expected all tensors to be on the same device, but found at least two devices, ",
              tensors[0]->device().str(), " and ", tensors[i]->device().str(), "!");
    if (!ref && !skipped(tensors[i])) ref = &tensors[i];
  }
  ScalarType dtype = result_type(Span<Tensor>(tensors));
  Device device = tensors[0]->device();
  if (!ref) ref = &tensors[0];  // all empty: the result is empty too
  int64_t d = wrap_dim(dim, (*ref)->dim(), "cat");
  DimVector shape((*ref)->sizes());
  shape[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (skipped(t)) continue;
    FLB_CHECK(t->dim() == (*ref)->dim(), "Tensors must have same number of dimensions: got ",
              (*ref)->dim(), " and ", t->dim());
    for (int64_t k = 0; k < t->dim(); ++k) {
      FLB_CHECK(k == d || t->sizes()[k] == shape[k], "Sizes of tensors must match except in ",
                "dimension ", d, ". Expected size ", shape[k], " but got size ", t->sizes()[k],
                " for tensor number ", i, " in the list.");
    }
    shape[d] += t->sizes()[d];
  }
  if (out.given()) {
    for (const Tensor& t : tensors) {
      FLB_CHECK(t->storage() != out.tensor->storage() || t->numel() == 0,
                "cat: unsupported operation: some elements of the input tensor and the "
                "written-to tensor refer to a single memory location. Please clone() the tensor "
                "before performing the operation.");
    }
  }
  Tensor result = prepare_out(out, shape, dtype, device, "cat");
  int64_t start = 0;
  for (const Tensor& t : tensors) {
    if (skipped(t)) continue;
    int64_t len = t->sizes()[d];
    if (len > 0) copy_into(narrow(result, d, start, len), t);
    start += len;
  }
  return result;
}

Tensor concat(const std::vector<Tensor>& tensors, int64_t dim, const OutArg& out) {
  return cat(tensors, dim, out);
}

Tensor concatenate(const std::vector<Tensor>& tensors, int64_t axis, const OutArg& out) {
  return cat(tensors, axis, out);
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim, const OutArg& out) {
  FLB_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  int64_t d = wrap_dim(dim, tensors[0]->dim() + 1, "stack");
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    FLB_CHECK(tensors[i]->sizes() == tensors[0]->sizes(),
              "stack expects each tensor to be equal size, but got ",
              shape_str(tensors[0]->sizes()), " at entry 0 and ", shape_str(tensors[i]->sizes()),
              " at entry ", i);
    parts.push_back(unsqueeze(tensors[i], d));
  }
  return cat(parts, d, out);
}

Tensor hstack(const std::vector<Tensor>& tensors, const OutArg& out) {
  FLB_CHECK(!tensors.empty(), "hstack expects a non-empty TensorList");
  std::vector<Tensor> ts = at_least(tensors, 1);
  return cat(ts, ts[0]->dim() == 1 ? 0 : 1, out);
}

Tensor vstack(const std::vector<Tensor>& tensors, const OutArg& out) {
  FLB_CHECK(!tensors.empty(), "vstack expects a non-empty TensorList");
  return cat(at_least(tensors, 2), 0, out);
}

Tensor dstack(const std::vector<Tensor>& tensors, const OutArg& out) {
  FLB_CHECK(!tensors.empty(), "dstack expects a non-empty TensorList");
  return cat(at_least(tensors, 3), 2, out);
}

}  // namespace flambeau::ops
