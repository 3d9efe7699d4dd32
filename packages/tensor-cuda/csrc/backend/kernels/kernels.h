// The CUDA kernels registered through the C ABI, and their registration.
#pragma once
#include <flambeau/backend_abi.h>

namespace flambeau::cuda::kernels {

// fill_ and copy_ (fill_copy.cu).
flb_status fill(void* ctx, const flb_kernel_call* call);
flb_status copy(void* ctx, const flb_kernel_call* call);
// add, sub, mul, div (binary_ops.cu); ctx is the BinaryOp.
enum class BinaryOp { kAdd, kSub, kMul, kDiv };
flb_status binary(void* ctx, const flb_kernel_call* call);
// Unary operators (unary_ops.cu); ctx is the UnaryOp.
enum class UnaryOp {
  kNeg,
  kAbs,
  kRelu,
  kExp,
  kLog,
  kSqrt,
  kRsqrt,
  kSin,
  kCos,
  kTanh,
  kSigmoid,
  kReciprocal
};
flb_status unary(void* ctx, const flb_kernel_call* call);
// Whether a unary operator is defined on integer (and bool) dtypes too.
bool unary_takes_integers(UnaryOp op);
// sum over dims (reduce_sum.cu).
flb_status sum(void* ctx, const flb_kernel_call* call);

// Registers every kernel above for device type `type`: FLB_OK or the core's error.
flb_status register_kernels(const flb_core_api* core, int32_t type);

}  // namespace flambeau::cuda::kernels
