#include "backend/kernels/cublas_handles.h"

#include <exception>

#include "backend/state.h"

namespace flambeau::cuda::kernels {

namespace {

// PyTorch's workspace size for Hopper and later: enough for cuBLAS's fastest kernels.
constexpr size_t kWorkspaceBytes = size_t(32) << 20;

bool fetch(void* lib, CublasApi* api) {
  return fetch_symbol(lib, "cublasCreate_v2", &api->create) &&
         fetch_symbol(lib, "cublasSetStream_v2", &api->set_stream) &&
         fetch_symbol(lib, "cublasSetWorkspace_v2", &api->set_workspace) &&
         fetch_symbol(lib, "cublasSetMathMode", &api->set_math_mode) &&
         fetch_symbol(lib, "cublasGemmStridedBatchedEx_64", &api->gemm_strided_batched) &&
         fetch_symbol(lib, "cublasGetStatusString", &api->status_string);
}

LazyLibrary<CublasApi>& library() {
  static auto* lib = new LazyLibrary<CublasApi>("libcublas.so.13", "nvidia-cublas", fetch);
  return *lib;
}

// A handle on (device, stream) with its own workspace, so that results do not depend
// on which streams ran before and no workspace is shared between streams.
std::string create(const CublasApi& api, int device, cudaStream_t stream, cublasHandle_t* handle) {
  cublasStatus_t s = api.create(handle);
  if (s != CUBLAS_STATUS_SUCCESS) return cublas_error(api, "cublasCreate", s);
  void* workspace = nullptr;
  try {
    workspace = backend::allocator().malloc(device, kWorkspaceBytes, stream);
  } catch (const std::exception& e) {
    return std::string("allocating cuBLAS's workspace: ") + e.what();
  }
  if ((s = api.set_stream(*handle, stream)) != CUBLAS_STATUS_SUCCESS ||
      (s = api.set_workspace(*handle, workspace, kWorkspaceBytes)) != CUBLAS_STATUS_SUCCESS ||
      // Full float32 products (no TF32), as torch.backends.cuda.matmul.allow_tf32's default.
      (s = api.set_math_mode(*handle, CUBLAS_DEFAULT_MATH)) != CUBLAS_STATUS_SUCCESS)
    return cublas_error(api, "configuring the cuBLAS handle", s);
  return {};
}

StreamHandles<CublasApi, cublasHandle_t>& handles() {
  static auto* h = new StreamHandles<CublasApi, cublasHandle_t>(&library(), create);
  return *h;
}

}  // namespace

void set_cublas_library_path(const std::string& path) { library().set_path(path); }

std::string load_cublas() { return library().load(); }

std::string cublas_error(const CublasApi& api, const char* call, cublasStatus_t status) {
  return std::string(call) + " failed: " + api.status_string(status);
}

bool cublas_handle(int device, cudaStream_t stream, CublasLease* lease, std::string* error) {
  return handles().lease(device, stream, lease, error);
}

}  // namespace flambeau::cuda::kernels
