// cuFFT for the FFT kernels (fft_ops.cu): libcufft.so.12 (the nvidia-cufft wheel's,
// CUDA 13 line) is opened at the first transform, not at import. Plans are cached
// per device and geometry (making one costs far more than running it); a plan is
// used by one enqueuer at a time, which binds it to its stream and gives it a work
// area from the caching allocator for that call (plans own no work memory).
#pragma once
#include <cuda_runtime_api.h>
// After cudart's headers, so that cuFFT's quoted includes resolve to the toolkit's.
#include <cufft.h>

#include <cstddef>
#include <mutex>
#include <string>

namespace flambeau::cuda::kernels {

// The cuFFT entry points the kernels use, fetched with dlsym.
struct CufftApi {
  decltype(&cufftCreate) create = nullptr;
  decltype(&cufftDestroy) destroy = nullptr;
  decltype(&cufftSetAutoAllocation) set_auto_allocation = nullptr;
  decltype(&cufftMakePlanMany64) make_plan_many = nullptr;
  decltype(&cufftSetWorkArea) set_work_area = nullptr;
  decltype(&cufftSetStream) set_stream = nullptr;
  decltype(&cufftExecC2C) exec_c2c = nullptr;
  decltype(&cufftExecZ2Z) exec_z2z = nullptr;
  decltype(&cufftExecR2C) exec_r2c = nullptr;
  decltype(&cufftExecD2Z) exec_d2z = nullptr;
  decltype(&cufftExecC2R) exec_c2r = nullptr;
  decltype(&cufftExecZ2D) exec_z2d = nullptr;
};

// One batched transform of up to three dims, in cuFFT's advanced layout: element
// (b, x) of the batch at b * dist + (x's offset in embed) * stride.
struct FftGeometry {
  cufftType type = CUFFT_C2C;
  int rank = 1;
  long long n[3] = {1, 1, 1};
  long long inembed[3] = {1, 1, 1};
  long long onembed[3] = {1, 1, 1};
  long long istride = 1, idist = 1, ostride = 1, odist = 1, batch = 1;
};

// Where to look for libcufft.so.12 first (the wheel's path, from Python).
void set_cufft_library_path(const std::string& path);

// Opens the library and resolves its entry points (no device needed): "" when
// they are all there, else why not.
std::string load_cufft();

// A plan for one geometry, locked for the caller while it enqueues. A plan made
// past the cache's capacity is owned by the lease and destroyed with it, after
// its stream has finished the work queued with it.
class CufftLease {
 public:
  CufftLease() = default;
  CufftLease(const CufftLease&) = delete;
  CufftLease& operator=(const CufftLease&) = delete;
  ~CufftLease();

  const CufftApi* api = nullptr;
  cufftHandle plan = 0;
  size_t work_bytes = 0;
  std::unique_lock<std::mutex> lock;
  bool owned = false;
  cudaStream_t stream = nullptr;
};

// The plan of g on `device` (which must be current), bound to `stream`, or false
// with *error. The caller sets its work area (work_bytes) before executing it.
bool cufft_plan(int device, cudaStream_t stream, const FftGeometry& g, CufftLease* lease,
                std::string* error);

// "<call> failed: CUFFT_<name>" for a result.
std::string cufft_error(const char* call, cufftResult result);

}  // namespace flambeau::cuda::kernels
