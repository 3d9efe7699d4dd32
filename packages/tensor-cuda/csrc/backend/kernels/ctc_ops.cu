// The CTC loss on float32 and float64 (the core's frontend, ops/nn_ctc.cpp, has
// checked the lengths and labels, laid the targets out flat with per-sample
// offsets and made every tensor contiguous):
//   _ctc_loss:          tensors [nll (N), log_alpha (N, T, row), log_probs (T, N, C),
//                       targets, offsets, input_lengths, target_lengths (int64)];
//                       ints [blank]. log_alpha comes filled with -inf; the kernel
//                       writes the reachable part (t < input_length, s <= 2 S_b).
//   _ctc_loss_backward: tensors [grad (T, N, C), grad_out (N), log_probs, targets,
//                       offsets, input_lengths, target_lengths, nll (N),
//                       log_alpha (N, T, row)]; ints [blank, zero_infinity].
// One block per sample runs ctc_math.h's recursion over time, its threads over the
// states of the extended label sequence (and over the classes for the gradient),
// synchronizing once per frame (twice in the backward). Sums run in double
// in a fixed order whatever the block size: the results are deterministic and the
// CPU kernel's up to the rounding of exp and log.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/ctc_math.h"
#include "backend/kernels/device_buffer.h"
#include "backend/kernels/kernels.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

// The CUDA block as ctc_math.h's drivers see it.
struct CudaBlock {
  FLB_HD int64_t rank() const {
#if defined(__CUDA_ARCH__)
    return threadIdx.x;
#else
    return 0;
#endif
  }
  FLB_HD int64_t size() const {
#if defined(__CUDA_ARCH__)
    return blockDim.x;
#else
    return 1;
#endif
  }
  FLB_HD void sync() const {
#if defined(__CUDA_ARCH__)
    __syncthreads();
#endif
  }
};

// The lengths and layout every sample shares.
struct CtcArgs {
  const int64_t *targets, *offsets, *input_lengths, *target_lengths;
  int64_t frames, N, C, row, blank;
};

template <class T>
__global__ void __launch_bounds__(kThreads)
    ctc_forward_kernel(T* nll, T* log_alpha, const T* log_probs, CtcArgs a, double* scratch) {
  const int64_t b = blockIdx.x;
  CudaBlock block;
  const CtcSample<T> x = ctc_sample(log_probs, a.N, a.C, a.targets, a.offsets, a.input_lengths,
                                    a.target_lengths, a.blank, b);
  ctc_forward_sample(x, a.row, log_alpha + b * a.frames * a.row, nll + b, scratch + b * 2 * a.row,
                     block);
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    ctc_backward_kernel(T* grad, const T* grad_out, const T* log_probs, const T* nll,
                        const T* log_alpha, CtcArgs a, bool zero_infinity, double* values,
                        int64_t* chains) {
  const int64_t b = blockIdx.x;
  CudaBlock block;
  const CtcSample<T> x = ctc_sample(log_probs, a.N, a.C, a.targets, a.offsets, a.input_lengths,
                                    a.target_lengths, a.blank, b);
  double* mine = values + b * (2 * a.row + a.C);
  const CtcBackwardScratch scratch{mine, mine + 2 * a.row, chains + b * 2 * a.row};
  const double loss = static_cast<double>(nll[b]);
  ctc_backward_sample(x, a.row, a.frames, a.C, log_alpha + b * a.frames * a.row, loss,
                      static_cast<double>(grad_out[b]), ctc_zeroed(zero_infinity, loss),
                      grad + b * a.C, scratch, block);
}

// Runs f(T{}) for float32 or float64; the call's refusal for any other dtype.
template <class F>
flb_status with_ctc_dtype(const flb_kernel_call* c, int32_t dtype, F&& f) {
  if (dtype == FLB_FLOAT32) return f(float{});
  if (dtype == FLB_FLOAT64) return f(double{});
  return unsupported_dtypes(c);
}

// Whether tensors [first, last) of the call are contiguous tensors of `dtype` (an
// empty one, such as padded targets (N, 0) with strides (1, 1), counts as such).
bool all_dense(const flb_kernel_call* c, int first, int last, int32_t dtype) {
  for (int k = first; k < last; ++k) {
    const flb_tensor& t = c->tensors[k];
    if (t.dtype != dtype || t.ndim < 0 || (numel(t) != 0 && !dense(t))) return false;
  }
  return true;
}

// The shared arguments, from log_probs (T, N, C), log_alpha (N, T, row) and the
// int64 tensors at k..k+3.
CtcArgs ctc_args(const flb_kernel_call* c, const flb_tensor& log_probs, const flb_tensor& log_alpha,
                 int k, int64_t blank) {
  return {static_cast<const int64_t*>(c->tensors[k].data),
          static_cast<const int64_t*>(c->tensors[k + 1].data),
          static_cast<const int64_t*>(c->tensors[k + 2].data),
          static_cast<const int64_t*>(c->tensors[k + 3].data),
          log_probs.sizes[0],
          log_probs.sizes[1],
          log_probs.sizes[2],
          log_alpha.sizes[2],
          blank};
}

bool shapes_agree(const flb_tensor& log_probs, const flb_tensor& log_alpha) {
  return log_probs.ndim == 3 && log_alpha.ndim == 3 && log_alpha.sizes[0] == log_probs.sizes[1] &&
         log_alpha.sizes[1] == log_probs.sizes[0] && log_alpha.sizes[2] >= 1;
}

}  // namespace

flb_status ctc_loss_forward(void*, const flb_kernel_call* c) {
  if (c->n_tensors < 7 || c->n_ints < 1)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors or arguments");
  const flb_tensor &nll = c->tensors[0], &log_alpha = c->tensors[1], &log_probs = c->tensors[2];
  const int32_t dtype = nll.dtype;
  if (!all_dense(c, 0, 3, dtype) || !all_dense(c, 3, 7, FLB_INT64)) return unsupported_dtypes(c);
  if (!shapes_agree(log_probs, log_alpha))
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "log_probs and log_alpha do not agree");
  const CtcArgs a = ctc_args(c, log_probs, log_alpha, 3, c->ints[0]);
  return with_ctc_dtype(c, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (a.N == 0) return FLB_OK;
    runtime::DeviceGuard guard(c->device_index);
    auto stream = static_cast<cudaStream_t>(c->stream);
    DeviceBuffer rows;
    if (flb_status s = rows.allocate(
            c->device_index, static_cast<size_t>(a.N * 2 * a.row) * sizeof(double), stream, c->op);
        s != FLB_OK)
      return s;
    ctc_forward_kernel<T><<<static_cast<unsigned>(a.N), kThreads, 0, stream>>>(
        static_cast<T*>(nll.data), static_cast<T*>(log_alpha.data),
        static_cast<const T*>(log_probs.data), a, rows.get<double>());
    return launch_status(c->op);
  });
}

flb_status ctc_loss_backward(void*, const flb_kernel_call* c) {
  if (c->n_tensors < 9 || c->n_ints < 2)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors or arguments");
  const flb_tensor &grad = c->tensors[0], &log_probs = c->tensors[2], &log_alpha = c->tensors[8];
  const int32_t dtype = grad.dtype;
  if (!all_dense(c, 0, 3, dtype) || !all_dense(c, 3, 7, FLB_INT64) || !all_dense(c, 7, 9, dtype))
    return unsupported_dtypes(c);
  if (!shapes_agree(log_probs, log_alpha) || grad.ndim != 3 ||
      grad.sizes[0] != log_probs.sizes[0] || grad.sizes[1] != log_probs.sizes[1] ||
      grad.sizes[2] != log_probs.sizes[2])
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "log_probs, grad and log_alpha do not agree");
  const CtcArgs a = ctc_args(c, log_probs, log_alpha, 3, c->ints[0]);
  const bool zero_infinity = c->ints[1] != 0;
  return with_ctc_dtype(c, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (a.N == 0) return FLB_OK;
    runtime::DeviceGuard guard(c->device_index);
    auto stream = static_cast<cudaStream_t>(c->stream);
    DeviceBuffer values, chains;
    const size_t n_values = static_cast<size_t>(a.N * (2 * a.row + a.C));
    const size_t n_chains = static_cast<size_t>(a.N * 2 * a.row);
    if (flb_status s = values.allocate(c->device_index, n_values * sizeof(double), stream, c->op);
        s != FLB_OK)
      return s;
    if (flb_status s = chains.allocate(c->device_index, n_chains * sizeof(int64_t), stream, c->op);
        s != FLB_OK)
      return s;
    ctc_backward_kernel<T><<<static_cast<unsigned>(a.N), kThreads, 0, stream>>>(
        static_cast<T*>(grad.data), static_cast<const T*>(c->tensors[1].data),
        static_cast<const T*>(log_probs.data), static_cast<const T*>(c->tensors[7].data),
        static_cast<const T*>(log_alpha.data), a, zero_infinity, values.get<double>(),
        chains.get<int64_t>());
    return launch_status(c->op);
  });
}

}  // namespace flambeau::cuda::kernels
