#include "runtime/streams.h"

#include <array>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "runtime/cuda_error.h"

namespace flambeau::cuda::runtime {

namespace {

thread_local std::array<cudaStream_t, kMaxDevices> t_current{};

struct Pool {
  std::vector<cudaStream_t> streams;  // created on demand, up to kStreamsPerPool
  unsigned next = 0;
};

std::mutex g_pools_mutex;
std::map<std::pair<int, int>, Pool>& pools() {
  static auto* p = new std::map<std::pair<int, int>, Pool>();  // never destroyed
  return *p;
}

}  // namespace

cudaStream_t current_stream(int device) {
  return device >= 0 && device < kMaxDevices ? t_current[device] : nullptr;
}

void set_current_stream(int device, cudaStream_t stream) {
  if (device >= 0 && device < kMaxDevices) t_current[device] = stream;
}

cudaError_t priority_range(int* least, int* greatest) {
  return cudaDeviceGetStreamPriorityRange(least, greatest);
}

cudaError_t pool_stream(int device, int priority, cudaStream_t* stream) {
  DeviceGuard guard(device);
  if (!guard.ok()) return cudaErrorInvalidDevice;
  int least = 0, greatest = 0;
  if (cudaError_t err = priority_range(&least, &greatest); err != cudaSuccess) return err;
  if (priority > least) priority = least;
  if (priority < greatest) priority = greatest;
  std::lock_guard<std::mutex> lock(g_pools_mutex);
  Pool& pool = pools()[{device, priority}];
  unsigned slot = pool.next++ % kStreamsPerPool;
  if (slot >= pool.streams.size()) {
    cudaStream_t s = nullptr;
    cudaError_t err = cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority);
    if (err != cudaSuccess) {
      --pool.next;
      return err;
    }
    pool.streams.push_back(s);
  }
  *stream = pool.streams[slot];
  return cudaSuccess;
}

}  // namespace flambeau::cuda::runtime
