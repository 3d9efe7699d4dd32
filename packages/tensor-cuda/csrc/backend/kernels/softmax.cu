// softmax / log_softmax (tensors [out, in]) and their backward
// _softmax_backward_data (tensors [grad_input, grad_output, output]), ints
// [outer, n, inner, log], every tensor contiguous (outer, n, inner) of one
// floating dtype, computed in acc_t (float for the 16-bit floats). Rows along the
// last dim (inner == 1) longer than 32 take one block each (max, then sum of
// exp(x - max), each a fixed tree); other layouts one thread per (outer, inner)
// column, walking n serially. Either order depends on the shape alone
// (deterministic). As the CPU: a row whose max is -inf shifts by 0 instead.
#include "backend/kernels/call_args.cuh"
#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"
#include "backend/kernels/reduce_plan.h"

namespace flambeau::cuda::kernels {

namespace {

template <class T>
__global__ void softmax_columns_kernel(T* out, const T* in, int64_t outer, int64_t n, int64_t inner,
                                       bool log_out) {
  using A = acc_t<T>;
  const int64_t columns = outer * inner;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; col < columns;
       col += step) {
    const int64_t base = (col / inner) * n * inner + col % inner;
    A m = -INFINITY;
    for (int64_t i = 0; i < n; ++i) {
      const A x = convert<A>(in[base + i * inner]);
      m = x > m || x != x ? x : m;
    }
    if (isinf(m) && m < A(0)) m = 0;
    A sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += exp(convert<A>(in[base + i * inner]) - m);
    const A log_sum = log(sum);
    for (int64_t i = 0; i < n; ++i) {
      const A shifted = convert<A>(in[base + i * inner]) - m;
      out[base + i * inner] = convert<T>(log_out ? shifted - log_sum : exp(shifted) / sum);
    }
  }
}

// Combines partial[0..blockDim) into partial[0] (a power-of-two block), max or sum.
template <class A, bool Max>
__device__ A block_combine(A* partial, A mine) {
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const A a = partial[threadIdx.x], b = partial[threadIdx.x + half];
      partial[threadIdx.x] = Max ? (b > a || b != b ? b : a) : a + b;
    }
    __syncthreads();
  }
  const A result = partial[0];
  __syncthreads();  // partial is reused by the next combine
  return result;
}

template <class T>
__global__ void softmax_rows_kernel(T* out, const T* in, int64_t rows, int64_t n, bool log_out) {
  using A = acc_t<T>;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  A* partial = reinterpret_cast<A*>(shared_bytes);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* x = in + r * n;
    T* y = out + r * n;
    A m = -INFINITY;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const A v = convert<A>(x[i]);
      m = v > m || v != v ? v : m;
    }
    m = block_combine<A, true>(partial, m);
    if (isinf(m) && m < A(0)) m = 0;
    A sum = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += exp(convert<A>(x[i]) - m);
    sum = block_combine<A, false>(partial, sum);
    const A log_sum = log(sum);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const A shifted = convert<A>(x[i]) - m;
      y[i] = convert<T>(log_out ? shifted - log_sum : exp(shifted) / sum);
    }
  }
}

// The backward's per-element term of the sum: g (log_softmax) or g * y (softmax).
template <class A>
__device__ inline A backward_term(A g, A y, bool log_out) {
  return log_out ? g : g * y;
}

// grad_input from the sum s: g - exp(y) * s (log_softmax) or y * (g - s) (softmax).
template <class A>
__device__ inline A backward_value(A g, A y, A s, bool log_out) {
  return log_out ? g - exp(y) * s : y * (g - s);
}

template <class T>
__global__ void softmax_backward_columns_kernel(T* gi, const T* g, const T* y, int64_t outer,
                                                int64_t n, int64_t inner, bool log_out) {
  using A = acc_t<T>;
  const int64_t columns = outer * inner;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; col < columns;
       col += step) {
    const int64_t base = (col / inner) * n * inner + col % inner;
    A s = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = base + i * inner;
      s += backward_term(convert<A>(g[k]), convert<A>(y[k]), log_out);
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = base + i * inner;
      gi[k] = convert<T>(backward_value(convert<A>(g[k]), convert<A>(y[k]), s, log_out));
    }
  }
}

template <class T>
__global__ void softmax_backward_rows_kernel(T* gi, const T* g, const T* y, int64_t rows, int64_t n,
                                             bool log_out) {
  using A = acc_t<T>;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  A* partial = reinterpret_cast<A*>(shared_bytes);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t o = r * n;
    A s = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      s += backward_term(convert<A>(g[o + i]), convert<A>(y[o + i]), log_out);
    s = block_combine<A, false>(partial, s);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      gi[o + i] =
          convert<T>(backward_value(convert<A>(g[o + i]), convert<A>(y[o + i]), s, log_out));
  }
}

// Runs the forward (2 tensors) or the backward (3 tensors) of the call.
flb_status softmax_call(const flb_kernel_call* c, int n_tensors) {
  if (c->n_tensors != n_tensors || c->n_ints != 4)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op,
                       "expected the tensors and [outer, n, inner, log]");
  for (int k = 0; k < n_tensors; ++k) {
    if (c->tensors[k].dtype != c->tensors[0].dtype) return unsupported_dtypes(c);
    if (!dense(c->tensors[k]))
      return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected contiguous tensors");
  }
  const int64_t outer = c->ints[0], n = c->ints[1], inner = c->ints[2];
  const bool log_out = c->ints[3] != 0;
  if (outer * n * inner == 0) return FLB_OK;
  flb_status status = FLB_OK;
  bool known = dispatch(c->tensors[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    if constexpr (!std::is_floating_point_v<A>) {
      status = unsupported_dtypes(c);
    } else {
      runtime::DeviceGuard guard(c->device_index);
      auto stream = static_cast<cudaStream_t>(c->stream);
      auto data = [&](int k) { return static_cast<T*>(c->tensors[k].data); };
      const bool rows = inner == 1 && n > kSerialReduceMax;
      const unsigned threads = reduce_threads_for(n);
      const int64_t cap = 65535LL * 32;
      const unsigned row_blocks = static_cast<unsigned>(outer < cap ? outer : cap);
      const unsigned column_blocks = blocks_for(outer * inner);
      const size_t shared = threads * sizeof(A);
      if (n_tensors == 2 && rows)
        softmax_rows_kernel<T>
            <<<row_blocks, threads, shared, stream>>>(data(0), data(1), outer, n, log_out);
      else if (n_tensors == 2)
        softmax_columns_kernel<T>
            <<<column_blocks, kThreads, 0, stream>>>(data(0), data(1), outer, n, inner, log_out);
      else if (rows)
        softmax_backward_rows_kernel<T>
            <<<row_blocks, threads, shared, stream>>>(data(0), data(1), data(2), outer, n, log_out);
      else
        softmax_backward_columns_kernel<T><<<column_blocks, kThreads, 0, stream>>>(
            data(0), data(1), data(2), outer, n, inner, log_out);
      status = launch_status(c->op);
    }
  });
  return known ? status : unsupported_dtypes(c);
}

}  // namespace

flb_status softmax(void*, const flb_kernel_call* c) { return softmax_call(c, 2); }

flb_status softmax_backward(void*, const flb_kernel_call* c) { return softmax_call(c, 3); }

}  // namespace flambeau::cuda::kernels
