// The elementwise loop: out[i] = op(in0[i], ...) over strided operands, the
// inputs of one dtype T and out of dtype O (T itself, or bool for comparisons;
// the core has broadcast the inputs to out's shape and cast them to the compute
// dtype), computed in acc_t<T>. A dense fast path indexes directly; otherwise
// strides are merged and a 32-bit index is used when it suffices.
#pragma once
#include <cuda_runtime_api.h>
#include <flambeau/backend_abi.h>

#include "backend/kernels/dtypes.cuh"
#include "backend/kernels/launch.cuh"
#include "backend/kernels/strided_index.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

template <int N>
struct Pointers {
  const char* p[N > 0 ? N : 1];
};

template <class A, class Op, int NIN>
__device__ inline auto apply(const Op& op, const A (&args)[NIN]) {
  if constexpr (NIN == 1)
    return op(args[0]);
  else if constexpr (NIN == 2)
    return op(args[0], args[1]);
  else
    return op(args[0], args[1], args[2]);
}

template <class O, class T, int NIN, class Op, class Index, bool Dense>
__global__ void elementwise_kernel(StridedIndex<NIN + 1> ix, char* out, Pointers<NIN> in, Index n,
                                   Op op) {
  using A = acc_t<T>;
  const Index step = static_cast<Index>(blockDim.x) * gridDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    Index off[NIN + 1];
    if constexpr (Dense) {
      off[0] = i * static_cast<Index>(sizeof(O));
      for (int k = 1; k <= NIN; ++k) off[k] = i * static_cast<Index>(sizeof(T));
    } else {
      ix.offsets(i, off);
    }
    A args[NIN];
    for (int k = 0; k < NIN; ++k)
      args[k] = convert<A>(*reinterpret_cast<const T*>(in.p[k] + off[k + 1]));
    *reinterpret_cast<O*>(out + off[0]) = convert<O>(apply<A, Op, NIN>(op, args));
  }
}

// Whether byte offsets up to the index's largest one, and n, fit 32-bit indexing
// (strides are never negative).
template <int N>
bool fits_32bit_index(const StridedIndex<N>& ix, int64_t n, int64_t largest_item) {
  if (n * largest_item >= (int64_t(1) << 31)) return false;
  for (int k = 0; k < N; ++k) {
    int64_t e = 0;
    for (int d = 0; d < ix.ndim; ++d) e += (ix.sizes[d] - 1) * ix.strides[k][d];
    if (e >= (int64_t(1) << 31)) return false;
  }
  return true;
}

// Runs op over tensors [out (O), inputs (T)...] of the call.
template <class O, class T, int NIN, class Op>
flb_status launch_elementwise_to(const flb_kernel_call* c, const Op& op) {
  if (c->n_tensors < NIN + 1) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "too few tensors");
  const flb_tensor& out = c->tensors[0];
  const int64_t* strides[NIN + 1];
  int64_t item[NIN + 1];
  Pointers<NIN> in{};
  for (int k = 0; k <= NIN; ++k) {
    const flb_tensor& t = c->tensors[k];
    if (t.ndim != out.ndim) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "ranks differ");
    strides[k] = t.strides;
    item[k] = k == 0 ? sizeof(O) : sizeof(T);
    if (k > 0) in.p[k - 1] = static_cast<const char*>(t.data);
  }
  const int64_t n = numel(out);
  if (n == 0) return FLB_OK;
  StridedIndex<NIN + 1> ix;
  if (!make_index<NIN + 1>(out.ndim, out.sizes, strides, item, &ix))
    return kernel_fail(FLB_NOT_IMPLEMENTED, c->op, "more than 16 non-mergeable dimensions");
  runtime::DeviceGuard guard(c->device_index);
  auto stream = static_cast<cudaStream_t>(c->stream);
  char* o = static_cast<char*>(out.data);
  const unsigned blocks = blocks_for(n);
  constexpr int64_t largest = sizeof(O) > sizeof(T) ? sizeof(O) : sizeof(T);
  if (ix.contiguous(item))
    elementwise_kernel<O, T, NIN, Op, int64_t, true>
        <<<blocks, kThreads, 0, stream>>>(ix, o, in, n, op);
  else if (fits_32bit_index(ix, n, largest))
    elementwise_kernel<O, T, NIN, Op, int32_t, false>
        <<<blocks, kThreads, 0, stream>>>(ix, o, in, static_cast<int32_t>(n), op);
  else
    elementwise_kernel<O, T, NIN, Op, int64_t, false>
        <<<blocks, kThreads, 0, stream>>>(ix, o, in, n, op);
  return launch_status(c->op);
}

// Runs op over tensors [out, inputs...] of the call, all of dtype T.
template <class T, int NIN, class Op>
flb_status launch_elementwise(const flb_kernel_call* c, const Op& op) {
  return launch_elementwise_to<T, T, NIN>(c, op);
}

// Whether every tensor of the call has dtype `dtype`.
inline bool all_dtype(const flb_kernel_call* c, int32_t dtype) {
  for (int i = 0; i < c->n_tensors; ++i)
    if (c->tensors[i].dtype != dtype) return false;
  return true;
}

// Whether the call's inputs (every tensor after the first) have dtype `dtype`.
inline bool inputs_dtype(const flb_kernel_call* c, int32_t dtype) {
  for (int i = 1; i < c->n_tensors; ++i)
    if (c->tensors[i].dtype != dtype) return false;
  return true;
}

}  // namespace flambeau::cuda::kernels
