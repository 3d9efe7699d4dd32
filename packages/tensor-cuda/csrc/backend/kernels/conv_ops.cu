// Convolution over contiguous float32/float64 (N, C, D, H, W) tensors with
// structs [flb_conv_geometry], as the CPU's (cpu/nn_conv_kernels.cpp): im2col,
// then cuBLAS GEMMs with the (Cout, Cin / groups * kvol) weight matrix.
//   conv_forward:         tensors [out, input, weight, bias?]
//   conv_backward_input:  tensors [grad_input, grad_output, weight, bias?]
//                         (bias over the input channels: the transposed
//                         convolution's forward)
//   conv_backward_weight: tensors [grad_weight, grad_output, input]
//   conv_backward_bias:   tensors [grad_bias, grad_output]
// A pointwise kernel (1x1x1, stride 1, no padding) reads the input as its own
// column matrix. With one group, the GEMMs of a chunk of samples are one
// strided batched call; with several, each sample's groups are. col2im gathers
// (no atomics) and grad_weight accumulates the samples in order, and
// grad_bias sums in double with a fixed tree: deterministic.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/device_buffer.h"
#include "backend/kernels/gemm_rows.cuh"
#include "backend/kernels/im2col_math.h"
#include "backend/kernels/kernels.h"
#include "backend/kernels/reduce_plan.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

// At most this many bytes of column matrices at a time (at least one sample's).
constexpr int64_t kColumnBytes = int64_t(256) << 20;

// col[s][r][j] for `samples` samples, each `in_stride` elements of input apart.
template <class T>
__global__ void im2col_kernel(const T* x, T* col, flb_conv_geometry g, int64_t rows,
                              int64_t samples, int64_t in_stride) {
  const int64_t cols = conv_out_plane(g), per_sample = rows * cols, total = samples * per_sample;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += step) {
    const int64_t s = e / per_sample, rem = e % per_sample;
    const int64_t src = im2col_source(g, rem / cols, rem % cols);
    col[e] = src < 0 ? T(0) : x[s * in_stride + src];
  }
}

// grad_input[s][c][id][ih][iw] += its column-matrix elements, kernel position by
// kernel position (the CPU's order of additions).
template <class T>
__global__ void col2im_kernel(const T* col, T* gi, flb_conv_geometry g, int64_t channels,
                              int64_t samples) {
  const int64_t kvol = conv_kernel_volume(g), cols = conv_out_plane(g), plane = conv_in_plane(g);
  const int64_t total = samples * channels * plane;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += step) {
    const int64_t p = e % plane, sc = e / plane;  // sc = s * channels + c
    const int64_t ipos[3] = {p / (g.in[1] * g.in[2]), (p / g.in[2]) % g.in[1], p % g.in[2]};
    const T* rows = col + sc * kvol * cols;  // rows (c, k) of sample s, k = 0..kvol
    T v = gi[e];
    for (int64_t k = 0; k < kvol; ++k) {
      int64_t j;
      if (col2im_column(g, k, ipos, &j)) v += rows[k * cols + j];
    }
    gi[e] = v;
  }
}

// out (N, C, plane) = bias[c], or 0 without a bias.
template <class T>
__global__ void fill_bias_kernel(T* out, const T* bias, int64_t channels, int64_t plane,
                                 int64_t total) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += step)
    out[e] = bias ? bias[(e / plane) % channels] : T(0);
}

// grad_bias[c] = the sum over n and plane of grad_output (N, C, plane), in double:
// one block per channel, a fixed tree.
template <class T>
__global__ void bias_grad_kernel(T* grad_bias, const T* go, int64_t batch, int64_t channels,
                                 int64_t plane) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  double* partial = reinterpret_cast<double*>(shared_bytes);
  for (int64_t ch = blockIdx.x; ch < channels; ch += gridDim.x) {
    double acc = 0;
    for (int64_t i = threadIdx.x; i < batch * plane; i += blockDim.x)
      acc += static_cast<double>(go[((i / plane) * channels + ch) * plane + i % plane]);
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
      __syncthreads();
    }
    if (threadIdx.x == 0) grad_bias[ch] = static_cast<T>(partial[0]);
    __syncthreads();
  }
}

// Geometry and sizes of one call.
struct Conv {
  flb_conv_geometry g;
  int64_t cg, og;  // channels per group, in and out
  int64_t kvol;    // kernel volume
  int64_t rows;    // rows of a group's column matrix: cg * kvol
  int64_t cols;    // output plane
  int64_t plane;   // input plane
  int64_t sample;  // elements of one sample's column matrix: in_channels * kvol * cols
  bool pointwise;
  int64_t chunk;  // samples per batched GEMM (1 with several groups)
};

template <class T>
Conv make_conv(const flb_conv_geometry& g) {
  Conv v{};
  v.g = g;
  v.cg = g.groups > 0 ? g.in_channels / g.groups : 0;
  v.og = g.groups > 0 ? g.out_channels / g.groups : 0;
  v.kvol = conv_kernel_volume(g);
  v.rows = v.cg * v.kvol;
  v.cols = conv_out_plane(g);
  v.plane = conv_in_plane(g);
  v.sample = g.in_channels * v.kvol * v.cols;
  v.pointwise = conv_is_pointwise(g);
  const int64_t bytes = v.sample * static_cast<int64_t>(sizeof(T));
  v.chunk = g.groups == 1 && bytes > 0 ? kColumnBytes / bytes : 1;
  if (v.chunk < 1) v.chunk = 1;
  if (v.chunk > g.batch) v.chunk = g.batch;
  if (v.pointwise) v.chunk = g.groups == 1 ? g.batch : 1;  // no buffer
  return v;
}

unsigned channel_blocks(int64_t channels) {
  const int64_t cap = 65535LL * 32;
  return static_cast<unsigned>(channels < cap ? channels : cap);
}

template <class T>
flb_status im2col_into(const flb_kernel_call* c, const Conv& v, const T* x, T* col,
                       int64_t samples) {
  const int64_t total = samples * v.sample;
  im2col_kernel<T><<<blocks_for(total), kThreads, 0, static_cast<cudaStream_t>(c->stream)>>>(
      x, col, v.g, v.g.in_channels * v.kvol, samples, v.g.in_channels * v.plane);
  return launch_status(c->op);
}

template <class T>
flb_status forward(const flb_kernel_call* c, const Conv& v) {
  T* out = static_cast<T*>(c->tensors[0].data);
  const T* x = static_cast<const T*>(c->tensors[1].data);
  const T* w = static_cast<const T*>(c->tensors[2].data);
  const flb_conv_geometry& g = v.g;
  auto stream = static_cast<cudaStream_t>(c->stream);
  const int64_t out_total = g.batch * g.out_channels * v.cols;
  if (out_total == 0) return FLB_OK;
  fill_bias_kernel<T><<<blocks_for(out_total), kThreads, 0, stream>>>(
      out, optional_data<T>(c, 3), g.out_channels, v.cols, out_total);
  if (flb_status s = launch_status(c->op); s != FLB_OK || v.rows == 0) return s;
  DeviceBuffer col;
  if (!v.pointwise) {
    const size_t bytes = static_cast<size_t>(v.chunk * v.sample) * sizeof(T);
    if (flb_status s = col.allocate(c->device_index, bytes, stream, c->op); s != FLB_OK) return s;
  }
  for (int64_t s0 = 0; s0 < g.batch; s0 += v.chunk) {
    const int64_t cs = v.chunk < g.batch - s0 ? v.chunk : g.batch - s0;
    const T* colp = x + s0 * g.in_channels * v.plane;
    if (!v.pointwise) {
      if (flb_status s = im2col_into<T>(c, v, colp, col.get<T>(), cs); s != FLB_OK) return s;
      colp = col.get<T>();
    }
    // out[s][grp] (og, cols) += W[grp] (og, rows) @ col[s][grp] (rows, cols)
    RowGemm m;
    m.m = v.og;
    m.n = v.cols;
    m.k = v.rows;
    m.lda = v.rows;
    m.ldb = v.cols;
    m.ldc = v.cols;
    if (g.groups == 1) {
      m.batch = cs;
      m.stride_a = 0;
      m.stride_b = v.sample;
      m.stride_c = g.out_channels * v.cols;
    } else {
      m.batch = g.groups;
      m.stride_a = v.og * v.rows;
      m.stride_b = v.rows * v.cols;
      m.stride_c = v.og * v.cols;
    }
    if (flb_status s = row_gemm<T>(c, m, T(1), w, colp, T(1), out + s0 * g.out_channels * v.cols);
        s != FLB_OK)
      return s;
  }
  return FLB_OK;
}

template <class T>
flb_status backward_input(const flb_kernel_call* c, const Conv& v) {
  T* gi = static_cast<T*>(c->tensors[0].data);
  const T* go = static_cast<const T*>(c->tensors[1].data);
  const T* w = static_cast<const T*>(c->tensors[2].data);
  const flb_conv_geometry& g = v.g;
  auto stream = static_cast<cudaStream_t>(c->stream);
  const int64_t in_total = g.batch * g.in_channels * v.plane;
  if (in_total == 0) return FLB_OK;
  fill_bias_kernel<T><<<blocks_for(in_total), kThreads, 0, stream>>>(
      gi, optional_data<T>(c, 3), g.in_channels, v.plane, in_total);
  if (flb_status s = launch_status(c->op); s != FLB_OK || v.og == 0 || v.rows == 0) return s;
  DeviceBuffer col;
  if (!v.pointwise) {
    const size_t bytes = static_cast<size_t>(v.chunk * v.sample) * sizeof(T);
    if (flb_status s = col.allocate(c->device_index, bytes, stream, c->op); s != FLB_OK) return s;
  }
  for (int64_t s0 = 0; s0 < g.batch; s0 += v.chunk) {
    const int64_t cs = v.chunk < g.batch - s0 ? v.chunk : g.batch - s0;
    T* gis = gi + s0 * g.in_channels * v.plane;
    // col[s][grp] (rows, cols) = W[grp]^T (rows, og) @ grad_output[s][grp] (og, cols);
    // pointwise, added to grad_input directly.
    RowGemm m;
    m.trans_a = true;
    m.m = v.rows;
    m.n = v.cols;
    m.k = v.og;
    m.lda = v.rows;
    m.ldb = v.cols;
    m.ldc = v.cols;
    if (g.groups == 1) {
      m.batch = cs;
      m.stride_a = 0;
      m.stride_b = g.out_channels * v.cols;
      m.stride_c = v.sample;
    } else {
      m.batch = g.groups;
      m.stride_a = v.og * v.rows;
      m.stride_b = v.og * v.cols;
      m.stride_c = v.rows * v.cols;
    }
    T* target = v.pointwise ? gis : col.get<T>();
    if (flb_status s = row_gemm<T>(c, m, T(1), w, go + s0 * g.out_channels * v.cols,
                                   T(v.pointwise ? 1 : 0), target);
        s != FLB_OK)
      return s;
    if (!v.pointwise) {
      const int64_t total = cs * g.in_channels * v.plane;
      col2im_kernel<T>
          <<<blocks_for(total), kThreads, 0, stream>>>(col.get<T>(), gis, g, g.in_channels, cs);
      if (flb_status s = launch_status(c->op); s != FLB_OK) return s;
    }
  }
  return FLB_OK;
}

template <class T>
flb_status backward_weight(const flb_kernel_call* c, const Conv& v) {
  T* gw = static_cast<T*>(c->tensors[0].data);
  const T* go = static_cast<const T*>(c->tensors[1].data);
  const T* x = static_cast<const T*>(c->tensors[2].data);
  const flb_conv_geometry& g = v.g;
  auto stream = static_cast<cudaStream_t>(c->stream);
  const int64_t wn = numel(c->tensors[0]);
  if (wn == 0) return FLB_OK;
  if (cudaMemsetAsync(gw, 0, static_cast<size_t>(wn) * sizeof(T), stream) != cudaSuccess)
    return launch_status(c->op);
  if (v.og == 0 || v.rows == 0 || v.cols == 0) return FLB_OK;
  DeviceBuffer col;
  if (!v.pointwise) {
    const size_t bytes = static_cast<size_t>(v.sample) * sizeof(T);
    if (flb_status s = col.allocate(c->device_index, bytes, stream, c->op); s != FLB_OK) return s;
  }
  // grad_weight[grp] (og, rows) += grad_output[n][grp] (og, cols) @ col[n][grp]^T
  // (cols, rows), sample by sample.
  RowGemm m;
  m.trans_b = true;
  m.m = v.og;
  m.n = v.rows;
  m.k = v.cols;
  m.lda = v.cols;
  m.ldb = v.cols;
  m.ldc = v.rows;
  m.batch = g.groups;
  m.stride_a = v.og * v.cols;
  m.stride_b = v.rows * v.cols;
  m.stride_c = v.og * v.rows;
  for (int64_t n = 0; n < g.batch; ++n) {
    const T* colp = x + n * g.in_channels * v.plane;
    if (!v.pointwise) {
      if (flb_status s = im2col_into<T>(c, v, colp, col.get<T>(), 1); s != FLB_OK) return s;
      colp = col.get<T>();
    }
    if (flb_status s = row_gemm<T>(c, m, T(1), go + n * g.out_channels * v.cols, colp, T(1), gw);
        s != FLB_OK)
      return s;
  }
  return FLB_OK;
}

// The call's tensors present and contiguous, of one float32/float64 dtype, and its geometry.
template <class F>
flb_status with_conv(const flb_kernel_call* c, int n_tensors, F&& f) {
  if (c->n_tensors < n_tensors || c->n_structs < 1 || c->structs == nullptr)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors or the geometry");
  const int32_t dtype = c->tensors[0].dtype;
  for (int k = 0; k < c->n_tensors; ++k)
    if (present(c, k) && (c->tensors[k].dtype != dtype || !dense(c->tensors[k])))
      return unsupported_dtypes(c);
  const auto& g = *static_cast<const flb_conv_geometry*>(c->structs[0]);
  if (g.groups < 1) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "groups must be positive");
  for (int a = 0; a < 3; ++a)
    if (g.stride[a] < 1 || g.dilation[a] < 1)
      return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "stride and dilation must be positive");
  runtime::DeviceGuard guard(c->device_index);
  if (dtype == FLB_FLOAT32) return f(float{}, make_conv<float>(g));
  if (dtype == FLB_FLOAT64) return f(double{}, make_conv<double>(g));
  return unsupported_dtypes(c);
}

}  // namespace

flb_status conv_forward(void*, const flb_kernel_call* c) {
  return with_conv(c, 3, [&](auto tag, const Conv& v) { return forward<decltype(tag)>(c, v); });
}

flb_status conv_backward_input(void*, const flb_kernel_call* c) {
  return with_conv(c, 3,
                   [&](auto tag, const Conv& v) { return backward_input<decltype(tag)>(c, v); });
}

flb_status conv_backward_weight(void*, const flb_kernel_call* c) {
  return with_conv(c, 3,
                   [&](auto tag, const Conv& v) { return backward_weight<decltype(tag)>(c, v); });
}

flb_status conv_backward_bias(void*, const flb_kernel_call* c) {
  if (c->n_tensors != 2) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected two tensors");
  const flb_tensor &gb = c->tensors[0], &go = c->tensors[1];
  if (gb.dtype != go.dtype || !dense(gb) || !dense(go) || go.ndim < 2) return unsupported_dtypes(c);
  const int64_t batch = go.sizes[0], channels = go.sizes[1];
  const int64_t plane = batch * channels != 0 ? numel(go) / (batch * channels) : 0;
  if (channels == 0) return FLB_OK;
  runtime::DeviceGuard guard(c->device_index);
  auto stream = static_cast<cudaStream_t>(c->stream);
  const unsigned threads = reduce_threads_for(batch * plane);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    bias_grad_kernel<T><<<channel_blocks(channels), threads, threads * sizeof(double), stream>>>(
        static_cast<T*>(gb.data), static_cast<const T*>(go.data), batch, channels, plane);
    return launch_status(c->op);
  };
  if (gb.dtype == FLB_FLOAT32) return run(float{});
  if (gb.dtype == FLB_FLOAT64) return run(double{});
  return unsupported_dtypes(c);
}

}  // namespace flambeau::cuda::kernels
