// CUDA's lazy initialization, as PyTorch does it: importing the plugin touches
// no driver; counting devices asks cudart once (never raising: no driver or no
// device count as 0); the first use that needs a device initializes, and fails
// with PyTorch's messages ("Found no NVIDIA driver on your system...", "No CUDA
// GPUs are available"). After initialization a fork handler marks children,
// which then refuse to use CUDA ("Cannot re-initialize CUDA in forked
// subprocess...").
#pragma once
#include <string>

namespace flambeau::cuda::runtime {

// Why CUDA cannot be used, as the probe found it.
enum class Availability { kAvailable, kNoDriver, kDriverTooOld, kNoDevice, kFailed };

struct Probe {
  Availability availability = Availability::kFailed;
  int device_count = 0;
  int driver_version = 0;   // cudaDriverGetVersion: 0 without a driver
  int runtime_version = 0;  // cudaRuntimeGetVersion
  std::string reason;       // the error message for anything but kAvailable
};

// The probe, run once per process (later calls return the first result).
const Probe& probe();

// Initializes CUDA for this process if it is not yet. Returns "" on success,
// else the message of the RuntimeError to raise.
std::string ensure_initialized();
bool is_initialized();
// Whether this process is a fork of one that had initialized CUDA.
bool in_bad_fork();

// Marks the process initialized and installs the fork handler without touching
// a device: lets the tests of the fork guard run on machines without a GPU.
void mark_initialized_for_tests();

// The messages, exposed for the tests.
extern const char* const kBadForkMessage;
extern const char* const kNoDriverMessage;
extern const char* const kNoDeviceMessage;

}  // namespace flambeau::cuda::runtime
