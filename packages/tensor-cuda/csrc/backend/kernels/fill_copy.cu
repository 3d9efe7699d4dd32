// fill_ (self = value) and copy_ within a device (dst = src, same shape, src
// possibly broadcast and of another dtype).
#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"

namespace flambeau::cuda::kernels {

namespace {

template <class T, class Index, bool Dense>
__global__ void fill_kernel(StridedIndex<1> ix, char* out, Index n, T value) {
  const Index step = static_cast<Index>(blockDim.x) * gridDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    Index off[1] = {i * static_cast<Index>(sizeof(T))};
    if constexpr (!Dense) ix.offsets(i, off);
    *reinterpret_cast<T*>(out + off[0]) = value;
  }
}

// dst (type D) from src of runtime dtype src_dtype.
template <class D, class Index>
__global__ void copy_kernel(StridedIndex<2> ix, char* dst, const char* src, int32_t src_dtype,
                            Index n) {
  const Index step = static_cast<Index>(blockDim.x) * gridDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    Index off[2];
    ix.offsets(i, off);
    *reinterpret_cast<D*>(dst + off[0]) = load_as<D>(src + off[1], src_dtype);
  }
}

bool fits_32bit(int64_t n, const int64_t* extents, int count) {
  for (int k = 0; k < count; ++k)
    if (extents[k] >= (int64_t(1) << 31)) return false;
  return n < (int64_t(1) << 31);
}

template <int N>
void extents_of(const StridedIndex<N>& ix, int64_t (&out)[N]) {
  for (int k = 0; k < N; ++k) {
    out[k] = 0;
    for (int d = 0; d < ix.ndim; ++d) out[k] += (ix.sizes[d] - 1) * ix.strides[k][d];
  }
}

}  // namespace

flb_status fill(void*, const flb_kernel_call* c) {
  if (c->n_tensors != 1 || c->n_scalars != 1)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected one tensor and one scalar");
  const flb_tensor& t = c->tensors[0];
  const int64_t n = numel(t);
  if (n == 0) return FLB_OK;
  flb_status status = FLB_OK;
  bool known = dispatch(t.dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t* strides[1] = {t.strides};
    const int64_t item[1] = {sizeof(T)};
    StridedIndex<1> ix;
    if (!make_index<1>(t.ndim, t.sizes, strides, item, &ix)) {
      status = kernel_fail(FLB_NOT_IMPLEMENTED, c->op, "more than 16 non-mergeable dimensions");
      return;
    }
    runtime::DeviceGuard guard(c->device_index);
    auto stream = static_cast<cudaStream_t>(c->stream);
    const T value = scalar_as<T>(c->scalars[0]);
    char* out = static_cast<char*>(t.data);
    int64_t extent[1];
    extents_of(ix, extent);
    if (ix.contiguous(item))
      fill_kernel<T, int64_t, true><<<blocks_for(n), kThreads, 0, stream>>>(ix, out, n, value);
    else if (fits_32bit(n, extent, 1))
      fill_kernel<T, int32_t, false>
          <<<blocks_for(n), kThreads, 0, stream>>>(ix, out, static_cast<int32_t>(n), value);
    else
      fill_kernel<T, int64_t, false><<<blocks_for(n), kThreads, 0, stream>>>(ix, out, n, value);
    status = launch_status(c->op);
  });
  return known ? status : unsupported_dtypes(c);
}

flb_status copy(void*, const flb_kernel_call* c) {
  if (c->n_tensors != 2) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected two tensors");
  const flb_tensor &dst = c->tensors[0], &src = c->tensors[1];
  if (dst.ndim != src.ndim) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "ranks differ");
  const int64_t n = numel(dst);
  if (n == 0) return FLB_OK;
  if (!dispatch(src.dtype, [](auto) {})) return unsupported_dtypes(c);
  flb_status status = FLB_OK;
  bool known = dispatch(dst.dtype, [&](auto tag) {
    using D = decltype(tag);
    const int64_t* strides[2] = {dst.strides, src.strides};
    const int64_t item[2] = {sizeof(D), itemsize(src.dtype)};
    StridedIndex<2> ix;
    if (!make_index<2>(dst.ndim, dst.sizes, strides, item, &ix)) {
      status = kernel_fail(FLB_NOT_IMPLEMENTED, c->op, "more than 16 non-mergeable dimensions");
      return;
    }
    runtime::DeviceGuard guard(c->device_index);
    auto stream = static_cast<cudaStream_t>(c->stream);
    if (dst.dtype == src.dtype && ix.contiguous(item)) {
      status = cudaMemcpyAsync(dst.data, src.data, n * sizeof(D), cudaMemcpyDeviceToDevice,
                               stream) == cudaSuccess
                   ? FLB_OK
                   : launch_status(c->op);
      return;
    }
    char* d = static_cast<char*>(dst.data);
    const char* s = static_cast<const char*>(src.data);
    int64_t extent[2];
    extents_of(ix, extent);
    if (fits_32bit(n, extent, 2))
      copy_kernel<D, int32_t>
          <<<blocks_for(n), kThreads, 0, stream>>>(ix, d, s, src.dtype, static_cast<int32_t>(n));
    else
      copy_kernel<D, int64_t><<<blocks_for(n), kThreads, 0, stream>>>(ix, d, s, src.dtype, n);
    status = launch_status(c->op);
  });
  return known ? status : unsupported_dtypes(c);
}

}  // namespace flambeau::cuda::kernels
