#include "backend/kernels/cufft_plans.h"

#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include "backend/kernels/nvidia_library.h"

namespace flambeau::cuda::kernels {

namespace {

// Plans kept per process (PyTorch's default cuFFT plan cache holds 4096 per device).
constexpr size_t kMaxCachedPlans = 1024;

bool fetch(void* lib, CufftApi* api) {
  return fetch_symbol(lib, "cufftCreate", &api->create) &&
         fetch_symbol(lib, "cufftDestroy", &api->destroy) &&
         fetch_symbol(lib, "cufftSetAutoAllocation", &api->set_auto_allocation) &&
         fetch_symbol(lib, "cufftMakePlanMany64", &api->make_plan_many) &&
         fetch_symbol(lib, "cufftSetWorkArea", &api->set_work_area) &&
         fetch_symbol(lib, "cufftSetStream", &api->set_stream) &&
         fetch_symbol(lib, "cufftExecC2C", &api->exec_c2c) &&
         fetch_symbol(lib, "cufftExecZ2Z", &api->exec_z2z) &&
         fetch_symbol(lib, "cufftExecR2C", &api->exec_r2c) &&
         fetch_symbol(lib, "cufftExecD2Z", &api->exec_d2z) &&
         fetch_symbol(lib, "cufftExecC2R", &api->exec_c2r) &&
         fetch_symbol(lib, "cufftExecZ2D", &api->exec_z2d);
}

// Its mutex also guards the plan cache below.
LazyLibrary<CufftApi>& library() {
  static auto* lib = new LazyLibrary<CufftApi>("libcufft.so.12", "nvidia-cufft", fetch);
  return *lib;
}

using Key = std::tuple<int, int, int, long long, long long, long long, long long, long long,
                       long long, long long, long long, long long, long long, long long, long long,
                       long long, long long>;

Key key_of(int device, const FftGeometry& g) {
  return Key{device,       static_cast<int>(g.type),
             g.rank,       g.n[0],
             g.n[1],       g.n[2],
             g.inembed[0], g.inembed[1],
             g.inembed[2], g.onembed[0],
             g.onembed[1], g.onembed[2],
             g.istride,    g.idist,
             g.ostride,    g.odist,
             g.batch};
}

struct Plan {
  cufftHandle plan = 0;
  size_t work_bytes = 0;
  std::mutex mutex;  // one enqueuer at a time: the stream and work area are per plan
};
// Never destroyed, as the handles of cuBLAS and cuSOLVER.
std::map<Key, std::unique_ptr<Plan>>* g_plans = new std::map<Key, std::unique_ptr<Plan>>();

// A new plan for g (no work area of its own), or false with *error.
bool make_plan(const CufftApi& api, const FftGeometry& g, cufftHandle* plan, size_t* work_bytes,
               std::string* error) {
  cufftResult r = api.create(plan);
  if (r != CUFFT_SUCCESS) {
    *error = cufft_error("cufftCreate", r);
    return false;
  }
  FftGeometry copy = g;  // cuFFT takes non-const arrays
  if ((r = api.set_auto_allocation(*plan, 0)) != CUFFT_SUCCESS ||
      (r = api.make_plan_many(*plan, copy.rank, copy.n, copy.inembed, copy.istride, copy.idist,
                              copy.onembed, copy.ostride, copy.odist, copy.type, copy.batch,
                              work_bytes)) != CUFFT_SUCCESS) {
    api.destroy(*plan);
    *error = cufft_error("cufftMakePlanMany64", r);
    return false;
  }
  return true;
}

}  // namespace

CufftLease::~CufftLease() {
  if (!owned) return;
  // The plan's own device memory may still be read by work queued with it.
  cudaStreamSynchronize(stream);
  api->destroy(plan);
}

void set_cufft_library_path(const std::string& path) { library().set_path(path); }

std::string load_cufft() { return library().load(); }

std::string cufft_error(const char* call, cufftResult result) {
  const char* name = "an unknown result";
  switch (result) {
    case CUFFT_INVALID_PLAN:
      name = "CUFFT_INVALID_PLAN";
      break;
    case CUFFT_ALLOC_FAILED:
      name = "CUFFT_ALLOC_FAILED";
      break;
    case CUFFT_INVALID_VALUE:
      name = "CUFFT_INVALID_VALUE";
      break;
    case CUFFT_INTERNAL_ERROR:
      name = "CUFFT_INTERNAL_ERROR";
      break;
    case CUFFT_EXEC_FAILED:
      name = "CUFFT_EXEC_FAILED";
      break;
    case CUFFT_SETUP_FAILED:
      name = "CUFFT_SETUP_FAILED";
      break;
    case CUFFT_INVALID_SIZE:
      name = "CUFFT_INVALID_SIZE";
      break;
    case CUFFT_NOT_SUPPORTED:
      name = "CUFFT_NOT_SUPPORTED";
      break;
    default:
      break;
  }
  return std::string(call) + " failed: " + name + " (" + std::to_string(static_cast<int>(result)) +
         ")";
}

bool cufft_plan(int device, cudaStream_t stream, const FftGeometry& g, CufftLease* lease,
                std::string* error) {
  std::unique_lock<std::mutex> guard(library().mutex());
  const CufftApi* api = library().load_locked();
  if (api == nullptr) {
    *error = library().error();
    return false;
  }
  lease->api = api;
  lease->stream = stream;
  auto bind = [&] {
    const cufftResult r = api->set_stream(lease->plan, stream);
    if (r != CUFFT_SUCCESS) *error = cufft_error("cufftSetStream", r);
    return r == CUFFT_SUCCESS;
  };
  const Key key = key_of(device, g);
  auto found = g_plans->find(key);
  if (found == g_plans->end() && g_plans->size() >= kMaxCachedPlans) {
    guard.unlock();  // a plan of the lease's own
    if (!make_plan(*api, g, &lease->plan, &lease->work_bytes, error)) return false;
    lease->owned = true;
    return bind();
  }
  if (found == g_plans->end()) {
    auto p = std::make_unique<Plan>();
    if (!make_plan(*api, g, &p->plan, &p->work_bytes, error)) return false;
    found = g_plans->emplace(key, std::move(p)).first;
  }
  Plan& p = *found->second;
  guard.unlock();
  lease->plan = p.plan;
  lease->work_bytes = p.work_bytes;
  lease->lock = std::unique_lock<std::mutex>(p.mutex);
  return bind();
}

}  // namespace flambeau::cuda::kernels
