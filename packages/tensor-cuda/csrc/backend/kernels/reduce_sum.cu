// sum over dims: tensors [out, in], ints [dims...]; out has in's rank with the
// reduced dims of size 1 and may have another dtype (int32 sums into int64).
// One block per output element reduces its slice in a fixed tree order, so the
// result does not depend on timing (the kernel is deterministic).
#include <type_traits>

#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"

namespace flambeau::cuda::kernels {

namespace {

// The accumulation type of a sum into O: double for double, float for the
// other floats, int64 for integers and bool.
template <class O>
using sum_acc_t = std::conditional_t<std::is_same_v<O, double>, double,
                                     std::conditional_t<std::is_integral_v<O>, int64_t, float>>;

template <class O>
__global__ void sum_kernel(StridedIndex<2> outer, StridedIndex<1> inner, char* out, const char* in,
                           int32_t in_dtype, int64_t n_out, int64_t n_inner) {
  using Acc = sum_acc_t<O>;
  extern __shared__ unsigned char shared_bytes[];
  Acc* partial = reinterpret_cast<Acc*>(shared_bytes);
  for (int64_t o = blockIdx.x; o < n_out; o += gridDim.x) {
    int64_t base[2];
    outer.offsets(o, base);
    Acc acc = Acc(0);
    for (int64_t r = threadIdx.x; r < n_inner; r += blockDim.x) {
      int64_t off[1];
      inner.offsets(r, off);
      acc += load_as<Acc>(in + base[1] + off[0], in_dtype);
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
      __syncthreads();
    }
    if (threadIdx.x == 0) *reinterpret_cast<O*>(out + base[0]) = convert<O>(partial[0]);
    __syncthreads();
  }
}

// Threads per block: a power of two covering the reduced count, from 32 to 256.
unsigned threads_for(int64_t n_inner) {
  unsigned t = 32;
  while (t < kThreads && t < n_inner) t *= 2;
  return t;
}

}  // namespace

flb_status sum(void*, const flb_kernel_call* c) {
  if (c->n_tensors != 2) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected two tensors");
  const flb_tensor &out = c->tensors[0], &in = c->tensors[1];
  if (out.ndim != in.ndim || in.ndim > 64)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "out must have in's rank");
  if (!dispatch(in.dtype, [](auto) {})) return unsupported_dtypes(c);
  bool reduced[64] = {};
  for (int i = 0; i < c->n_ints; ++i) {
    int64_t d = c->ints[i];
    if (d < 0 || d >= in.ndim) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "bad dim");
    reduced[d] = true;
  }
  int64_t kept_shape[64], inner_shape[64];
  for (int d = 0; d < in.ndim; ++d) {
    kept_shape[d] = reduced[d] ? 1 : in.sizes[d];
    inner_shape[d] = reduced[d] ? in.sizes[d] : 1;
  }
  const int64_t n_out = numel(out);
  int64_t n_inner = 1;
  for (int d = 0; d < in.ndim; ++d) n_inner *= inner_shape[d];
  if (n_out == 0) return FLB_OK;
  flb_status status = FLB_OK;
  bool known = dispatch(out.dtype, [&](auto tag) {
    using O = decltype(tag);
    const int64_t* outer_strides[2] = {out.strides, in.strides};
    const int64_t outer_item[2] = {sizeof(O), itemsize(in.dtype)};
    const int64_t* inner_strides[1] = {in.strides};
    const int64_t inner_item[1] = {itemsize(in.dtype)};
    StridedIndex<2> outer;
    StridedIndex<1> inner;
    if (!make_index<2>(in.ndim, kept_shape, outer_strides, outer_item, &outer) ||
        !make_index<1>(in.ndim, inner_shape, inner_strides, inner_item, &inner)) {
      status = kernel_fail(FLB_NOT_IMPLEMENTED, c->op, "more than 16 non-mergeable dimensions");
      return;
    }
    runtime::DeviceGuard guard(c->device_index);
    auto stream = static_cast<cudaStream_t>(c->stream);
    const unsigned threads = threads_for(n_inner);
    const unsigned blocks = static_cast<unsigned>(n_out < 65535LL * 32 ? n_out : 65535LL * 32);
    sum_kernel<O><<<blocks, threads, threads * sizeof(sum_acc_t<O>), stream>>>(
        outer, inner, static_cast<char*>(out.data), static_cast<const char*>(in.data), in.dtype,
        n_out, n_inner);
    status = launch_status(c->op);
  });
  return known ? status : unsupported_dtypes(c);
}

}  // namespace flambeau::cuda::kernels
