// The elementwise loop: out[i] = op(in0[i], ...) over strided operands of one
// dtype T (the core has broadcast the inputs to out's shape and cast them to
// the compute dtype), computed in acc_t<T>. A dense fast path indexes directly;
// otherwise strides are merged and a 32-bit index is used when it suffices.
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
__device__ inline A apply(const Op& op, const A (&args)[NIN]) {
  if constexpr (NIN == 1)
    return op(args[0]);
  else
    return op(args[0], args[1]);
}

template <class T, int NIN, class Op, class Index, bool Dense>
__global__ void elementwise_kernel(StridedIndex<NIN + 1> ix, char* out, Pointers<NIN> in, Index n,
                                   Op op) {
  using A = acc_t<T>;
  const Index step = static_cast<Index>(blockDim.x) * gridDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    Index off[NIN + 1];
    if constexpr (Dense) {
      for (int k = 0; k <= NIN; ++k) off[k] = i * static_cast<Index>(sizeof(T));
    } else {
      ix.offsets(i, off);
    }
    A args[NIN];
    for (int k = 0; k < NIN; ++k)
      args[k] = convert<A>(*reinterpret_cast<const T*>(in.p[k] + off[k + 1]));
    *reinterpret_cast<T*>(out + off[0]) = convert<T>(apply<A, Op, NIN>(op, args));
  }
}

// Runs op over tensors [out, inputs...] of the call, all of dtype T.
template <class T, int NIN, class Op>
flb_status launch_elementwise(const flb_kernel_call* c, const Op& op) {
  if (c->n_tensors < NIN + 1) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "too few tensors");
  const flb_tensor& out = c->tensors[0];
  const int64_t* strides[NIN + 1];
  int64_t item[NIN + 1];
  Pointers<NIN> in{};
  for (int k = 0; k <= NIN; ++k) {
    const flb_tensor& t = c->tensors[k];
    if (t.ndim != out.ndim) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "ranks differ");
    strides[k] = t.strides;
    item[k] = sizeof(T);
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
  if (ix.contiguous(item)) {
    elementwise_kernel<T, NIN, Op, int64_t, true>
        <<<blocks, kThreads, 0, stream>>>(ix, o, in, n, op);
  } else if (n * static_cast<int64_t>(sizeof(T)) < (int64_t(1) << 31)) {
    // 32-bit offsets when the largest byte offset fits (strides are never negative).
    int64_t extent = 0;
    for (int k = 0; k <= NIN; ++k) {
      int64_t e = 0;
      for (int d = 0; d < ix.ndim; ++d) e += (ix.sizes[d] - 1) * ix.strides[k][d];
      if (e > extent) extent = e;
    }
    if (extent < (int64_t(1) << 31))
      elementwise_kernel<T, NIN, Op, int32_t, false>
          <<<blocks, kThreads, 0, stream>>>(ix, o, in, static_cast<int32_t>(n), op);
    else
      elementwise_kernel<T, NIN, Op, int64_t, false>
          <<<blocks, kThreads, 0, stream>>>(ix, o, in, n, op);
  } else {
    elementwise_kernel<T, NIN, Op, int64_t, false>
        <<<blocks, kThreads, 0, stream>>>(ix, o, in, n, op);
  }
  return launch_status(c->op);
}

// Whether every tensor of the call has dtype `dtype`.
inline bool all_dtype(const flb_kernel_call* c, int32_t dtype) {
  for (int i = 0; i < c->n_tensors; ++i)
    if (c->tensors[i].dtype != dtype) return false;
  return true;
}

}  // namespace flambeau::cuda::kernels
