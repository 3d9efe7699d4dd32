// The fused LSTM and GRU cells and their backwards over contiguous float32/float64
// tensors, one thread per (batch row, hidden unit), with the CPU's formulas and
// workspace layout (cpu/nn_rnn_kernels.cpp), so the core's autograd reads the
// workspace either device writes:
//   _thnn_fused_lstm_cell:          tensors [input_gates, hidden_gates, cx,
//                                   input_bias?, hidden_bias?, hy, cy, workspace]
//                                   (workspace: the gates i, f, g, o)
//   _thnn_fused_lstm_cell_backward: tensors [grad_hy?, grad_cy?, cx, cy, workspace,
//                                   grad_gates, grad_cx]
//   _thnn_fused_gru_cell:           tensors [input_gates, hidden_gates, hx,
//                                   input_bias?, hidden_bias?, hy, workspace]
//                                   (workspace: r, z, n, hn, hx)
//   _thnn_fused_gru_cell_backward:  tensors [grad_hy, workspace, grad_input_gates,
//                                   grad_hidden_gates, grad_hx]
#include <cuda_runtime_api.h>

#include <cstdint>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/kernels.h"
#include "backend/kernels/rnn_cell_math.cuh"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

template <class T>
__global__ void lstm_cell_kernel(const T* ig, const T* hg, const T* c0, const T* bi, const T* bh,
                                 T* h1, T* c1, T* ws, int64_t rows, int64_t h) {
  const int64_t total = rows * h, step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += step)
    lstm_cell_unit(ig, hg, c0, bi, bh, h1, c1, ws, e / h, e % h, h);
}

template <class T>
__global__ void lstm_cell_backward_kernel(const T* ghy, const T* gcy, const T* c0, const T* c1,
                                          const T* ws, T* gg, T* gc0, int64_t rows, int64_t h) {
  const int64_t total = rows * h, step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += step)
    lstm_cell_backward_unit(ghy, gcy, c0, c1, ws, gg, gc0, e / h, e % h, h);
}

template <class T>
__global__ void gru_cell_kernel(const T* ig, const T* hg, const T* h0, const T* bi, const T* bh,
                                T* h1, T* ws, int64_t rows, int64_t h) {
  const int64_t total = rows * h, step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += step)
    gru_cell_unit(ig, hg, h0, bi, bh, h1, ws, e / h, e % h, h);
}

template <class T>
__global__ void gru_cell_backward_kernel(const T* ghy, const T* ws, T* gi, T* ghg, T* gh0,
                                         int64_t rows, int64_t h) {
  const int64_t total = rows * h, step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += step)
    gru_cell_backward_unit(ghy, ws, gi, ghg, gh0, e / h, e % h, h);
}

// The present tensors of the call are contiguous and of one float32/float64
// dtype; runs f(T{}) on the call's device.
template <class F>
flb_status with_cell(const flb_kernel_call* c, int n_tensors, F&& f) {
  if (c->n_tensors != n_tensors) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "bad arguments");
  int32_t dtype = -1;
  for (int k = 0; k < c->n_tensors; ++k) {
    if (!present(c, k)) continue;
    if (dtype < 0) dtype = c->tensors[k].dtype;
    if (c->tensors[k].dtype != dtype || !dense(c->tensors[k])) return unsupported_dtypes(c);
  }
  runtime::DeviceGuard guard(c->device_index);
  if (dtype == FLB_FLOAT32) return f(float{});
  if (dtype == FLB_FLOAT64) return f(double{});
  return unsupported_dtypes(c);
}

template <class T>
T* data(const flb_kernel_call* c, int k) {
  return present(c, k) ? static_cast<T*>(c->tensors[k].data) : nullptr;
}

// Rows and hidden size of a (rows, h) tensor.
void rows_cols(const flb_tensor& t, int64_t* rows, int64_t* h) {
  *rows = t.ndim >= 1 ? t.sizes[0] : 0;
  *h = t.ndim >= 2 ? t.sizes[1] : 0;
}

}  // namespace

flb_status lstm_cell(void*, const flb_kernel_call* c) {
  return with_cell(c, 8, [&](auto tag) {
    using T = decltype(tag);
    int64_t rows, h;
    rows_cols(c->tensors[2], &rows, &h);
    if (rows * h == 0) return FLB_OK;
    lstm_cell_kernel<T>
        <<<blocks_for(rows * h), kThreads, 0, static_cast<cudaStream_t>(c->stream)>>>(
            data<T>(c, 0), data<T>(c, 1), data<T>(c, 2), data<T>(c, 3), data<T>(c, 4),
            data<T>(c, 5), data<T>(c, 6), data<T>(c, 7), rows, h);
    return launch_status(c->op);
  });
}

flb_status lstm_cell_backward(void*, const flb_kernel_call* c) {
  return with_cell(c, 7, [&](auto tag) {
    using T = decltype(tag);
    int64_t rows, h;
    rows_cols(c->tensors[2], &rows, &h);
    if (rows * h == 0) return FLB_OK;
    lstm_cell_backward_kernel<T>
        <<<blocks_for(rows * h), kThreads, 0, static_cast<cudaStream_t>(c->stream)>>>(
            data<T>(c, 0), data<T>(c, 1), data<T>(c, 2), data<T>(c, 3), data<T>(c, 4),
            data<T>(c, 5), data<T>(c, 6), rows, h);
    return launch_status(c->op);
  });
}

flb_status gru_cell(void*, const flb_kernel_call* c) {
  return with_cell(c, 7, [&](auto tag) {
    using T = decltype(tag);
    int64_t rows, h;
    rows_cols(c->tensors[2], &rows, &h);
    if (rows * h == 0) return FLB_OK;
    gru_cell_kernel<T><<<blocks_for(rows * h), kThreads, 0, static_cast<cudaStream_t>(c->stream)>>>(
        data<T>(c, 0), data<T>(c, 1), data<T>(c, 2), data<T>(c, 3), data<T>(c, 4), data<T>(c, 5),
        data<T>(c, 6), rows, h);
    return launch_status(c->op);
  });
}

flb_status gru_cell_backward(void*, const flb_kernel_call* c) {
  return with_cell(c, 5, [&](auto tag) {
    using T = decltype(tag);
    int64_t rows, h;
    rows_cols(c->tensors[0], &rows, &h);
    if (rows * h == 0) return FLB_OK;
    gru_cell_backward_kernel<T>
        <<<blocks_for(rows * h), kThreads, 0, static_cast<cudaStream_t>(c->stream)>>>(
            data<T>(c, 0), data<T>(c, 1), data<T>(c, 2), data<T>(c, 3), data<T>(c, 4), rows, h);
    return launch_status(c->op);
  });
}

}  // namespace flambeau::cuda::kernels
