// Layer normalization over contiguous [rows, n] (group norm reuses it for its
// per-group rows; batch norm is composed by the core from reductions):
//   native_layer_norm: tensors [out, mean, rstd, x, weight?, bias?]; scalars [eps];
//                      ints [rows, n]
//   native_layer_norm_backward: tensors [grad_input?, grad_weight?, grad_bias?,
//                      grad_out, x, mean, rstd, weight?]; ints [rows, n]
// Statistics are the CPU's two passes (the mean, then the mean of squared
// deviations: no cancellation) in acc_t (float for the 16-bit floats), one block
// per row with a fixed tree, so results depend on the shape alone
// (deterministic); mean and rstd are stored in x's dtype, as on the CPU.
// grad_weight and grad_bias sum columns over rows, one thread per column walking
// the rows in order.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"
#include "backend/kernels/reduce_plan.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

// Sums `mine` over the block (a power of two) with a fixed tree; every thread
// gets the total.
template <class A>
__device__ A block_sum(A* partial, A mine) {
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  const A total = partial[0];
  __syncthreads();  // partial is reused by the next sum
  return total;
}

template <class T>
__global__ void layer_norm_kernel(T* out, T* mean, T* rstd, const T* x, const T* weight,
                                  const T* bias, int64_t rows, int64_t n, acc_t<T> eps) {
  using A = acc_t<T>;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  A* partial = reinterpret_cast<A*>(shared_bytes);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * n;
    A s = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += convert<A>(xr[i]);
    const A m = block_sum(partial, s) / static_cast<A>(n);
    A q = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const A d = convert<A>(xr[i]) - m;
      q += d * d;
    }
    const A var = block_sum(partial, q) / static_cast<A>(n);
    const A rs = A(1) / sqrt(var + eps);
    T* yr = out + r * n;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      A y = (convert<A>(xr[i]) - m) * rs;
      if (weight) y *= convert<A>(weight[i]);
      if (bias) y += convert<A>(bias[i]);
      yr[i] = convert<T>(y);
    }
    if (threadIdx.x == 0) {
      mean[r] = convert<T>(m);
      rstd[r] = convert<T>(rs);
    }
  }
}

// gi = r * (dxh - mean(dxh) - xh * mean(dxh * xh)), dxh = dy * w, xh = (x - m) * r.
template <class T>
__global__ void layer_norm_grad_input_kernel(T* grad_input, const T* grad_out, const T* x,
                                             const T* mean, const T* rstd, const T* weight,
                                             int64_t rows, int64_t n) {
  using A = acc_t<T>;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  A* partial = reinterpret_cast<A*>(shared_bytes);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *xr = x + r * n, *gr = grad_out + r * n;
    const A m = convert<A>(mean[r]), rs = convert<A>(rstd[r]);
    A a = 0, c = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const A d = weight ? convert<A>(gr[i]) * convert<A>(weight[i]) : convert<A>(gr[i]);
      a += d;
      c += d * (convert<A>(xr[i]) - m);
    }
    a = block_sum(partial, a);
    c = block_sum(partial, c);
    const A inv_n = A(1) / static_cast<A>(n);
    const A ma = a * inv_n, mc = c * inv_n * rs * rs;
    T* gir = grad_input + r * n;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const A d = weight ? convert<A>(gr[i]) * convert<A>(weight[i]) : convert<A>(gr[i]);
      gir[i] = convert<T>(rs * (d - ma - (convert<A>(xr[i]) - m) * mc));
    }
  }
}

template <class T>
__global__ void layer_norm_grad_params_kernel(T* grad_weight, T* grad_bias, const T* grad_out,
                                              const T* x, const T* mean, const T* rstd,
                                              int64_t rows, int64_t n) {
  using A = acc_t<T>;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += step) {
    A sw = 0, sb = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const A g = convert<A>(grad_out[r * n + j]);
      sw += g * (convert<A>(x[r * n + j]) - convert<A>(mean[r])) * convert<A>(rstd[r]);
      sb += g;
    }
    if (grad_weight) grad_weight[j] = convert<T>(sw);
    if (grad_bias) grad_bias[j] = convert<T>(sb);
  }
}

// The call's present tensors are contiguous and of `dtype`.
bool uniform(const flb_kernel_call* c, int32_t dtype) {
  for (int k = 0; k < c->n_tensors; ++k)
    if (present(c, k) && (c->tensors[k].dtype != dtype || !dense(c->tensors[k]))) return false;
  return true;
}

unsigned row_blocks(int64_t rows) {
  const int64_t cap = 65535LL * 32;
  return static_cast<unsigned>(rows < cap ? rows : cap);
}

}  // namespace

flb_status layer_norm(void*, const flb_kernel_call* c) {
  if (c->n_tensors < 4 || c->n_scalars < 1 || c->n_ints < 2)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors or arguments");
  const int64_t rows = c->ints[0], n = c->ints[1];
  const int32_t dtype = c->tensors[3].dtype;
  if (!uniform(c, dtype)) return unsupported_dtypes(c);
  if (rows * n == 0) return FLB_OK;
  const double eps = c->scalars[0].kind == FLB_SCALAR_FLOAT ? c->scalars[0].real
                                                            : static_cast<double>(c->scalars[0].i);
  return with_float_dtype(c, dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    runtime::DeviceGuard guard(c->device_index);
    const unsigned threads = reduce_threads_for(n);
    layer_norm_kernel<T>
        <<<row_blocks(rows), threads, threads * sizeof(A), static_cast<cudaStream_t>(c->stream)>>>(
            static_cast<T*>(c->tensors[0].data), static_cast<T*>(c->tensors[1].data),
            static_cast<T*>(c->tensors[2].data), static_cast<const T*>(c->tensors[3].data),
            optional_data<T>(c, 4), optional_data<T>(c, 5), rows, n, static_cast<A>(eps));
    return launch_status(c->op);
  });
}

flb_status layer_norm_backward(void*, const flb_kernel_call* c) {
  if (c->n_tensors < 7 || c->n_ints < 2)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors or arguments");
  const int64_t rows = c->ints[0], n = c->ints[1];
  const int32_t dtype = c->tensors[4].dtype;
  if (!uniform(c, dtype)) return unsupported_dtypes(c);
  if (rows * n == 0) return FLB_OK;
  return with_float_dtype(c, dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    runtime::DeviceGuard guard(c->device_index);
    auto stream = static_cast<cudaStream_t>(c->stream);
    const T *grad_out = optional_data<T>(c, 3), *x = optional_data<T>(c, 4),
            *mean = optional_data<T>(c, 5), *rstd = optional_data<T>(c, 6);
    if (present(c, 0)) {
      const unsigned threads = reduce_threads_for(n);
      layer_norm_grad_input_kernel<T><<<row_blocks(rows), threads, threads * sizeof(A), stream>>>(
          static_cast<T*>(c->tensors[0].data), grad_out, x, mean, rstd, optional_data<T>(c, 7),
          rows, n);
    }
    if (present(c, 1) || present(c, 2))
      layer_norm_grad_params_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
          present(c, 1) ? static_cast<T*>(c->tensors[1].data) : nullptr,
          present(c, 2) ? static_cast<T*>(c->tensors[2].data) : nullptr, grad_out, x, mean, rstd,
          rows, n);
    return launch_status(c->op);
  });
}

}  // namespace flambeau::cuda::kernels
