#include "allocator/caching_allocator.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace flambeau::cuda {

namespace {

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

}  // namespace

CachingAllocator::CachingAllocator(const flb_cuda_device_api& api, int device_count,
                                   const AllocatorConfig& config)
    : config_(config), device_count_(device_count) {
  // Fields a smaller (older) table lacks stay zero, that is NULL.
  std::memcpy(&api_, &api, std::min(api.struct_size, sizeof api_));
  api_.struct_size = sizeof api_;
  if (api.struct_size < offsetof(flb_cuda_device_api, mem_get_info) + sizeof(void*) ||
      api_.malloc == nullptr || api_.free == nullptr || api_.mem_get_info == nullptr) {
    throw AllocatorError("CachingAllocator: the device API needs malloc, free and mem_get_info");
  }
  if (device_count < 0) throw std::invalid_argument("CachingAllocator: negative device count");
  devices_.reset(new std::atomic<DeviceAllocator*>[size_t(device_count)]);
  for (int i = 0; i < device_count; ++i) devices_[i].store(nullptr);
}

CachingAllocator::~CachingAllocator() {
  for (int i = 0; i < device_count_; ++i) delete devices_[i].load();
}

DeviceAllocator* CachingAllocator::existing(int index) const {
  if (index < 0 || index >= device_count_) {
    throw std::out_of_range("CUDA device index " + std::to_string(index) + " out of range (" +
                            std::to_string(device_count_) + " devices)");
  }
  return devices_[index].load(std::memory_order_acquire);
}

DeviceAllocator& CachingAllocator::device(int index) {
  if (DeviceAllocator* d = existing(index)) return *d;
  std::lock_guard<std::mutex> lock(init_mutex_);
  if (DeviceAllocator* d = devices_[index].load(std::memory_order_relaxed)) return *d;
  auto* d = new DeviceAllocator(&api_, index, config_);
  devices_[index].store(d, std::memory_order_release);
  return *d;
}

void* CachingAllocator::malloc(int device_index, size_t size, void* stream) {
  DeviceAllocator& d = device(device_index);
  if (size == 0) return nullptr;
  Block* b = d.malloc(size, stream);
  live_.insert(b->ptr, b);
  return b->ptr;
}

void CachingAllocator::free(void* ptr) {
  if (ptr == nullptr) return;
  Block* b = live_.take(ptr);
  if (b == nullptr) throw AllocatorError("free: invalid device pointer " + hex(ptr));
  device(b->pool->device).free(b);
}

void CachingAllocator::record_stream(void* ptr, void* stream) {
  if (ptr == nullptr) return;
  Block* b = live_.find(ptr);
  if (b == nullptr) throw AllocatorError("record_stream: invalid device pointer " + hex(ptr));
  device(b->pool->device).record_stream(b, stream);
}

void CachingAllocator::empty_cache() {
  for (int i = 0; i < device_count_; ++i) {
    if (DeviceAllocator* d = existing(i)) d->empty_cache();
  }
}

DeviceStats CachingAllocator::memory_stats(int index) {
  if (DeviceAllocator* d = existing(index)) return d->stats();
  DeviceStats none;  // a device not used yet is not touched
  none.max_split_size = config_.max_split_size == SIZE_MAX ? -1 : int64_t(config_.max_split_size);
  return none;
}

void CachingAllocator::reset_peak_memory_stats(int index) {
  if (DeviceAllocator* d = existing(index)) d->reset_peak_stats();
}

void CachingAllocator::reset_accumulated_memory_stats(int index) {
  if (DeviceAllocator* d = existing(index)) d->reset_accumulated_stats();
}

std::vector<SegmentInfo> CachingAllocator::snapshot() {
  std::vector<SegmentInfo> out;
  for (int i = 0; i < device_count_; ++i) {
    if (DeviceAllocator* d = existing(i)) {
      std::vector<SegmentInfo> part = d->snapshot();
      out.insert(out.end(), std::make_move_iterator(part.begin()),
                 std::make_move_iterator(part.end()));
    }
  }
  return out;
}

void CachingAllocator::set_memory_fraction(double fraction, int index) {
  device(index).set_memory_fraction(fraction);
}

bool CachingAllocator::expandable_segments(int index) {
  return device(index).expandable_segments();
}

}  // namespace flambeau::cuda
