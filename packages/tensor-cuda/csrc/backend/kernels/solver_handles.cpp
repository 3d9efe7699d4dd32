#include "backend/kernels/solver_handles.h"

#include <map>
#include <memory>
#include <utility>

#include "backend/kernels/nvidia_library.h"

namespace flambeau::cuda::kernels {

namespace {

constexpr const char* kSoname = "libcusolver.so.12";

std::mutex g_mutex;  // guards everything below
std::string g_library_path;
bool g_load_tried = false;
std::string g_load_error;
CusolverApi g_api;

struct Handle {
  cusolverDnHandle_t handle = nullptr;
  std::mutex mutex;  // one enqueuer at a time: a handle is not thread-safe
};
// Never destroyed: handles live until the process exits, as the streams they serve.
std::map<std::pair<int, cudaStream_t>, std::unique_ptr<Handle>>* g_handles =
    new std::map<std::pair<int, cudaStream_t>, std::unique_ptr<Handle>>();

#define FLB_FETCH_PAIR(NAME)                               \
  fetch_symbol(lib, "cusolverDnS" #NAME, &api.s_##NAME) && \
      fetch_symbol(lib, "cusolverDnD" #NAME, &api.d_##NAME)

// Opens the library once; the API or nullptr with g_load_error set.
const CusolverApi* load_locked() {
  if (g_load_tried) return g_load_error.empty() ? &g_api : nullptr;
  g_load_tried = true;
  void* lib = open_nvidia_library(g_library_path, kSoname, "nvidia-cusolver", &g_load_error);
  if (lib == nullptr) return nullptr;
  CusolverApi api;
  bool ok = fetch_symbol(lib, "cusolverDnCreate", &api.create) &&
            fetch_symbol(lib, "cusolverDnSetStream", &api.set_stream) &&
            fetch_symbol(lib, "cusolverDnCreateGesvdjInfo", &api.create_gesvdj_info) &&
            fetch_symbol(lib, "cusolverDnDestroyGesvdjInfo", &api.destroy_gesvdj_info) &&
            FLB_FETCH_PAIR(getrf_bufferSize) && FLB_FETCH_PAIR(getrf) && FLB_FETCH_PAIR(getrs) &&
            FLB_FETCH_PAIR(potrf_bufferSize) && FLB_FETCH_PAIR(potrf) &&
            FLB_FETCH_PAIR(geqrf_bufferSize) && FLB_FETCH_PAIR(geqrf) &&
            FLB_FETCH_PAIR(orgqr_bufferSize) && FLB_FETCH_PAIR(orgqr) &&
            FLB_FETCH_PAIR(syevd_bufferSize) && FLB_FETCH_PAIR(syevd) &&
            FLB_FETCH_PAIR(gesvdj_bufferSize) && FLB_FETCH_PAIR(gesvdj) &&
            FLB_FETCH_PAIR(sytrf_bufferSize) && FLB_FETCH_PAIR(sytrf);
  if (!ok) {
    g_load_error = std::string(kSoname) + " lacks a function flambeau needs: " + dlerror();
    return nullptr;
  }
  g_api = api;
  return &g_api;
}

#undef FLB_FETCH_PAIR

}  // namespace

void set_cusolver_library_path(const std::string& path) {
  std::lock_guard<std::mutex> guard(g_mutex);
  g_library_path = path;
}

std::string load_cusolver() {
  std::lock_guard<std::mutex> guard(g_mutex);
  return load_locked() != nullptr ? std::string() : g_load_error;
}

std::string cusolver_error(const char* call, cusolverStatus_t status) {
  const char* name = "an unknown status";
  switch (status) {
    case CUSOLVER_STATUS_NOT_INITIALIZED:
      name = "CUSOLVER_STATUS_NOT_INITIALIZED";
      break;
    case CUSOLVER_STATUS_ALLOC_FAILED:
      name = "CUSOLVER_STATUS_ALLOC_FAILED";
      break;
    case CUSOLVER_STATUS_INVALID_VALUE:
      name = "CUSOLVER_STATUS_INVALID_VALUE";
      break;
    case CUSOLVER_STATUS_ARCH_MISMATCH:
      name = "CUSOLVER_STATUS_ARCH_MISMATCH";
      break;
    case CUSOLVER_STATUS_EXECUTION_FAILED:
      name = "CUSOLVER_STATUS_EXECUTION_FAILED";
      break;
    case CUSOLVER_STATUS_INTERNAL_ERROR:
      name = "CUSOLVER_STATUS_INTERNAL_ERROR";
      break;
    case CUSOLVER_STATUS_NOT_SUPPORTED:
      name = "CUSOLVER_STATUS_NOT_SUPPORTED";
      break;
    case CUSOLVER_STATUS_INVALID_WORKSPACE:
      name = "CUSOLVER_STATUS_INVALID_WORKSPACE";
      break;
    default:
      break;
  }
  return std::string(call) + " failed: " + name + " (" + std::to_string(static_cast<int>(status)) +
         ")";
}

bool cusolver_handle(int device, cudaStream_t stream, CusolverLease* lease, std::string* error) {
  std::unique_lock<std::mutex> guard(g_mutex);
  const CusolverApi* api = load_locked();
  if (api == nullptr) {
    *error = g_load_error;
    return false;
  }
  auto& slot = (*g_handles)[{device, stream}];
  if (!slot) {
    auto h = std::make_unique<Handle>();
    cusolverStatus_t s = api->create(&h->handle);
    if (s != CUSOLVER_STATUS_SUCCESS) {
      *error = cusolver_error("cusolverDnCreate", s);
      return false;
    }
    if ((s = api->set_stream(h->handle, stream)) != CUSOLVER_STATUS_SUCCESS) {
      *error = cusolver_error("cusolverDnSetStream", s);
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
