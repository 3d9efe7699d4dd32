// The strided iterator every CPU elementwise and reduction kernel runs on.
//
// Operands (output first) share one iteration shape; a broadcast input has
// stride 0 along its broadcast dims. build() sorts dims so the innermost has the
// smallest output stride, then coalesces neighbouring dims whose strides chain,
// so a contiguous tensor of any rank becomes one flat loop. for_each() hands
// the kernel 1-D runs: loop(char** data, const int64_t* byte_strides, int64_t n).
#pragma once
#include <array>

#include "core/tensor.h"
#include "cpu/parallel.h"

namespace flambeau {

class TensorIterator {
 public:
  static constexpr int kMaxOperands = 8;

  // `operands` must all have shape `shape` (callers expand inputs first).
  static TensorIterator build(Span<Tensor> operands);

  int ndim() const { return static_cast<int>(shape_.size()); }
  int ntensors() const { return ntensors_; }
  int64_t numel() const { return numel_; }
  IntList shape() const { return shape_; }
  // Byte stride of operand t along (coalesced) dim d.
  int64_t stride(int t, int d) const { return strides_[t][d]; }
  char* base(int t) const { return base_[t]; }

  // Serial walk over flat indices [begin, end) of the (coalesced) shape.
  template <class Loop>
  void serial_for_each(const Loop& loop, int64_t begin, int64_t end) const;
  // Parallel over the flat range when it is large enough. Only valid when
  // every output element is written by exactly one index (no reductions).
  template <class Loop>
  void for_each(const Loop& loop, int64_t grain = kGrainSize) const {
    parallel_for(0, numel_, grain, [&](int64_t b, int64_t e) { serial_for_each(loop, b, e); });
  }

 private:
  int ntensors_ = 0;
  int64_t numel_ = 0;
  DimVector shape_;  // innermost last
  std::array<DimVector, kMaxOperands> strides_;
  std::array<char*, kMaxOperands> base_{};
};

template <class Loop>
void TensorIterator::serial_for_each(const Loop& loop, int64_t begin, int64_t end) const {
  if (begin >= end) return;
  const int nd = ndim();
  const int nt = ntensors_;
  std::array<char*, kMaxOperands> ptrs;
  std::array<int64_t, kMaxOperands> inner;
  if (nd == 0) {
    for (int t = 0; t < nt; ++t) {
      ptrs[t] = base_[t];
      inner[t] = 0;
    }
    loop(ptrs.data(), inner.data(), int64_t(1));
    return;
  }
  for (int t = 0; t < nt; ++t) inner[t] = strides_[t][nd - 1];
  // Unravel `begin` into a multi-index (innermost last).
  DimVector idx(nd);
  int64_t rem = begin;
  for (int d = nd - 1; d >= 0; --d) {
    idx[d] = rem % shape_[d];
    rem /= shape_[d];
  }
  const int64_t inner_size = shape_[nd - 1];
  int64_t pos = begin;
  while (pos < end) {
    for (int t = 0; t < nt; ++t) {
      char* p = base_[t];
      for (int d = 0; d < nd; ++d) p += idx[d] * strides_[t][d];
      ptrs[t] = p;
    }
    int64_t n = std::min(inner_size - idx[nd - 1], end - pos);
    loop(ptrs.data(), inner.data(), n);
    pos += n;
    idx[nd - 1] += n;
    for (int d = nd - 1; d > 0 && idx[d] == shape_[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

}  // namespace flambeau
