// Row-major strided batched GEMMs on cuBLAS for the nn kernels (convolution):
//   C[b] = alpha * op(A[b]) op(B[b]) + beta * C[b],  b < batch,
// op(X) = X or X^T, every matrix row-major with its leading dimension and the
// batch stride in elements (0: one matrix shared by the whole batch). cuBLAS is
// column-major: a row-major X is its column-major transpose, so the call
// computes C^T = op(B)^T op(A)^T. float32 and float64, accumulating in their
// own precision (no TF32, as the handles are set up).
#pragma once
#include <cuda_runtime_api.h>
#include <flambeau/backend_abi.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "backend/kernels/cublas_handles.h"
#include "backend/kernels/launch.cuh"

namespace flambeau::cuda::kernels {

struct RowGemm {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;  // C is m x n, op(A) m x k, op(B) k x n
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  int64_t batch = 1;
};

template <class T>
flb_status row_gemm(const flb_kernel_call* c, const RowGemm& g, T alpha, const T* a, const T* b,
                    T beta, T* out) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "float32 or float64");
  if (g.m == 0 || g.n == 0 || g.batch == 0) return FLB_OK;
  auto stream = static_cast<cudaStream_t>(c->stream);
  CublasLease lease;
  std::string error;
  if (!cublas_handle(c->device_index, stream, &lease, &error))
    return kernel_fail(FLB_ERROR, c->op, error);
  constexpr bool is_double = std::is_same_v<T, double>;
  constexpr cudaDataType dt = is_double ? CUDA_R_64F : CUDA_R_32F;
  constexpr cublasComputeType_t compute = is_double ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  // k == 0 still scales C by beta (cuBLAS does so for a zero inner dimension).
  cublasStatus_t st = lease.api->gemm_strided_batched(
      lease.handle, g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
      g.n, g.m, g.k, &alpha, b, dt, g.ldb, g.stride_b, a, dt, g.lda, g.stride_a, &beta, out, dt,
      g.ldc, g.stride_c, g.batch, compute, CUBLAS_GEMM_DEFAULT);
  lease.lock.unlock();
  if (st != CUBLAS_STATUS_SUCCESS)
    return kernel_fail(FLB_ERROR, c->op,
                       cublas_error(*lease.api, "cublasGemmStridedBatchedEx", st));
  return FLB_OK;
}

}  // namespace flambeau::cuda::kernels
