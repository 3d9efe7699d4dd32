// cuSOLVER for the linear-algebra kernels (linalg_ops.cu): libcusolver.so.12 (the
// nvidia-cusolver wheel's, CUDA 13 line) is opened at the first factorization, not
// at import, and one dense handle is kept per (device, stream), as cuBLAS's
// (cublas_handles.h): a handle is bound to one stream and used by one enqueuer at
// a time. Workspaces come from the caching allocator per call (device_buffer.h).
#pragma once
#include <cuda_runtime_api.h>
// After cudart's headers, so that cuSOLVER's quoted includes resolve to the toolkit's.
#include <cusolverDn.h>

#include <string>

#include "backend/kernels/nvidia_library.h"

namespace flambeau::cuda::kernels {

// A float routine and its double twin, fetched with dlsym.
#define FLB_SOLVER_PAIR(NAME)                      \
  decltype(&cusolverDnS##NAME) s_##NAME = nullptr; \
  decltype(&cusolverDnD##NAME) d_##NAME = nullptr;

// The cuSOLVER entry points the kernels use.
struct CusolverApi {
  decltype(&cusolverDnCreate) create = nullptr;
  decltype(&cusolverDnSetStream) set_stream = nullptr;
  decltype(&cusolverDnCreateGesvdjInfo) create_gesvdj_info = nullptr;
  decltype(&cusolverDnDestroyGesvdjInfo) destroy_gesvdj_info = nullptr;
  FLB_SOLVER_PAIR(getrf_bufferSize)
  FLB_SOLVER_PAIR(getrf)
  FLB_SOLVER_PAIR(getrs)
  FLB_SOLVER_PAIR(potrf_bufferSize)
  FLB_SOLVER_PAIR(potrf)
  FLB_SOLVER_PAIR(geqrf_bufferSize)
  FLB_SOLVER_PAIR(geqrf)
  FLB_SOLVER_PAIR(orgqr_bufferSize)
  FLB_SOLVER_PAIR(orgqr)
  FLB_SOLVER_PAIR(syevd_bufferSize)
  FLB_SOLVER_PAIR(syevd)
  FLB_SOLVER_PAIR(gesvdj_bufferSize)
  FLB_SOLVER_PAIR(gesvdj)
  FLB_SOLVER_PAIR(sytrf_bufferSize)
  FLB_SOLVER_PAIR(sytrf)
};
#undef FLB_SOLVER_PAIR

// Where to look for libcusolver.so.12 first (the wheel's path, from Python).
void set_cusolver_library_path(const std::string& path);

// Opens the library and resolves its entry points (no device needed): "" when
// they are all there, else why not. For the tests and diagnostics.
std::string load_cusolver();

// A handle bound to (device, stream), locked for the caller while it enqueues.
using CusolverLease = HandleLease<CusolverApi, cusolverDnHandle_t>;

// The handle of (device, stream), or false with *error saying why. The device
// must be current.
bool cusolver_handle(int device, cudaStream_t stream, CusolverLease* lease, std::string* error);

// "<call> failed: CUSOLVER_STATUS_<name>" for a status.
std::string cusolver_error(const char* call, cusolverStatus_t status);

}  // namespace flambeau::cuda::kernels
