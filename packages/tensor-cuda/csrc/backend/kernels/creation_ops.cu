// Range kernels filling a contiguous 1-d tensor, with the CPU kernels'
// arithmetic (cpu/creation_kernels.cpp):
//   arange:   tensors [out]; scalars [start, step]: start + step * i in double
//             for floats, int64 for integers;
//   linspace: tensors [out]; scalars [start, end]: from both ends toward the
//             middle, in double for integers and the compute type otherwise
//             (start and end first converted to out's dtype);
//   logspace: tensors [out]; scalars [start, end, base]: base ** linspace.
// Products and sums are rounded one at a time (no fused multiply-add), as the
// CPU's, so arange and linspace give the CPU's bits.
#include <cstdint>
#include <type_traits>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/kernels.h"
#include "backend/kernels/rn_arith.cuh"
#include "backend/kernels/strided_index.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

template <class T, class A>
__global__ void arange_kernel(T* out, int64_t n, A start, A step) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    if constexpr (std::is_integral_v<A>)
      out[i] = static_cast<T>(start + step * i);
    else
      out[i] = convert<T>(add_rn(start, mul_rn(step, static_cast<A>(i))));
  }
}

// The type linspace steps in: double for integers, float for the 16-bit floats.
template <class T>
using step_t = std::conditional_t<std::is_integral_v<T>, double, acc_t<T>>;

// out[i] = f(v_i), v_i stepping from a (first half) or back from z (second).
template <class T, bool Log>
__global__ void space_kernel(T* out, int64_t steps, step_t<T> a, step_t<T> z, step_t<T> step,
                             double base) {
  using S = step_t<T>;
  const int64_t halfway = steps / 2;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < steps;
       i += stride) {
    S v;
    if (steps == 1)
      v = a;
    else if (i < halfway)
      v = add_rn(a, mul_rn(step, static_cast<S>(i)));
    else
      v = sub_rn(z, mul_rn(step, static_cast<S>(steps - i - 1)));
    if constexpr (Log) v = static_cast<S>(pow(base, static_cast<double>(v)));
    out[i] = convert<T>(v);
  }
}

double scalar_double(const flb_scalar& s) {
  return s.kind == FLB_SCALAR_FLOAT || s.kind == FLB_SCALAR_COMPLEX ? s.real
                                                                    : static_cast<double>(s.i);
}

// Runs f(T{}) for out's real, non-bool dtype (the CPU's range types).
template <class F>
flb_status with_range_dtype(const flb_kernel_call* c, F&& f) {
  const flb_tensor& out = c->tensors[0];
  if (!dense(out)) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "out must be contiguous");
  flb_status status = FLB_OK;
  const bool known = dispatch(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>)
      status = unsupported_dtypes(c);
    else
      status = f(tag);
  });
  return known ? status : unsupported_dtypes(c);
}

}  // namespace

flb_status arange(void*, const flb_kernel_call* c) {
  if (c->n_tensors != 1 || c->n_scalars < 2)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected out, start and step");
  const int64_t n = numel(c->tensors[0]);
  return with_range_dtype(c, [&](auto tag) {
    using T = decltype(tag);
    using A = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
    if (n == 0) return FLB_OK;
    runtime::DeviceGuard guard(c->device_index);
    arange_kernel<T, A><<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(c->stream)>>>(
        static_cast<T*>(c->tensors[0].data), n, scalar_as<A>(c->scalars[0]),
        scalar_as<A>(c->scalars[1]));
    return launch_status(c->op);
  });
}

flb_status space(void* ctx, const flb_kernel_call* c) {
  const bool log = *static_cast<const SpaceOp*>(ctx) == SpaceOp::kLogspace;
  if (c->n_tensors != 1 || c->n_scalars < (log ? 3 : 2))
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected out, start and end");
  const int64_t steps = numel(c->tensors[0]);
  const double base = log ? scalar_double(c->scalars[2]) : 0.0;
  return with_range_dtype(c, [&](auto tag) {
    using T = decltype(tag);
    using S = step_t<T>;
    if (steps == 0) return FLB_OK;
    const S a = convert<S>(scalar_as<T>(c->scalars[0]));
    const S z = convert<S>(scalar_as<T>(c->scalars[1]));
    const S step = steps > 1 ? (z - a) / static_cast<S>(steps - 1) : S(0);
    runtime::DeviceGuard guard(c->device_index);
    auto stream = static_cast<cudaStream_t>(c->stream);
    T* out = static_cast<T*>(c->tensors[0].data);
    if (log)
      space_kernel<T, true>
          <<<blocks_for(steps), kThreads, 0, stream>>>(out, steps, a, z, step, base);
    else
      space_kernel<T, false>
          <<<blocks_for(steps), kThreads, 0, stream>>>(out, steps, a, z, step, base);
    return launch_status(c->op);
  });
}

}  // namespace flambeau::cuda::kernels
