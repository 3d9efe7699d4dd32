#include "backend/kernels/cublas_handles.h"

#include <dlfcn.h>

#include <map>
#include <memory>
#include <utility>

#include "backend/state.h"

namespace flambeau::cuda::kernels {

namespace {

constexpr const char* kSoname = "libcublas.so.13";
// PyTorch's workspace size for Hopper and later: enough for cuBLAS's fastest kernels.
constexpr size_t kWorkspaceBytes = size_t(32) << 20;

std::mutex g_mutex;  // guards everything below
std::string g_library_path;
bool g_load_tried = false;
std::string g_load_error;
CublasApi g_api;

struct Handle {
  cublasHandle_t handle = nullptr;
  std::mutex mutex;  // one enqueuer at a time: a handle is not thread-safe
};
// Never destroyed: handles and workspaces live until the process exits, as the
// streams they are bound to.
std::map<std::pair<int, cudaStream_t>, std::unique_ptr<Handle>>* g_handles =
    new std::map<std::pair<int, cudaStream_t>, std::unique_ptr<Handle>>();

template <class F>
bool fetch(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

// Opens the library once; the API or nullptr with g_load_error set.
const CublasApi* load_locked() {
  if (g_load_tried) return g_load_error.empty() ? &g_api : nullptr;
  g_load_tried = true;
  void* lib = nullptr;
  std::string tried;
  if (!g_library_path.empty()) {
    lib = dlopen(g_library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) tried = std::string(dlerror()) + "; ";
  }
  if (lib == nullptr) lib = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    g_load_error = "cuBLAS (" + std::string(kSoname) + ") could not be loaded: " + tried +
                   dlerror() + ". Install it with: pip install nvidia-cublas";
    return nullptr;
  }
  CublasApi api;
  bool ok = fetch(lib, "cublasCreate_v2", &api.create) &&
            fetch(lib, "cublasSetStream_v2", &api.set_stream) &&
            fetch(lib, "cublasSetWorkspace_v2", &api.set_workspace) &&
            fetch(lib, "cublasSetMathMode", &api.set_math_mode) &&
            fetch(lib, "cublasGemmStridedBatchedEx_64", &api.gemm_strided_batched) &&
            fetch(lib, "cublasGetStatusString", &api.status_string);
  if (!ok) {
    g_load_error = std::string(kSoname) + " lacks a function flambeau needs: " + dlerror();
    return nullptr;
  }
  g_api = api;
  return &g_api;
}

}  // namespace

void set_cublas_library_path(const std::string& path) {
  std::lock_guard<std::mutex> guard(g_mutex);
  g_library_path = path;
}

std::string load_cublas() {
  std::lock_guard<std::mutex> guard(g_mutex);
  return load_locked() != nullptr ? std::string() : g_load_error;
}

std::string cublas_error(const CublasApi& api, const char* call, cublasStatus_t status) {
  return std::string(call) + " failed: " + api.status_string(status);
}

bool cublas_handle(int device, cudaStream_t stream, CublasLease* lease, std::string* error) {
  std::unique_lock<std::mutex> guard(g_mutex);
  const CublasApi* api = load_locked();
  if (api == nullptr) {
    *error = g_load_error;
    return false;
  }
  auto& slot = (*g_handles)[{device, stream}];
  if (!slot) {
    auto h = std::make_unique<Handle>();
    cublasStatus_t s = api->create(&h->handle);
    if (s != CUBLAS_STATUS_SUCCESS) {
      *error = cublas_error(*api, "cublasCreate", s);
      return false;
    }
    void* workspace = nullptr;
    try {
      workspace = backend::allocator().malloc(device, kWorkspaceBytes, stream);
    } catch (const std::exception& e) {
      *error = std::string("allocating cuBLAS's workspace: ") + e.what();
      return false;
    }
    if ((s = api->set_stream(h->handle, stream)) != CUBLAS_STATUS_SUCCESS ||
        (s = api->set_workspace(h->handle, workspace, kWorkspaceBytes)) != CUBLAS_STATUS_SUCCESS ||
        // Full float32 products (no TF32), as torch.backends.cuda.matmul.allow_tf32's default.
        (s = api->set_math_mode(h->handle, CUBLAS_DEFAULT_MATH)) != CUBLAS_STATUS_SUCCESS) {
      *error = cublas_error(*api, "configuring the cuBLAS handle", s);
      return false;
    }
    slot = std::move(h);
  }
  Handle& h = *slot;
  guard.unlock();
  lease->api = api;
  lease->handle = h.handle;
  lease->lock = std::unique_lock<std::mutex>(h.mutex);
  return true;
}

}  // namespace flambeau::cuda::kernels
