#include "runtime/lazy_init.h"

#include <cuda_runtime_api.h>
#include <pthread.h>

#include <atomic>
#include <mutex>

namespace flambeau::cuda::runtime {

const char* const kBadForkMessage =
    "Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must "
    "use the 'spawn' start method";
const char* const kNoDriverMessage =
    "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
    "installed a driver from http://www.nvidia.com/Download/index.aspx";
const char* const kNoDeviceMessage = "No CUDA GPUs are available";

namespace {

std::atomic<bool> g_initialized{false};
std::atomic<bool> g_bad_fork{false};
std::mutex g_init_mutex;

void mark_child_bad() { g_bad_fork.store(true); }

// A child forked after initialization must not use CUDA: the driver's state
// does not survive fork.
void install_fork_handler() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, mark_child_bad); });
}

std::string too_old(int driver_version) {
  return "The NVIDIA driver on your system is too old (found version " +
         std::to_string(driver_version) +
         "). Please update your GPU driver by downloading and installing a new version from "
         "the URL: http://www.nvidia.com/Download/index.aspx Alternatively, install a "
         "flambeau-tensor-cuda built for the CUDA version your driver supports.";
}

Probe run_probe() {
  Probe p;
  cudaRuntimeGetVersion(&p.runtime_version);
  cudaError_t version_err = cudaDriverGetVersion(&p.driver_version);
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();
  if (err == cudaSuccess && count > 0) {
    p.availability = Availability::kAvailable;
    p.device_count = count;
  } else if (err == cudaSuccess || err == cudaErrorNoDevice) {
    p.availability = Availability::kNoDevice;
    p.reason = kNoDeviceMessage;
  } else if (version_err != cudaSuccess || p.driver_version == 0) {
    p.availability = Availability::kNoDriver;
    p.reason = kNoDriverMessage;
  } else if (err == cudaErrorInsufficientDriver) {
    p.availability = Availability::kDriverTooOld;
    p.reason = too_old(p.driver_version);
  } else {
    p.availability = Availability::kFailed;
    p.reason = std::string("CUDA driver initialization failed, you might not have a CUDA gpu: ") +
               cudaGetErrorString(err);
  }
  return p;
}

}  // namespace

const Probe& probe() {
  static const Probe p = run_probe();
  return p;
}

std::string ensure_initialized() {
  if (g_bad_fork.load()) return kBadForkMessage;
  if (g_initialized.load(std::memory_order_acquire)) return "";
  std::lock_guard<std::mutex> lock(g_init_mutex);
  if (g_initialized.load()) return "";
  const Probe& p = probe();
  if (p.availability != Availability::kAvailable) return p.reason;
  // Creates the primary context of the current device, as PyTorch's lazy init
  // does through its first CUDA call.
  cudaError_t err = cudaFree(nullptr);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("CUDA initialization failed: ") + cudaGetErrorString(err);
  }
  install_fork_handler();
  g_initialized.store(true, std::memory_order_release);
  return "";
}

bool is_initialized() { return g_initialized.load() && !g_bad_fork.load(); }
bool in_bad_fork() { return g_bad_fork.load(); }

void mark_initialized_for_tests() {
  std::lock_guard<std::mutex> lock(g_init_mutex);
  install_fork_handler();
  g_initialized.store(true);
}

}  // namespace flambeau::cuda::runtime
