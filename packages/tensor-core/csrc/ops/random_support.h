// Helpers shared by the sampler frontends (ops/random*.cpp).
#pragma once
#include "core/tensor.h"
#include "ops/common.h"

namespace flambeau {

// Runs fill(t) on a contiguous tensor laid out like `self` (self itself when
// contiguous), then copies back. Complex tensors are filled as 2n reals.
template <class F>
void fill_contiguous(const Tensor& self, const F& fill) {
  if (self->numel() == 0) return;
  // As PyTorch: an in-place sampler on a tensor whose elements share memory (an expanded
  // view) has no meaning (which draw wins?), so it is refused, not filled through a copy.
  for (int64_t d = 0; d < self->dim(); ++d)
    FLB_CHECK(self->strides()[d] != 0 || self->sizes()[d] <= 1,
              "unsupported operation: more than one element of the written-to tensor refers to "
              "a single memory location. Please clone() the tensor before performing the "
              "operation.");
  Tensor dst =
      self->is_contiguous() ? self : flambeau::empty(self->sizes(), self->dtype(), self->device());
  Tensor target = dst;
  if (is_complex(dst->dtype())) {
    int64_t n = dst->numel() * 2;
    target = make_ref<TensorImpl>(dst->storage(), DimVector{n}, DimVector{1}, dst->offset() * 2,
                                  to_real(dst->dtype()));
  }
  fill(target);
  if (dst != self) copy_into(self, dst);
}

// PyTorch's type for a sampler without a kernel for the dtype (a RuntimeError subclass).
inline void check_sampling_dtype(ScalarType dtype, const char* op) {
  FLB_CHECK_T(NotImplementedError, is_floating(dtype) || is_complex(dtype), op,
              ": not implemented for dtype ", dtype_name(dtype),
              " (a floating point or complex dtype is expected)");
}

}  // namespace flambeau
