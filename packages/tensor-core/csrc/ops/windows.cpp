// Frontends of the window functions (hann_window, ...): checks as PyTorch's,
// a 1-D output of the requested dtype, and the kernel that fills it.
#include "generated/kernels.h"
#include "generated/ops_windows.h"
#include "ops/common.h"
#include "ops/window_kernels.h"

namespace flambeau::ops {

namespace {

template <class K>
Tensor window(int64_t window_length, bool periodic, double alpha, double beta,
              std::optional<ScalarType> dtype, std::optional<Device> device, bool requires_grad) {
  const char* op = K::name;
  const ScalarType t = dtype.value_or(default_dtype());
  FLB_CHECK_T(NotImplementedError, !is_complex(t), op, ": not implemented for complex dtype ",
              dtype_name(t));
  FLB_CHECK(is_floating(t), op, " expects floating point dtypes, got: ", dtype_name(t));
  FLB_CHECK(window_length >= 0, op,
            " requires non-negative window_length, got window_length=", window_length);
  Tensor out = flambeau::empty({window_length}, t, device.value_or(Device{}));
  if (window_length > 0) {
    kernel_for(handle<K>(), out->device())(out, periodic, alpha, beta);
  }
  if (requires_grad) out->set_requires_grad(true);
  return out;
}

}  // namespace

Tensor hann_window(int64_t window_length, bool periodic, std::optional<ScalarType> dtype,
                   std::optional<Device> device, bool requires_grad) {
  return window<kernels::hann_window>(window_length, periodic, 0.5, 0.5, dtype, device,
                                      requires_grad);
}

Tensor hamming_window(int64_t window_length, bool periodic, double alpha, double beta,
                      std::optional<ScalarType> dtype, std::optional<Device> device,
                      bool requires_grad) {
  return window<kernels::hamming_window>(window_length, periodic, alpha, beta, dtype, device,
                                         requires_grad);
}

Tensor blackman_window(int64_t window_length, bool periodic, std::optional<ScalarType> dtype,
                       std::optional<Device> device, bool requires_grad) {
  return window<kernels::blackman_window>(window_length, periodic, 0, 0, dtype, device,
                                          requires_grad);
}

Tensor bartlett_window(int64_t window_length, bool periodic, std::optional<ScalarType> dtype,
                       std::optional<Device> device, bool requires_grad) {
  return window<kernels::bartlett_window>(window_length, periodic, 0, 0, dtype, device,
                                          requires_grad);
}

Tensor kaiser_window(int64_t window_length, bool periodic, double beta,
                     std::optional<ScalarType> dtype, std::optional<Device> device,
                     bool requires_grad) {
  return window<kernels::kaiser_window>(window_length, periodic, 0, beta, dtype, device,
                                        requires_grad);
}

}  // namespace flambeau::ops
