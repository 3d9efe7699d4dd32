// cuBLAS for the kernels: libcublas.so.13 (the nvidia-cublas wheel's) is opened
// at the first matrix product, not at import (it maps ~600 MB with cublasLt and
// is absent on machines that never multiply), and one handle is kept per
// (device, stream), each with its own workspace from the caching allocator, so
// that results do not depend on which streams ran before (cuBLAS's rule for
// reproducibility) and no workspace is shared between streams.
#pragma once
#include <cuda_runtime_api.h>
// After cudart's headers, so that cuBLAS's quoted includes resolve to the toolkit's.
#include <cublas_v2.h>

#include <string>

#include "backend/kernels/nvidia_library.h"

namespace flambeau::cuda::kernels {

// The cuBLAS entry points the kernels use, fetched with dlsym.
struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetWorkspace_v2) set_workspace = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasGemmStridedBatchedEx_64) gemm_strided_batched = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

// Where to look for libcublas.so.13 first (the wheel's path, from Python), before
// the soname through the extension's RPATH and the loader's usual search.
void set_cublas_library_path(const std::string& path);

// Opens the library and resolves its entry points (no device needed): "" when
// they are all there, else why not. For the tests and diagnostics.
std::string load_cublas();

// A handle bound to (device, stream), locked for the caller while it enqueues.
using CublasLease = HandleLease<CublasApi, cublasHandle_t>;

// The handle of (device, stream), or false with *error saying why (the library
// could not be opened, cublasCreate or the workspace failed). The device must be
// current.
bool cublas_handle(int device, cudaStream_t stream, CublasLease* lease, std::string* error);

// "cublasX failed: <cuBLAS's words>" for a status.
std::string cublas_error(const CublasApi& api, const char* call, cublasStatus_t status);

}  // namespace flambeau::cuda::kernels
