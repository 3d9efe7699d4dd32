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
  // An in-place sampler into shared elements (an expanded view) has no meaning (which
  // draw wins?): refused, as PyTorch, rather than filled through a full-size copy.
  check_no_internal_overlap(self);
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
