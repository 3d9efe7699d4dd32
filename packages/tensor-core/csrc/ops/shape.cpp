// View and reshape operators. Views share the storage of their base.
#include <optional>

#include "generated/ops.h"
#include "ops/shape_util.h"

namespace flambeau {

DimVector infer_size(IntList shape, int64_t numel, const char* op) {
  DimVector out(shape);
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      FLB_CHECK(infer < 0, op, ": only one dimension can be inferred");
      infer = static_cast<int64_t>(i);
    } else {
      FLB_CHECK(shape[i] >= 0, op, ": invalid shape dimension ", shape[i]);
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    FLB_CHECK(known != 0 && numel % known == 0, op, ": shape '", shape_str(shape),
              "' is invalid for input of size ", numel);
    out[infer] = numel / known;
  } else {
    FLB_CHECK(known == numel, op, ": shape '", shape_str(shape), "' is invalid for input of size ",
              numel);
  }
  return out;
}

// Strides giving `new_sizes` over the same memory as (sizes, strides), or
// nullopt when no such strides exist (PyTorch's computeStride).
std::optional<DimVector> view_strides(IntList sizes, IntList strides, IntList new_sizes) {
  DimVector out(new_sizes.size());
  if (sizes.empty()) {
    for (auto& s : out) s = 1;
    return out;
  }
  if (numel_of(sizes) == 0) {
    if (sizes == new_sizes) return DimVector(strides);
    return contiguous_strides(new_sizes);
  }
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

namespace ops {

Tensor view(const Tensor& self, IntList size) {
  DimVector shape = infer_size(size, self->numel(), "view");
  auto strides = view_strides(self->sizes(), self->strides(), shape);
  FLB_CHECK(strides.has_value(), "view: view size ", shape_str(shape),
            " is not compatible with input tensor's size ", shape_str(self->sizes()),
            " and stride ", shape_str(self->strides()),
            " (at least one dimension spans across two contiguous subspaces); use "
            ".reshape(...) instead");
  return make_view(self, shape, *strides, self->offset());
}

Tensor reshape(const Tensor& input, IntList shape) {
  DimVector sizes = infer_size(shape, input->numel(), "reshape");
  if (auto strides = view_strides(input->sizes(), input->strides(), sizes))
    return make_view(input, sizes, *strides, input->offset());
  return view(clone(input), sizes);
}

}  // namespace ops
}  // namespace flambeau
