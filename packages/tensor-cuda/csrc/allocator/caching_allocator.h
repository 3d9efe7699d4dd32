// flambeau's CUDA caching allocator: one DeviceAllocator per device, created on
// first use, behind a pointer-keyed front end. The device functions come from
// a flb_cuda_device_api table (cudart in production, fakecuda in tests).
//
//   CachingAllocator alloc(api, device_count);       // settings from FLAMBEAU_CUDA_ALLOC_CONF
//   void* p = alloc.malloc(/*device=*/0, 1 << 20, stream);
//   alloc.record_stream(p, other_stream);            // used on another stream too
//   alloc.free(p);                                   // reused once other_stream is past it
#pragma once
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "allocator/alloc_config.h"
#include "allocator/device_allocator.h"
#include "allocator/device_api.h"
#include "allocator/errors.h"
#include "allocator/pointer_map.h"
#include "allocator/snapshot.h"
#include "allocator/stats.h"

namespace flambeau::cuda {

class CachingAllocator {
 public:
  // Copies the table (fields past api.struct_size read as NULL); api.self must
  // outlive the allocator. Throws AllocatorError when malloc, free or
  // mem_get_info is missing.
  CachingAllocator(const flb_cuda_device_api& api, int device_count,
                   const AllocatorConfig& config = AllocatorConfig::from_env());
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // nullptr for size 0. Throws OutOfMemoryError, AllocatorError, and
  // std::out_of_range for a bad device index.
  void* malloc(int device, size_t size, void* stream);
  // No-op for nullptr; AllocatorError for a pointer malloc did not return.
  void free(void* ptr);
  void record_stream(void* ptr, void* stream);
  // Every device's cache (torch.cuda.empty_cache).
  void empty_cache();

  DeviceStats memory_stats(int device);
  void reset_peak_memory_stats(int device);
  void reset_accumulated_memory_stats(int device);
  // Segments of every device in use, by device then address.
  std::vector<SegmentInfo> snapshot();
  void set_memory_fraction(double fraction, int device);
  // Whether `device` maps pages on demand (configured, and the API has VM).
  bool expandable_segments(int device);

  const AllocatorConfig& config() const { return config_; }
  int device_count() const { return device_count_; }

 private:
  DeviceAllocator& device(int index);
  DeviceAllocator* existing(int index) const;

  flb_cuda_device_api api_{};
  const AllocatorConfig config_;
  const int device_count_;
  std::unique_ptr<std::atomic<DeviceAllocator*>[]> devices_;
  std::mutex init_mutex_;
  LiveBlocks live_;
};

}  // namespace flambeau::cuda
