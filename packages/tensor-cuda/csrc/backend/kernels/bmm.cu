// bmm: tensors [out (B, M, N), a (B, M, K), b (B, K, N)], one dtype. The floating
// dtypes go to cuBLAS (cublasGemmStridedBatchedEx, accumulating in float for the
// 16-bit floats and float32, in double for float64); operands that are neither
// row- nor column-major are packed first (the copy_ kernel into memory from the
// caching allocator, freed in stream order). Integers, which cuBLAS lacks, run a
// plain loop wrapping as the CPU's. K = 0 gives zeros.
#include <string>
#include <type_traits>

#include "backend/kernels/cublas_handles.h"
#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"
#include "backend/kernels/matrix_layout.h"
#include "backend/state.h"

namespace flambeau::cuda::kernels {

namespace {

struct Strides3 {
  int64_t s[3];
};

// A device buffer from the caching allocator for the current call's stream.
class Scratch {
 public:
  ~Scratch() {
    if (ptr_ != nullptr) backend::allocator().free(ptr_);
  }
  // FLB_OK, or the allocator's failure recorded for op.
  flb_status allocate(int device, size_t nbytes, cudaStream_t stream, const char* op) {
    try {
      ptr_ = backend::allocator().malloc(device, nbytes, stream);
    } catch (const std::exception& e) {
      return kernel_fail(FLB_OUT_OF_MEMORY, op, e.what());
    }
    return FLB_OK;
  }
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

// A contiguous (B, rows, cols) copy of `t` (the copy_ kernel on the call's stream).
struct Packed {
  flb_tensor view{};
  int64_t strides[3] = {};
  Scratch memory;
};

flb_status pack(const flb_kernel_call* c, const flb_tensor& t, Packed* out) {
  const int64_t rows = t.sizes[1], cols = t.sizes[2];
  const int64_t bytes = t.sizes[0] * rows * cols * itemsize(t.dtype);
  auto stream = static_cast<cudaStream_t>(c->stream);
  if (flb_status s = out->memory.allocate(c->device_index, bytes, stream, c->op); s != FLB_OK)
    return s;
  out->strides[0] = rows * cols;
  out->strides[1] = cols;
  out->strides[2] = 1;
  out->view = t;
  out->view.data = out->memory.get();
  out->view.strides = out->strides;
  flb_tensor pair[2] = {out->view, t};
  flb_kernel_call copy_call = *c;
  copy_call.n_tensors = 2;
  copy_call.tensors = pair;
  copy_call.n_scalars = 0;
  copy_call.n_ints = 0;
  return copy(nullptr, &copy_call);
}

template <class T>
struct CublasTypes;
template <>
struct CublasTypes<float> {
  static constexpr cudaDataType data = CUDA_R_32F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  using scale = float;
};
template <>
struct CublasTypes<double> {
  static constexpr cudaDataType data = CUDA_R_64F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_64F;
  using scale = double;
};
template <>
struct CublasTypes<__half> {
  static constexpr cudaDataType data = CUDA_R_16F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  using scale = float;
};
template <>
struct CublasTypes<__nv_bfloat16> {
  static constexpr cudaDataType data = CUDA_R_16BF;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  using scale = float;
};

template <class T>
flb_status gemm_cublas(const flb_kernel_call* c, const flb_tensor& out, const flb_tensor& a,
                       const flb_tensor& b) {
  const int64_t batch = out.sizes[0], M = out.sizes[1], N = out.sizes[2], K = a.sizes[2];
  auto stream = static_cast<cudaStream_t>(c->stream);
  Packed packed_a, packed_b, packed_out;
  const flb_tensor *pa = &a, *pb = &b;
  MatrixLayout la = matrix_layout(M, K, a.strides[1], a.strides[2]);
  MatrixLayout lb = matrix_layout(K, N, b.strides[1], b.strides[2]);
  if (!la.ok) {
    if (flb_status s = pack(c, a, &packed_a); s != FLB_OK) return s;
    pa = &packed_a.view;
    la = matrix_layout(M, K, K, 1);
  }
  if (!lb.ok) {
    if (flb_status s = pack(c, b, &packed_b); s != FLB_OK) return s;
    pb = &packed_b.view;
    lb = matrix_layout(K, N, N, 1);
  }
  // out must be row-major; otherwise the product goes to a packed buffer first.
  const MatrixLayout lo = matrix_layout(M, N, out.strides[1], out.strides[2]);
  const bool direct = lo.ok && !lo.transposed;
  const flb_tensor* po = &out;
  if (!direct) {
    const int64_t bytes = batch * M * N * static_cast<int64_t>(sizeof(T));
    if (flb_status s = packed_out.memory.allocate(c->device_index, bytes, stream, c->op);
        s != FLB_OK)
      return s;
    packed_out.strides[0] = M * N;
    packed_out.strides[1] = N;
    packed_out.strides[2] = 1;
    packed_out.view = out;
    packed_out.view.data = packed_out.memory.get();
    packed_out.view.strides = packed_out.strides;
    po = &packed_out.view;
  }
  const GemmArgs g = gemm_args(batch, M, N, K, la, pa->strides[0], lb, pb->strides[0],
                               direct ? lo.ld : N, po->strides[0]);
  CublasLease lease;
  std::string error;
  if (!cublas_handle(c->device_index, stream, &lease, &error))
    return kernel_fail(FLB_ERROR, c->op, error);
  using S = typename CublasTypes<T>::scale;
  const S one = 1, zero = 0;
  constexpr cudaDataType dt = CublasTypes<T>::data;
  cublasStatus_t st = lease.api->gemm_strided_batched(
      lease.handle, g.transa ? CUBLAS_OP_T : CUBLAS_OP_N, g.transb ? CUBLAS_OP_T : CUBLAS_OP_N, g.m,
      g.n, g.k, &one, pb->data, dt, g.lda, g.stride_a, pa->data, dt, g.ldb, g.stride_b, &zero,
      po->data, dt, g.ldc, g.stride_c, g.batch, CublasTypes<T>::compute, CUBLAS_GEMM_DEFAULT);
  lease.lock.unlock();
  if (st != CUBLAS_STATUS_SUCCESS)
    return kernel_fail(FLB_ERROR, c->op,
                       cublas_error(*lease.api, "cublasGemmStridedBatchedEx", st));
  if (!direct) {
    flb_tensor pair[2] = {out, *po};
    flb_kernel_call copy_call = *c;
    copy_call.n_tensors = 2;
    copy_call.tensors = pair;
    return copy(nullptr, &copy_call);
  }
  return FLB_OK;
}

// out[z, i, j] = sum_p a[z, i, p] * b[z, p, j], one thread per output element,
// accumulated in the unsigned type so that overflow wraps as on the CPU.
template <class T>
__global__ void int_bmm_kernel(char* out, const char* a, const char* b, int64_t M, int64_t N,
                               int64_t K, int64_t total, Strides3 so, Strides3 sa, Strides3 sb) {
  using U = std::make_unsigned_t<T>;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += step) {
    const int64_t j = e % N, i = (e / N) % M, z = e / (N * M);
    const T* arow = reinterpret_cast<const T*>(a) + z * sa.s[0] + i * sa.s[1];
    const T* bcol = reinterpret_cast<const T*>(b) + z * sb.s[0] + j * sb.s[2];
    U acc = 0;
    for (int64_t p = 0; p < K; ++p)
      acc = static_cast<U>(acc +
                           static_cast<U>(arow[p * sa.s[2]]) * static_cast<U>(bcol[p * sb.s[1]]));
    reinterpret_cast<T*>(out)[z * so.s[0] + i * so.s[1] + j * so.s[2]] = static_cast<T>(acc);
  }
}

template <class T>
flb_status int_bmm(const flb_kernel_call* c, const flb_tensor& out, const flb_tensor& a,
                   const flb_tensor& b) {
  const int64_t M = out.sizes[1], N = out.sizes[2], K = a.sizes[2], total = numel(out);
  auto strides = [](const flb_tensor& t) {
    return Strides3{{t.strides[0], t.strides[1], t.strides[2]}};
  };
  runtime::DeviceGuard guard(c->device_index);
  int_bmm_kernel<T><<<blocks_for(total), kThreads, 0, static_cast<cudaStream_t>(c->stream)>>>(
      static_cast<char*>(out.data), static_cast<const char*>(a.data),
      static_cast<const char*>(b.data), M, N, K, total, strides(out), strides(a), strides(b));
  return launch_status(c->op);
}

}  // namespace

flb_status bmm(void*, const flb_kernel_call* c) {
  if (c->n_tensors != 3 || !all_dtype(c, c->tensors[0].dtype)) return unsupported_dtypes(c);
  const flb_tensor &out = c->tensors[0], &a = c->tensors[1], &b = c->tensors[2];
  if (out.ndim != 3 || a.ndim != 3 || b.ndim != 3 || a.sizes[0] != out.sizes[0] ||
      b.sizes[0] != out.sizes[0] || a.sizes[1] != out.sizes[1] || b.sizes[2] != out.sizes[2] ||
      a.sizes[2] != b.sizes[1])
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op,
                       "expected out (B, M, N), a (B, M, K), b (B, K, N)");
  if (numel(out) == 0) return FLB_OK;
  if (a.sizes[2] == 0) {  // an empty sum
    flb_scalar zero{};
    zero.kind = FLB_SCALAR_INT;
    flb_kernel_call fill_call = *c;
    fill_call.n_tensors = 1;
    fill_call.n_scalars = 1;
    fill_call.scalars = &zero;
    return fill(nullptr, &fill_call);
  }
  runtime::DeviceGuard guard(c->device_index);
  flb_status status = FLB_OK;
  bool known = dispatch(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>)
      status = unsupported_dtypes(c);
    else if constexpr (std::is_integral_v<T>)
      status = int_bmm<T>(c, out, a, b);
    else
      status = gemm_cublas<T>(c, out, a, b);
  });
  return known ? status : unsupported_dtypes(c);
}

}  // namespace flambeau::cuda::kernels
