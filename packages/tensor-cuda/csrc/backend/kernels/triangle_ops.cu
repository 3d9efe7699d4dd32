// tril / triu: tensors [self] (any strides, rank >= 2), ints [diagonal]. As the
// CPU kernel (cpu/triangle_kernels.cpp) does, in place: every element of each
// matrix (the last two dims) outside the kept triangle becomes zero. Zero bits
// are zero in every dtype, so the kernel moves elements by width only.
#include <cstdint>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/kernels.h"
#include "backend/kernels/strided_index.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

// The batch dims (all but the last two) of self: sizes and element strides.
struct BatchDims {
  int ndim;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims];
};

// Whether (r, c) is zeroed: tril keeps c <= r + k, triu keeps c >= r + k.
template <bool Lower>
__device__ inline bool outside(int64_t r, int64_t c, int64_t k) {
  return Lower ? c > r + k : c < r + k;
}

template <class W, bool Lower>
__global__ void triangle_kernel(W* self, BatchDims batch, int64_t rows, int64_t cols,
                                int64_t row_stride, int64_t col_stride, int64_t k, int64_t total) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += step) {
    const int64_t c = e % cols, r = (e / cols) % rows;
    if (!outside<Lower>(r, c, k)) continue;
    int64_t b = e / (cols * rows), off = r * row_stride + c * col_stride;
    for (int d = batch.ndim - 1; d >= 0; --d) {  // unravel the batch index
      off += (b % batch.sizes[d]) * batch.strides[d];
      b /= batch.sizes[d];
    }
    self[off] = W(0);
  }
}

}  // namespace

flb_status triangle(void* ctx, const flb_kernel_call* c) {
  const bool lower = *static_cast<const TriangleOp*>(ctx) == TriangleOp::kTril;
  if (c->n_tensors != 1 || c->n_ints != 1)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected a tensor and a diagonal");
  const flb_tensor& self = c->tensors[0];
  const int nd = self.ndim;
  if (nd < 2) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected at least two dims");
  if (nd - 2 > kMaxDims)
    return kernel_fail(FLB_NOT_IMPLEMENTED, c->op, "more than 16 batch dimensions");
  const int64_t total = numel(self);
  if (total == 0) return FLB_OK;
  BatchDims batch{};
  batch.ndim = nd - 2;
  for (int d = 0; d < nd - 2; ++d) {
    batch.sizes[d] = self.sizes[d];
    batch.strides[d] = self.strides[d];
  }
  const int64_t rows = self.sizes[nd - 2], cols = self.sizes[nd - 1], k = c->ints[0];
  runtime::DeviceGuard guard(c->device_index);
  auto stream = static_cast<cudaStream_t>(c->stream);
  const bool known = dispatch_width(itemsize(self.dtype), [&](auto tag) {
    using W = decltype(tag);
    auto* p = static_cast<W*>(self.data);
    if (lower)
      triangle_kernel<W, true><<<blocks_for(total), kThreads, 0, stream>>>(
          p, batch, rows, cols, self.strides[nd - 2], self.strides[nd - 1], k, total);
    else
      triangle_kernel<W, false><<<blocks_for(total), kThreads, 0, stream>>>(
          p, batch, rows, cols, self.strides[nd - 2], self.strides[nd - 1], k, total);
  });
  return known ? launch_status(c->op) : unsupported_dtypes(c);
}

}  // namespace flambeau::cuda::kernels
