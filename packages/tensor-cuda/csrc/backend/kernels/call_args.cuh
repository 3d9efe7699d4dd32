// Reading a kernel call's arguments (flb_kernel_call), shared by the kernel files'
// host code: optional tensors, layouts, and dispatch on an element width or a
// floating dtype.
#pragma once
#include <flambeau/backend_abi.h>

#include <cstdint>
#include <type_traits>

#include "backend/kernels/dtypes.cuh"
#include "backend/kernels/launch.cuh"

namespace flambeau::cuda::kernels {

// Whether the call's k-th tensor is there (an absent optional one has no data, ndim -1).
inline bool present(const flb_kernel_call* c, int k) {
  return c->n_tensors > k && c->tensors[k].data != nullptr && c->tensors[k].ndim >= 0;
}

// The k-th tensor's elements, or nullptr when it is absent.
template <class T>
const T* optional_data(const flb_kernel_call* c, int k) {
  return present(c, k) ? static_cast<const T*>(c->tensors[k].data) : nullptr;
}

// Row-major contiguous (size-1 dims may have any stride).
inline bool dense(const flb_tensor& t) {
  int64_t expected = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.sizes[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.sizes[d];
  }
  return true;
}

// Calls f(W{}) with the unsigned type of `bytes` bytes (kernels that only move
// elements); false for other widths.
template <class F>
bool dispatch_width(int64_t bytes, F&& f) {
  switch (bytes) {
    case 1:
      f(uint8_t{});
      return true;
    case 2:
      f(uint16_t{});
      return true;
    case 4:
      f(uint32_t{});
      return true;
    case 8:
      f(uint64_t{});
      return true;
    default:
      return false;
  }
}

// Runs f(T{}) for the floating dtype `dtype` (half and bfloat16 included); the
// call's refusal for any other.
template <class F>
flb_status with_float_dtype(const flb_kernel_call* c, int32_t dtype, F&& f) {
  flb_status status = FLB_OK;
  const bool known = dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_floating_point_v<acc_t<T>>)
      status = unsupported_dtypes(c);
    else
      status = f(tag);
  });
  return known ? status : unsupported_dtypes(c);
}

}  // namespace flambeau::cuda::kernels
