#include "backend/kernels/solver_handles.h"

namespace flambeau::cuda::kernels {

namespace {

#define FLB_FETCH_PAIR(NAME)                                \
  fetch_symbol(lib, "cusolverDnS" #NAME, &api->s_##NAME) && \
      fetch_symbol(lib, "cusolverDnD" #NAME, &api->d_##NAME)

bool fetch(void* lib, CusolverApi* api) {
  return fetch_symbol(lib, "cusolverDnCreate", &api->create) &&
         fetch_symbol(lib, "cusolverDnSetStream", &api->set_stream) &&
         fetch_symbol(lib, "cusolverDnCreateGesvdjInfo", &api->create_gesvdj_info) &&
         fetch_symbol(lib, "cusolverDnDestroyGesvdjInfo", &api->destroy_gesvdj_info) &&
         FLB_FETCH_PAIR(getrf_bufferSize) && FLB_FETCH_PAIR(getrf) && FLB_FETCH_PAIR(getrs) &&
         FLB_FETCH_PAIR(potrf_bufferSize) && FLB_FETCH_PAIR(potrf) &&
         FLB_FETCH_PAIR(geqrf_bufferSize) && FLB_FETCH_PAIR(geqrf) &&
         FLB_FETCH_PAIR(orgqr_bufferSize) && FLB_FETCH_PAIR(orgqr) &&
         FLB_FETCH_PAIR(syevd_bufferSize) && FLB_FETCH_PAIR(syevd) &&
         FLB_FETCH_PAIR(gesvdj_bufferSize) && FLB_FETCH_PAIR(gesvdj) &&
         FLB_FETCH_PAIR(sytrf_bufferSize) && FLB_FETCH_PAIR(sytrf);
}

#undef FLB_FETCH_PAIR

LazyLibrary<CusolverApi>& library() {
  static auto* lib = new LazyLibrary<CusolverApi>("libcusolver.so.12", "nvidia-cusolver", fetch);
  return *lib;
}

std::string create(const CusolverApi& api, int, cudaStream_t stream, cusolverDnHandle_t* handle) {
  cusolverStatus_t s = api.create(handle);
  if (s != CUSOLVER_STATUS_SUCCESS) return cusolver_error("cusolverDnCreate", s);
  if ((s = api.set_stream(*handle, stream)) != CUSOLVER_STATUS_SUCCESS)
    return cusolver_error("cusolverDnSetStream", s);
  return {};
}

StreamHandles<CusolverApi, cusolverDnHandle_t>& handles() {
  static auto* h = new StreamHandles<CusolverApi, cusolverDnHandle_t>(&library(), create);
  return *h;
}

}  // namespace

void set_cusolver_library_path(const std::string& path) { library().set_path(path); }

std::string load_cusolver() { return library().load(); }

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
  return handles().lease(device, stream, lease, error);
}

}  // namespace flambeau::cuda::kernels
