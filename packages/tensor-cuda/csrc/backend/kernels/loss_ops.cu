// Losses on the floating dtypes (16-bit floats compute in float, as the CPU):
// - pointwise, through the elementwise loop (tensors [out, inputs...], scalars
//   [args...]; a backward's last scalar is the reduction's scale): mse_loss,
//   smooth_l1_loss (beta), huber_loss (delta), binary_cross_entropy (logs clamped
//   at -100), binary_cross_entropy_with_logits (x, t, pos_weight), kl_div
//   (log_target), and the backwards mse_loss_backward, smooth_l1_loss_backward,
//   huber_loss_backward, binary_cross_entropy_backward (tensors [out, g, x, t]);
// - nll_loss_forward: tensors [out, total_weight, input (N, C, D), target (N, D)
//   int64, weight?]; ints [N, C, D, reduction, ignore_index]. Reductions sum in
//   double over a fixed tree of one block (deterministic);
// - nll_loss_backward: tensors [grad_input (N, C, D), grad_output, target, weight?];
//   same ints (grad_output is one value unless reduction is 0).
// A target outside [0, C) (and not ignore_index) fails with the CPU's message as
// RuntimeError (the ABI has no IndexError), naming the first bad one in order.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/device_buffer.h"
#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"
#include "backend/state.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

// ---- pointwise losses ---------------------------------------------------------

// std::max's rule, as the CPU's losses use it: a NaN first argument stays.
template <class A>
__device__ inline A cpu_max(A a, A b) {
  return a < b ? b : a;
}

template <class A>
struct PointwiseLoss {
  LossOp op;
  A a0, a1;  // the scalars: beta / delta / log_target, then the scale
  __device__ A operator()(A x, A t) const {
    switch (op) {
      case LossOp::kMse:
        return (x - t) * (x - t);
      case LossOp::kSmoothL1: {
        const A d = fabs(x - t);
        return d < a0 ? A(0.5) * d * d / a0 : d - A(0.5) * a0;
      }
      case LossOp::kHuber: {
        const A d = fabs(x - t);
        return d < a0 ? A(0.5) * d * d : a0 * (d - A(0.5) * a0);
      }
      case LossOp::kBinaryCrossEntropy: {
        const A lx = cpu_max(log(x), A(-100)), l1x = cpu_max(log1p(-x), A(-100));
        return -(t * lx + (A(1) - t) * l1x);
      }
      case LossOp::kKlDiv:
        if (a0 != A(0)) return exp(t) * (t - x);
        return t == A(0) ? -t * x : t * (log(t) - x);
      default:
        return A(0);
    }
  }
  // Backwards (g, x, t) and binary_cross_entropy_with_logits (x, t, pos_weight).
  __device__ A operator()(A g, A x, A t) const {
    switch (op) {
      case LossOp::kMseBackward:
        return A(2) * a0 * (x - t) * g;
      case LossOp::kSmoothL1Backward: {
        const A d = x - t;
        if (d <= -a0) return -a1 * g;
        if (d >= a0) return a1 * g;
        return a1 * d / a0 * g;
      }
      case LossOp::kHuberBackward: {
        const A d = x - t;
        if (d <= -a0) return -a1 * a0 * g;
        if (d >= a0) return a1 * a0 * g;
        return a1 * d * g;
      }
      case LossOp::kBinaryCrossEntropyBackward:
        return a0 * g * (x - t) / cpu_max((A(1) - x) * x, A(1e-12));
      case LossOp::kBinaryCrossEntropyWithLogits: {
        // Here (g, x, t) are (x, t, pos_weight).
        const A lw = (t - A(1)) * x + A(1);
        return (A(1) - x) * g + lw * (log1p(exp(-fabs(g))) + cpu_max(-g, A(0)));
      }
      default:
        return A(0);
    }
  }
};

int loss_inputs(LossOp op) {
  switch (op) {
    case LossOp::kMse:
    case LossOp::kSmoothL1:
    case LossOp::kHuber:
    case LossOp::kBinaryCrossEntropy:
    case LossOp::kKlDiv:
      return 2;
    default:
      return 3;
  }
}

double scalar_or(const flb_kernel_call* c, int i, double fallback) {
  if (c->n_scalars <= i) return fallback;
  const flb_scalar& s = c->scalars[i];
  return s.kind == FLB_SCALAR_FLOAT || s.kind == FLB_SCALAR_COMPLEX ? s.real
                                                                    : static_cast<double>(s.i);
}

}  // namespace

flb_status pointwise_loss(void* ctx, const flb_kernel_call* c) {
  const LossOp op = *static_cast<const LossOp*>(ctx);
  const int nin = loss_inputs(op);
  if (c->n_tensors != nin + 1 || !all_dtype(c, c->tensors[0].dtype)) return unsupported_dtypes(c);
  flb_status status = FLB_OK;
  const bool known = dispatch(c->tensors[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    if constexpr (!std::is_floating_point_v<A>) {
      status = unsupported_dtypes(c);
    } else {
      const PointwiseLoss<A> f{op, static_cast<A>(scalar_or(c, 0, 0.0)),
                               static_cast<A>(scalar_or(c, 1, 0.0))};
      status = nin == 2 ? launch_elementwise<T, 2>(c, f) : launch_elementwise<T, 3>(c, f);
    }
  });
  return known ? status : unsupported_dtypes(c);
}

// ---- nll_loss -----------------------------------------------------------------

namespace {

constexpr int kNllThreads = 512;
constexpr unsigned long long kNoBadTarget = ~0ull;

// The class of target t, or -1 when ignored; records the smallest position of a
// target outside [0, C).
__device__ inline int64_t nll_class(const int64_t* target, int64_t i, int64_t C,
                                    int64_t ignore_index, unsigned long long* first_bad) {
  const int64_t t = target[i];
  if (t == ignore_index) return -1;
  if (t < 0 || t >= C) {
    atomicMin(first_bad, static_cast<unsigned long long>(i));
    return -1;
  }
  return t;
}

// One block: per-element losses (reduction 0) or the sum and total weight, each
// thread summing a fixed stride of elements in double, then a fixed tree.
template <class T>
__global__ void nll_forward_kernel(T* out, T* total_weight, const T* input, const int64_t* target,
                                   const T* weight, int64_t N, int64_t C, int64_t D,
                                   int64_t reduction, int64_t ignore_index,
                                   unsigned long long* first_bad) {
  __shared__ double sums[kNllThreads], weights[kNllThreads];
  double sum = 0, tw = 0;
  for (int64_t i = threadIdx.x; i < N * D; i += blockDim.x) {
    const int64_t n = i / D, d = i - n * D;
    const int64_t t = nll_class(target, i, C, ignore_index, first_bad);
    double loss = 0;
    if (t >= 0) {
      const double wt = weight ? static_cast<double>(convert<acc_t<T>>(weight[t])) : 1.0;
      loss = -wt * static_cast<double>(convert<acc_t<T>>(input[(n * C + t) * D + d]));
      tw += wt;
    }
    if (reduction == 0) out[i] = convert<T>(loss);
    sum += loss;
  }
  sums[threadIdx.x] = sum;
  weights[threadIdx.x] = tw;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      sums[threadIdx.x] += sums[threadIdx.x + half];
      weights[threadIdx.x] += weights[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    if (reduction != 0) out[0] = convert<T>(reduction == 1 ? sums[0] / weights[0] : sums[0]);
    *total_weight = convert<T>(weights[0]);
  }
}

template <class T>
__global__ void nll_backward_kernel(T* grad_input, const T* grad_output, const int64_t* target,
                                    const T* weight, int64_t N, int64_t C, int64_t D,
                                    int64_t reduction, int64_t ignore_index,
                                    unsigned long long* first_bad) {
  using A = acc_t<T>;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < N * D;
       i += step) {
    const int64_t t = nll_class(target, i, C, ignore_index, first_bad);
    if (t < 0) continue;
    const int64_t n = i / D, d = i - n * D;
    const A g = convert<A>(reduction == 0 ? grad_output[i] : grad_output[0]);
    const A wt = weight ? convert<A>(weight[t]) : A(1);
    grad_input[(n * C + t) * D + d] = convert<T>(-wt * g);
  }
}

// FLB_OK, or the CPU's message for the first bad target (reads it back: one sync).
flb_status check_targets(const flb_kernel_call* c, const unsigned long long* first_bad,
                         const int64_t* target, int64_t C) {
  if (flb_status s = launch_status(c->op); s != FLB_OK) return s;
  auto stream = static_cast<cudaStream_t>(c->stream);
  unsigned long long at = kNoBadTarget;
  cudaError_t err = cudaMemcpyAsync(&at, first_bad, sizeof(at), cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  int64_t t = 0;
  if (err == cudaSuccess && at != kNoBadTarget) {
    err = cudaMemcpyAsync(&t, target + at, sizeof(t), cudaMemcpyDeviceToHost, stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  }
  if (err != cudaSuccess)
    return kernel_fail(FLB_ERROR, c->op, std::string("CUDA error: ") + cudaGetErrorString(err));
  if (at == kNoBadTarget) return FLB_OK;
  // The CPU's message, whose op name is the core kernel's ("nll_loss" forward).
  const std::string name =
      std::string(c->op) == "nll_loss_forward" ? "nll_loss" : std::string(c->op);
  return backend::fail(FLB_ERROR, name + ": Target " + std::to_string(t) + " is out of bounds (" +
                                      std::to_string(C) + " classes).");
}

// Runs launch(stream, first_bad) with a fresh "first bad target" record on the call's
// device and stream, then checks the record (check_targets).
template <class Launch>
flb_status with_target_check(const flb_kernel_call* c, const int64_t* target, int64_t C,
                             Launch&& launch) {
  runtime::DeviceGuard guard(c->device_index);
  auto stream = static_cast<cudaStream_t>(c->stream);
  DeviceBuffer first_bad;
  const flb_status status =
      first_bad.allocate(c->device_index, sizeof(unsigned long long), stream, c->op);
  if (status != FLB_OK) return status;
  cudaMemsetAsync(first_bad.get(), 0xFF, sizeof(unsigned long long), stream);
  launch(stream, first_bad.get<unsigned long long>());
  return check_targets(c, first_bad.get<unsigned long long>(), target, C);
}

}  // namespace

flb_status nll_loss_forward(void*, const flb_kernel_call* c) {
  if (c->n_tensors < 4 || c->n_ints < 5)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors or arguments");
  const int64_t N = c->ints[0], C = c->ints[1], D = c->ints[2], reduction = c->ints[3],
                ignore = c->ints[4];
  const int32_t dtype = c->tensors[0].dtype;
  const bool has_weight = present(c, 4);
  if (c->tensors[1].dtype != dtype || c->tensors[2].dtype != dtype ||
      c->tensors[3].dtype != FLB_INT64 || (has_weight && c->tensors[4].dtype != dtype))
    return unsupported_dtypes(c);
  const auto* target = static_cast<const int64_t*>(c->tensors[3].data);
  return with_float_dtype(c, dtype, [&](auto tag) {
    using T = decltype(tag);
    return with_target_check(c, target, C, [&](cudaStream_t stream, unsigned long long* bad) {
      nll_forward_kernel<T><<<1, kNllThreads, 0, stream>>>(
          static_cast<T*>(c->tensors[0].data), static_cast<T*>(c->tensors[1].data),
          static_cast<const T*>(c->tensors[2].data), target, optional_data<T>(c, 4), N, C, D,
          reduction, ignore, bad);
    });
  });
}

flb_status nll_loss_backward(void*, const flb_kernel_call* c) {
  if (c->n_tensors < 3 || c->n_ints < 5)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors or arguments");
  const int64_t N = c->ints[0], C = c->ints[1], D = c->ints[2], reduction = c->ints[3],
                ignore = c->ints[4];
  const int32_t dtype = c->tensors[0].dtype;
  const bool has_weight = present(c, 3);
  if (c->tensors[1].dtype != dtype || c->tensors[2].dtype != FLB_INT64 ||
      (has_weight && c->tensors[3].dtype != dtype))
    return unsupported_dtypes(c);
  const auto* target = static_cast<const int64_t*>(c->tensors[2].data);
  return with_float_dtype(c, dtype, [&](auto tag) {
    using T = decltype(tag);
    return with_target_check(c, target, C, [&](cudaStream_t stream, unsigned long long* bad) {
      cudaMemsetAsync(c->tensors[0].data, 0, static_cast<size_t>(N * C * D) * sizeof(T), stream);
      if (N * D > 0)
        nll_backward_kernel<T><<<blocks_for(N * D), kThreads, 0, stream>>>(
            static_cast<T*>(c->tensors[0].data), static_cast<const T*>(c->tensors[1].data), target,
            optional_data<T>(c, 3), N, C, D, reduction, ignore, bad);
    });
  });
}

}  // namespace flambeau::cuda::kernels
