#include "cpu/tensor_iterator.h"

#include <numeric>

namespace flambeau {

TensorIterator TensorIterator::build(Span<Tensor> operands) {
  TensorIterator it;
  it.ntensors_ = static_cast<int>(operands.size());
  FLB_CHECK(it.ntensors_ >= 1 && it.ntensors_ <= kMaxOperands,
            "TensorIterator: unsupported operand count ", it.ntensors_);
  const Tensor& out = operands[0];
  const int nd = static_cast<int>(out->dim());
  it.numel_ = out->numel();
  for (int t = 0; t < it.ntensors_; ++t) {
    FLB_CHECK(operands[t]->sizes() == out->sizes(), "TensorIterator: operand ", t, " has shape ",
              shape_str(operands[t]->sizes()), ", expected ", shape_str(out->sizes()));
    it.base_[t] = operands[t]->data();
  }

  // Order dims by the output's strides (largest first), so writes are sequential
  // even into a permuted output; ties keep the original order.
  std::vector<int> perm(nd);
  std::iota(perm.begin(), perm.end(), 0);
  IntList key = out->strides();
  for (int i = 1; i < nd; ++i) {  // insertion sort; stride-0 dims of the output stay put
    for (int j = i; j > 0; --j) {
      int64_t outer = key[perm[j - 1]], inner = key[perm[j]];
      if (outer == 0 || inner == 0 || outer >= inner) break;
      std::swap(perm[j - 1], perm[j]);
    }
  }

  // Coalesce: merge dim d into the running outer dim when every operand's
  // strides chain (outer stride == inner stride * inner size). Size-1 dims vanish.
  DimVector shape;
  std::array<DimVector, kMaxOperands> strides;
  for (int i = 0; i < nd; ++i) {
    int d = perm[i];
    int64_t size = out->sizes()[d];
    if (size == 1) continue;
    bool merge = !shape.empty();
    for (int t = 0; merge && t < it.ntensors_; ++t) {
      int64_t outer = strides[t].back();
      int64_t inner = operands[t]->strides()[d] * static_cast<int64_t>(operands[t]->itemsize());
      merge = outer == inner * size;
    }
    if (merge) {
      shape[shape.size() - 1] *= size;
      for (int t = 0; t < it.ntensors_; ++t)
        strides[t][strides[t].size() - 1] =
            operands[t]->strides()[d] * static_cast<int64_t>(operands[t]->itemsize());
    } else {
      shape.push_back(size);
      for (int t = 0; t < it.ntensors_; ++t)
        strides[t].push_back(operands[t]->strides()[d] *
                             static_cast<int64_t>(operands[t]->itemsize()));
    }
  }
  if (it.numel_ == 0) {
    shape = DimVector{0};
    for (int t = 0; t < it.ntensors_; ++t) strides[t] = DimVector{0};
  }
  it.shape_ = shape;
  it.strides_ = strides;
  return it;
}

}  // namespace flambeau
