// The reduction helper every reduce kernel uses: an input of dtype T reduced
// over some dims into NOUT outputs (reduce_plan.h), by a reducer R:
//
//   struct R {
//     using acc = ...;
//     __device__ acc identity() const;
//     __device__ acc element(acc_t<T> v, int64_t r) const;  // r: position in the slice
//     __device__ acc combine(acc a, acc b) const;           // a precedes b
//     __device__ void store(acc a, char* const* outs, const int64_t* offsets) const;
//   };
//
// Short slices are reduced by one thread each, in order; longer ones by one block
// each: thread t folds elements t, t + B, ... then a shared-memory tree combines
// pairs (t, t + half). A few outputs over long slices are cut into fixed-length
// chunks, one block each, whose results a second kernel combines in order. Every
// order depends on the shapes alone (deterministic).
#pragma once
#include <cuda_runtime_api.h>
#include <flambeau/backend_abi.h>

#include "backend/kernels/dtypes.cuh"
#include "backend/kernels/launch.cuh"
#include "backend/kernels/reduce_plan.h"
#include "backend/state.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

template <int NOUT>
struct OutPointers {
  char* p[NOUT];
};

template <class T, int NOUT, class R>
__global__ void reduce_serial_kernel(ReducePlan<NOUT> plan, OutPointers<NOUT> outs, const char* in,
                                     R r) {
  using A = acc_t<T>;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < plan.n_out;
       o += step) {
    int64_t base[NOUT + 1];
    plan.outer.offsets(o, base);
    typename R::acc a = r.identity();
    for (int64_t i = 0; i < plan.n_inner; ++i) {
      int64_t off[1];
      plan.inner.offsets(i, off);
      a = r.combine(
          a, r.element(convert<A>(*reinterpret_cast<const T*>(in + base[NOUT] + off[0])), i));
    }
    r.store(a, outs.p, base);
  }
}

// Task t is chunk t % chunks of output t / chunks: elements [c * len, (c + 1) * len)
// of its slice. With one chunk the result is stored; otherwise it goes to
// partials[t] for reduce_chunks_kernel.
template <class T, int NOUT, class R>
__global__ void reduce_block_kernel(ReducePlan<NOUT> plan, OutPointers<NOUT> outs, const char* in,
                                    R r, int64_t chunks, int64_t len, typename R::acc* partials) {
  using A = acc_t<T>;
  using Acc = typename R::acc;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  Acc* partial = reinterpret_cast<Acc*>(shared_bytes);
  for (int64_t t = blockIdx.x; t < plan.n_out * chunks; t += gridDim.x) {
    const int64_t o = t / chunks, c = t % chunks;
    const int64_t end = (c + 1) * len < plan.n_inner ? (c + 1) * len : plan.n_inner;
    int64_t base[NOUT + 1];
    plan.outer.offsets(o, base);
    Acc a = r.identity();
    for (int64_t i = c * len + threadIdx.x; i < end; i += blockDim.x) {
      int64_t off[1];
      plan.inner.offsets(i, off);
      a = r.combine(
          a, r.element(convert<A>(*reinterpret_cast<const T*>(in + base[NOUT] + off[0])), i));
    }
    partial[threadIdx.x] = a;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half)
        partial[threadIdx.x] = r.combine(partial[threadIdx.x], partial[threadIdx.x + half]);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      if (chunks == 1)
        r.store(partial[0], outs.p, base);
      else
        partials[t] = partial[0];
    }
    __syncthreads();
  }
}

// Output o combines its chunks' partial results in order.
template <int NOUT, class R>
__global__ void reduce_chunks_kernel(ReducePlan<NOUT> plan, OutPointers<NOUT> outs, R r,
                                     int64_t chunks, const typename R::acc* partials) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < plan.n_out;
       o += step) {
    int64_t base[NOUT + 1];
    plan.outer.offsets(o, base);
    typename R::acc a = r.identity();
    for (int64_t c = 0; c < chunks; ++c) a = r.combine(a, partials[o * chunks + c]);
    r.store(a, outs.p, base);
  }
}

// Reduces tensor `in` (dtype T) over the dims with reduced[d] set into `outs`
// (NOUT tensors of in's rank, reduced dims of size 1; an absent one is given
// the strides of another output and a null pointer, which store must skip).
template <class T, int NOUT, class R>
flb_status launch_reduce(const flb_kernel_call* c, const flb_tensor& in,
                         const flb_tensor* const (&outs)[NOUT], const int64_t (&out_item)[NOUT],
                         const bool* reduced, const R& r) {
  const int64_t* out_strides[NOUT];
  OutPointers<NOUT> ptrs{};
  for (int k = 0; k < NOUT; ++k) {
    out_strides[k] = outs[k]->strides;
    ptrs.p[k] = static_cast<char*>(outs[k]->data);
  }
  ReducePlan<NOUT> plan;
  if (!make_reduce_plan<NOUT>(in.ndim, in.sizes, in.strides, sizeof(T), out_strides, out_item,
                              reduced, &plan))
    return kernel_fail(FLB_NOT_IMPLEMENTED, c->op, "more than 16 non-mergeable dimensions");
  if (plan.n_out == 0) return FLB_OK;
  runtime::DeviceGuard guard(c->device_index);
  auto stream = static_cast<cudaStream_t>(c->stream);
  const char* src = static_cast<const char*>(in.data);
  if (plan.n_inner <= kSerialReduceMax) {
    reduce_serial_kernel<T, NOUT, R>
        <<<blocks_for(plan.n_out), kThreads, 0, stream>>>(plan, ptrs, src, r);
  } else {
    using Acc = typename R::acc;
    const int64_t chunks = reduce_chunks(plan.n_out, plan.n_inner);
    const int64_t len = (plan.n_inner + chunks - 1) / chunks;
    void* partials = nullptr;
    if (chunks > 1) {
      try {
        partials = backend::allocator().malloc(
            c->device_index, static_cast<size_t>(plan.n_out * chunks) * sizeof(Acc), stream);
      } catch (const std::exception& e) {
        return kernel_fail(FLB_OUT_OF_MEMORY, c->op, e.what());
      }
    }
    const unsigned threads = reduce_threads_for(chunks > 1 ? len : plan.n_inner);
    const int64_t tasks = plan.n_out * chunks, cap = 65535LL * 32;
    const unsigned blocks = static_cast<unsigned>(tasks < cap ? tasks : cap);
    reduce_block_kernel<T, NOUT, R><<<blocks, threads, threads * sizeof(Acc), stream>>>(
        plan, ptrs, src, r, chunks, len, static_cast<Acc*>(partials));
    if (chunks > 1) {
      reduce_chunks_kernel<NOUT, R><<<blocks_for(plan.n_out), kThreads, 0, stream>>>(
          plan, ptrs, r, chunks, static_cast<const Acc*>(partials));
      backend::allocator().free(partials);  // reused only by work queued after this
    }
  }
  return launch_status(c->op);
}

}  // namespace flambeau::cuda::kernels
