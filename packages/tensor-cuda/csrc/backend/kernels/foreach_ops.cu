// _foreach: one list element of a _foreach_* operator (the optimizers' fused
// multi-tensor ops), tensors [out, a, b?, c?] contiguous, of out's dtype and
// numel (out may alias a); scalars [s0, s1]; ints [op (ForeachOp)]. One pass,
// computed in acc_t (float for the 16-bit floats; the core sends float32 and
// float64), with the CPU kernel's formulas: NaN-propagating max/min, a ** 2 as
// a * a, lerp's two exact-at-the-ends formulas (the scalar weight picks one for
// the whole tensor, a tensor weight per element), addcdiv as a + s0 * (b / c).
// The same formulas serve the elementwise lerp, addcmul and addcdiv (tensors
// [out, self, t1 / end, t2 / weight], scalars [value]; inputs broadcast by the
// core), which the _foreach_* operators fall back to for strided or mixed lists.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

template <class A>
__device__ inline A max_nan(A a, A b) {
  return a != a ? a : (b != b ? b : (a > b ? a : b));
}
template <class A>
__device__ inline A min_nan(A a, A b) {
  return a != a ? a : (b != b ? b : (a < b ? a : b));
}

template <class A>
__device__ inline A foreach_value(ForeachOp op, A a, A b, A c, A s0, A s1) {
  switch (op) {
    case ForeachOp::kAddScalar:
      return a + s0;
    case ForeachOp::kAddTensor:
      return a + s1 * b;
    case ForeachOp::kMulScalar:
      return a * s0;
    case ForeachOp::kMulTensor:
      return a * b;
    case ForeachOp::kDivScalar:
      return a / s0;
    case ForeachOp::kDivTensor:
      return a / b;
    case ForeachOp::kMaxScalar:
      return max_nan(a, s0);
    case ForeachOp::kMaxTensor:
      return max_nan(a, b);
    case ForeachOp::kMinScalar:
      return min_nan(a, s0);
    case ForeachOp::kMinTensor:
      return min_nan(a, b);
    case ForeachOp::kPowScalar:
      return s0 == A(2) ? a * a : pow(a, s0);
    case ForeachOp::kPowTensor:
      return pow(a, b);
    case ForeachOp::kRPowScalar:
      return pow(s0, a);
    case ForeachOp::kLerpScalar:
      return s0 < A(0.5) ? a + s0 * (b - a) : b - (b - a) * (A(1) - s0);
    case ForeachOp::kLerpTensor: {
      const A d = b - a;
      return c < A(0.5) ? a + c * d : b - d * (A(1) - c);
    }
    case ForeachOp::kAddcmul:
      return a + s0 * b * c;
    case ForeachOp::kAddcdiv:
      return a + s0 * (b / c);
    case ForeachOp::kSqrt:
      return sqrt(a);
    case ForeachOp::kNeg:
      return -a;
    case ForeachOp::kAbs:
      return fabs(a);
    case ForeachOp::kExp:
      return exp(a);
    case ForeachOp::kSign:
      return a > A(0) ? A(1) : (a < A(0) ? A(-1) : a);  // keeps NaN and signed zero
    case ForeachOp::kReciprocal:
      return A(1) / a;
  }
  return a;
}

template <class T>
__global__ void foreach_kernel(ForeachOp op, T* out, const T* a, const T* b, const T* c, int64_t n,
                               acc_t<T> s0, acc_t<T> s1) {
  using A = acc_t<T>;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const A bv = b ? convert<A>(b[i]) : A(0);
    const A cv = c ? convert<A>(c[i]) : A(0);
    out[i] = convert<T>(foreach_value<A>(op, convert<A>(a[i]), bv, cv, s0, s1));
  }
}

// lerp, addcmul, addcdiv through the elementwise loop.
template <class A>
struct Fused3 {
  ForeachOp op;
  A value;
  __device__ A operator()(A a, A b, A c) const {
    return foreach_value<A>(op, a, b, c, value, A(0));
  }
};

double scalar_value(const flb_kernel_call* c, int i) {
  if (c->n_scalars <= i) return 0.0;
  const flb_scalar& s = c->scalars[i];
  return s.kind == FLB_SCALAR_FLOAT || s.kind == FLB_SCALAR_COMPLEX ? s.real
                                                                    : static_cast<double>(s.i);
}

bool contiguous(const flb_tensor& t) {
  int64_t expected = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.sizes[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.sizes[d];
  }
  return true;
}

}  // namespace

flb_status foreach_op(void*, const flb_kernel_call* c) {
  if (c->n_tensors < 2 || c->n_ints < 1)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors or op");
  if (c->ints[0] < 0 || c->ints[0] > static_cast<int64_t>(ForeachOp::kReciprocal))
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "unknown foreach op");
  const auto op = static_cast<ForeachOp>(c->ints[0]);
  const flb_tensor& out = c->tensors[0];
  const int64_t n = numel(out);
  const void* operand[3] = {nullptr, nullptr, nullptr};  // a, b, c
  for (int k = 1; k < c->n_tensors && k <= 3; ++k) {
    const flb_tensor& t = c->tensors[k];
    if (t.data == nullptr || t.ndim < 0) continue;  // absent
    if (t.dtype != out.dtype || numel(t) != n || !contiguous(t)) return unsupported_dtypes(c);
    operand[k - 1] = t.data;
  }
  if (operand[0] == nullptr || !contiguous(out))
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected contiguous out and a");
  if (n == 0) return FLB_OK;
  flb_status status = FLB_OK;
  const bool known = dispatch(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    if constexpr (!std::is_floating_point_v<A>) {
      status = unsupported_dtypes(c);
    } else {
      runtime::DeviceGuard guard(c->device_index);
      foreach_kernel<T><<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(c->stream)>>>(
          op, static_cast<T*>(out.data), static_cast<const T*>(operand[0]),
          static_cast<const T*>(operand[1]), static_cast<const T*>(operand[2]), n,
          static_cast<A>(scalar_value(c, 0)), static_cast<A>(scalar_value(c, 1)));
      status = launch_status(c->op);
    }
  });
  return known ? status : unsupported_dtypes(c);
}

flb_status fused_pointwise(void* ctx, const flb_kernel_call* c) {
  const ForeachOp op = *static_cast<const ForeachOp*>(ctx);
  if (c->n_tensors != 4 || !all_dtype(c, c->tensors[0].dtype)) return unsupported_dtypes(c);
  flb_status status = FLB_OK;
  const bool known = dispatch(c->tensors[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    if constexpr (!std::is_floating_point_v<A>)
      status = unsupported_dtypes(c);
    else
      status = launch_elementwise<T, 3>(c, Fused3<A>{op, static_cast<A>(scalar_value(c, 0))});
  });
  return known ? status : unsupported_dtypes(c);
}

}  // namespace flambeau::cuda::kernels
