// Pooling over contiguous (planes, D, H, W) tensors in the compute dtype (float32
// or float64: the core converts 16-bit inputs), with the geometry in
// flb_pool_geometry (see pool_math.h for the window arithmetic):
//   max_pool, adaptive_max_pool:  tensors [out, indices (int64, flat in a plane), input]
//   avg_pool, adaptive_avg_pool:  tensors [out, input]
//   avg_pool_backward, adaptive_avg_pool_backward: tensors [grad_input, grad_output]
//   pool_index_scatter:           tensors [dst (planes, dn), src (planes, sn), indices];
//                                 ints [accumulate]; *int_result: a bad index's position or -1
// Forward passes take one thread per output and visit its window in the CPU's
// order (NaN wins, ties keep the first max), so values and indices are the CPU's.
// The average backward gathers, one thread per input element, from the outputs
// whose windows hold it in increasing order: the CPU's sums, deterministic.
// pool_index_scatter (the max-pool backward and max_unpool) adds with atomics, so
// repeated indices add in an unspecified order (the operator table marks those
// operators nondeterministic on cuda).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/device_buffer.h"
#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/index_checks.cuh"
#include "backend/kernels/kernels.h"
#include "backend/kernels/pool_math.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

// The geometry's sizes in one struct passed by value to the kernels.
struct Geometry {
  int64_t planes, in[3], out[3], kernel[3], stride[3], pad[3], dilation[3];
  int64_t count_include_pad, divisor;
  __host__ __device__ int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  __host__ __device__ int64_t out_plane() const { return out[0] * out[1] * out[2]; }
};

Geometry geometry_of(const flb_pool_geometry& g) {
  Geometry r{};
  r.planes = g.planes;
  for (int i = 0; i < 3; ++i) {
    r.in[i] = g.in[i];
    r.out[i] = g.out[i];
    r.kernel[i] = g.kernel[i];
    r.stride[i] = g.stride[i];
    r.pad[i] = g.pad[i];
    r.dilation[i] = g.dilation[i] > 0 ? g.dilation[i] : 1;
  }
  r.count_include_pad = g.count_include_pad;
  r.divisor = g.divisor;
  return r;
}

// Position i, flat over planes x dims (the output's or the input's), as (plane, d, h, w).
__device__ inline void split_flat(const int64_t dims[3], int64_t i, int64_t* p, int64_t o[3]) {
  o[2] = i % dims[2];
  int64_t r = i / dims[2];
  o[1] = r % dims[1];
  r /= dims[1];
  o[0] = r % dims[0];
  *p = r / dims[0];
}

// A candidate replaces the running max when it is the first, larger, or NaN.
template <class T>
__device__ inline void take_max(T v, int64_t idx, T* best, int64_t* at) {
  if (*at < 0 || v > *best || v != v) {
    *best = v;
    *at = idx;
  }
}

template <class T>
__global__ void max_pool_kernel(Geometry g, const T* in, T* out, int64_t* indices, int64_t n) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t p, o[3], lo[3], hi[3], start[3];
    split_flat(g.out, i, &p, o);
    for (int k = 0; k < 3; ++k) {
      start[k] = o[k] * g.stride[k] - g.pad[k];
      tap_range(start[k], g.dilation[k], g.kernel[k], g.in[k], &lo[k], &hi[k]);
    }
    const T* x = in + p * g.in_plane();
    T best = -INFINITY;
    int64_t at = -1;
    for (int64_t kd = lo[0]; kd < hi[0]; ++kd) {
      const int64_t d = start[0] + kd * g.dilation[0];
      for (int64_t kh = lo[1]; kh < hi[1]; ++kh) {
        const int64_t h = start[1] + kh * g.dilation[1];
        const int64_t base = (d * g.in[1] + h) * g.in[2];
        for (int64_t kw = lo[2]; kw < hi[2]; ++kw) {
          const int64_t idx = base + start[2] + kw * g.dilation[2];
          take_max(x[idx], idx, &best, &at);
        }
      }
    }
    out[i] = best;
    indices[i] = at;
  }
}

template <class T>
__global__ void adaptive_max_kernel(Geometry g, const T* in, T* out, int64_t* indices, int64_t n) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t p, o[3], s[3], e[3];
    split_flat(g.out, i, &p, o);
    for (int k = 0; k < 3; ++k) {
      s[k] = adaptive_start(o[k], g.in[k], g.out[k]);
      e[k] = adaptive_end(o[k], g.in[k], g.out[k]);
    }
    const T* x = in + p * g.in_plane();
    T best = 0;
    int64_t at = -1;
    for (int64_t d = s[0]; d < e[0]; ++d)
      for (int64_t h = s[1]; h < e[1]; ++h)
        for (int64_t w = s[2]; w < e[2]; ++w) {
          const int64_t idx = (d * g.in[1] + h) * g.in[2] + w;
          take_max(x[idx], idx, &best, &at);
        }
    out[i] = best;
    indices[i] = at;
  }
}

// The divisor of avg_pool's window (0: the window is empty and the output 0).
__device__ inline int64_t avg_count(const Geometry& g, const AvgWindow (&w)[3]) {
  if (g.divisor != 0) return g.divisor;
  if (g.count_include_pad) return w[0].padded * w[1].padded * w[2].padded;
  return (w[0].e - w[0].s) * (w[1].e - w[1].s) * (w[2].e - w[2].s);
}

__device__ inline void avg_windows(const Geometry& g, const int64_t (&o)[3], AvgWindow (&w)[3]) {
  for (int k = 0; k < 3; ++k) w[k] = avg_window(o[k], g.stride[k], g.pad[k], g.kernel[k], g.in[k]);
}

// Sums rows of the window in the CPU's order: for each (d, h) a column sum, then
// the columns (the CPU adds whole rows into column sums first).
template <class T>
__global__ void avg_pool_kernel(Geometry g, const T* in, T* out, int64_t n) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t p, o[3];
    split_flat(g.out, i, &p, o);
    AvgWindow w[3];
    avg_windows(g, o, w);
    const T* x = in + p * g.in_plane();
    T acc = 0;
    for (int64_t c = w[2].s; c < w[2].e; ++c) {
      T col = 0;
      for (int64_t d = w[0].s; d < w[0].e; ++d)
        for (int64_t h = w[1].s; h < w[1].e; ++h) col += x[(d * g.in[1] + h) * g.in[2] + c];
      acc += col;
    }
    const int64_t count = avg_count(g, w);
    out[i] = count ? acc / static_cast<T>(count) : T(0);
  }
}

template <class T>
__global__ void adaptive_avg_kernel(Geometry g, const T* in, T* out, int64_t n) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t p, o[3], s[3], e[3];
    split_flat(g.out, i, &p, o);
    for (int k = 0; k < 3; ++k) {
      s[k] = adaptive_start(o[k], g.in[k], g.out[k]);
      e[k] = adaptive_end(o[k], g.in[k], g.out[k]);
    }
    const T* x = in + p * g.in_plane();
    T acc = 0;
    for (int64_t d = s[0]; d < e[0]; ++d)
      for (int64_t h = s[1]; h < e[1]; ++h)
        for (int64_t w = s[2]; w < e[2]; ++w) acc += x[(d * g.in[1] + h) * g.in[2] + w];
    out[i] = acc / static_cast<T>((e[0] - s[0]) * (e[1] - s[1]) * (e[2] - s[2]));
  }
}

template <class T>
__global__ void avg_pool_backward_kernel(Geometry g, T* grad_in, const T* grad_out, int64_t n) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t p, x[3], lo[3], hi[3];
    split_flat(g.in, i, &p, x);
    for (int k = 0; k < 3; ++k)
      avg_outputs_of(x[k], g.stride[k], g.pad[k], g.kernel[k], g.out[k], &lo[k], &hi[k]);
    const T* go = grad_out + p * g.out_plane();
    T acc = 0;
    for (int64_t od = lo[0]; od < hi[0]; ++od)
      for (int64_t oh = lo[1]; oh < hi[1]; ++oh)
        for (int64_t ow = lo[2]; ow < hi[2]; ++ow) {
          const int64_t o[3] = {od, oh, ow};
          AvgWindow w[3];
          avg_windows(g, o, w);
          const int64_t count = avg_count(g, w);
          if (count != 0) acc += go[(od * g.out[1] + oh) * g.out[2] + ow] / static_cast<T>(count);
        }
    grad_in[i] = acc;
  }
}

template <class T>
__global__ void adaptive_avg_backward_kernel(Geometry g, T* grad_in, const T* grad_out, int64_t n) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t p, x[3], lo[3], hi[3];
    split_flat(g.in, i, &p, x);
    for (int k = 0; k < 3; ++k) adaptive_outputs_of(x[k], g.in[k], g.out[k], &lo[k], &hi[k]);
    const T* go = grad_out + p * g.out_plane();
    T acc = 0;
    for (int64_t od = lo[0]; od < hi[0]; ++od)
      for (int64_t oh = lo[1]; oh < hi[1]; ++oh)
        for (int64_t ow = lo[2]; ow < hi[2]; ++ow) {
          int64_t size = 1;
          const int64_t o[3] = {od, oh, ow};
          for (int k = 0; k < 3; ++k)
            size *= adaptive_end(o[k], g.in[k], g.out[k]) - adaptive_start(o[k], g.in[k], g.out[k]);
          acc += go[(od * g.out[1] + oh) * g.out[2] + ow] / static_cast<T>(size);
        }
    grad_in[i] = acc;
  }
}

// The smallest position of an index outside [0, dn) (a deterministic report).
__global__ void find_bad_scatter_index_kernel(const int64_t* indices, int64_t n, int64_t dn,
                                              unsigned long long* first_bad) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    if (indices[i] < 0 || indices[i] >= dn)
      atomicMin(first_bad, static_cast<unsigned long long>(i));
}

template <class T>
__global__ void index_scatter_kernel(T* dst, const T* src, const int64_t* indices, int64_t n,
                                     int64_t sn, int64_t dn, bool accumulate,
                                     const unsigned long long* first_bad) {
  if (*first_bad != ~0ull) return;  // nothing is written when an index is bad
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    T* at = dst + (i / sn) * dn + indices[i];
    if (accumulate)
      atomicAdd(at, src[i]);
    else
      *at = src[i];
  }
}

// Checks the call's tensors (n of them, contiguous, dtype of the first except
// int64 ones at `index_at`) and runs f(T) with T float or double.
template <class F>
flb_status with_pool_call(const flb_kernel_call* c, int n, int index_at, F&& f) {
  if (c->n_tensors < n) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "too few tensors");
  for (int k = 0; k < n; ++k) {
    const int32_t want = k == index_at ? FLB_INT64 : c->tensors[0].dtype;
    if (c->tensors[k].dtype != want) return unsupported_dtypes(c);
    if (!dense(c->tensors[k]))
      return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected contiguous tensors");
  }
  runtime::DeviceGuard guard(c->device_index);
  switch (c->tensors[0].dtype) {
    case FLB_FLOAT32:
      return f(float{});
    case FLB_FLOAT64:
      return f(double{});
    default:
      return unsupported_dtypes(c);
  }
}

template <class T>
T* data_of(const flb_kernel_call* c, int k) {
  return static_cast<T*>(c->tensors[k].data);
}

const flb_pool_geometry* geometry_arg(const flb_kernel_call* c) {
  return struct_arg<flb_pool_geometry>(c, 0);
}

flb_status max_pool_call(const flb_kernel_call* c, bool adaptive) {
  const auto* pg = geometry_arg(c);
  if (pg == nullptr) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing pool geometry");
  const Geometry g = geometry_of(*pg);
  const int64_t n = g.planes * g.out_plane();
  if (n == 0) return FLB_OK;
  return with_pool_call(c, 3, 1, [&](auto tag) {
    using T = decltype(tag);
    auto stream = static_cast<cudaStream_t>(c->stream);
    if (adaptive)
      adaptive_max_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
          g, data_of<const T>(c, 2), data_of<T>(c, 0), data_of<int64_t>(c, 1), n);
    else
      max_pool_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
          g, data_of<const T>(c, 2), data_of<T>(c, 0), data_of<int64_t>(c, 1), n);
    return launch_status(c->op);
  });
}

flb_status avg_pool_call(const flb_kernel_call* c, bool adaptive, bool backward) {
  const auto* pg = geometry_arg(c);
  if (pg == nullptr) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing pool geometry");
  const Geometry g = geometry_of(*pg);
  const int64_t n = g.planes * (backward ? g.in_plane() : g.out_plane());
  if (n == 0) return FLB_OK;
  return with_pool_call(c, 2, -1, [&](auto tag) {
    using T = decltype(tag);
    auto stream = static_cast<cudaStream_t>(c->stream);
    const unsigned blocks = blocks_for(n);
    T* t0 = data_of<T>(c, 0);
    const T* t1 = data_of<const T>(c, 1);
    if (backward && adaptive)
      adaptive_avg_backward_kernel<T><<<blocks, kThreads, 0, stream>>>(g, t0, t1, n);
    else if (backward)
      avg_pool_backward_kernel<T><<<blocks, kThreads, 0, stream>>>(g, t0, t1, n);
    else if (adaptive)
      adaptive_avg_kernel<T><<<blocks, kThreads, 0, stream>>>(g, t1, t0, n);
    else
      avg_pool_kernel<T><<<blocks, kThreads, 0, stream>>>(g, t1, t0, n);
    return launch_status(c->op);
  });
}

}  // namespace

flb_status max_pool(void*, const flb_kernel_call* c) { return max_pool_call(c, false); }
flb_status adaptive_max_pool(void*, const flb_kernel_call* c) { return max_pool_call(c, true); }
flb_status avg_pool(void*, const flb_kernel_call* c) { return avg_pool_call(c, false, false); }
flb_status adaptive_avg_pool(void*, const flb_kernel_call* c) {
  return avg_pool_call(c, true, false);
}
flb_status avg_pool_backward(void*, const flb_kernel_call* c) {
  return avg_pool_call(c, false, true);
}
flb_status adaptive_avg_pool_backward(void*, const flb_kernel_call* c) {
  return avg_pool_call(c, true, true);
}

flb_status pool_index_scatter(void*, const flb_kernel_call* c) {
  if (c->n_ints < 1 || c->int_result == nullptr)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing accumulate or result");
  const bool accumulate = c->ints[0] != 0;
  *c->int_result = -1;
  return with_pool_call(c, 3, 2, [&](auto tag) -> flb_status {
    using T = decltype(tag);
    const flb_tensor &dst = c->tensors[0], &src = c->tensors[1];
    const int64_t planes = dst.ndim > 0 ? dst.sizes[0] : 0;
    if (planes == 0) return FLB_OK;
    const int64_t dn = numel(dst) / planes, sn = numel(src) / planes, n = numel(src);
    auto stream = static_cast<cudaStream_t>(c->stream);
    DeviceBuffer first_bad;
    if (flb_status s =
            first_bad.allocate(c->device_index, sizeof(unsigned long long), stream, c->op);
        s != FLB_OK)
      return s;
    cudaMemsetAsync(first_bad.get(), 0xFF, sizeof(unsigned long long), stream);
    cudaMemsetAsync(dst.data, 0, static_cast<size_t>(numel(dst)) * sizeof(T), stream);
    if (n > 0) {
      find_bad_scatter_index_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
          data_of<const int64_t>(c, 2), n, dn, first_bad.get<unsigned long long>());
      index_scatter_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
          data_of<T>(c, 0), data_of<const T>(c, 1), data_of<const int64_t>(c, 2), n, sn, dn,
          accumulate, first_bad.get<unsigned long long>());
    }
    if (flb_status s = launch_status(c->op); s != FLB_OK) return s;
    unsigned long long host = ~0ull;
    cudaError_t err =
        cudaMemcpyAsync(&host, first_bad.get(), sizeof(host), cudaMemcpyDeviceToHost, stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
    if (err != cudaSuccess)
      return kernel_fail(FLB_ERROR, c->op, std::string("CUDA error: ") + cudaGetErrorString(err));
    *c->int_result = host == ~0ull ? -1 : static_cast<int64_t>(host);
    return FLB_OK;
  });
}

}  // namespace flambeau::cuda::kernels
