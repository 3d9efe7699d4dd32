// Streams as PyTorch hands them out: each thread has a current stream per
// device (the default, legacy stream until set), and new streams come from a
// per-device, per-priority pool of 32 created on first use and never
// destroyed, so a Stream object may outlive anything without dangling.
#pragma once
#include <cuda_runtime_api.h>

namespace flambeau::cuda::runtime {

constexpr int kMaxDevices = 64;
constexpr int kStreamsPerPool = 32;

// The calling thread's current stream on `device` (nullptr: the default stream).
cudaStream_t current_stream(int device);
void set_current_stream(int device, cudaStream_t stream);

// The next stream of the pool for (device, priority), priority clamped to the
// device's range (lower is more urgent, as cudaDeviceGetStreamPriorityRange).
// Returns cudart's error; *stream is set on success.
cudaError_t pool_stream(int device, int priority, cudaStream_t* stream);

// cudaDeviceGetStreamPriorityRange of the current device: (least, greatest).
cudaError_t priority_range(int* least, int* greatest);

}  // namespace flambeau::cuda::runtime
