// What the allocator tells about itself: statistics, snapshots, and the report
// of an out-of-memory error.
#include <algorithm>

#include "allocator/device_allocator.h"
#include "allocator/errors.h"

namespace flambeau::cuda {

const char* block_state_name(BlockState s) {
  switch (s) {
    case BlockState::kActiveAllocated:
      return "active_allocated";
    case BlockState::kActivePendingFree:
      return "active_pending_free";
    case BlockState::kInactive:
      return "inactive";
  }
  return "inactive";
}

DeviceStats DeviceAllocator::stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void DeviceAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.reset_peak();
}

void DeviceAllocator::reset_accumulated_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.reset_accumulated();
}

std::vector<SegmentInfo> DeviceAllocator::snapshot() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<SegmentInfo> out;
  auto start_segment = [&](const Block* first) {
    SegmentInfo s;
    s.device = device_;
    s.address = uintptr_t(first->ptr);
    s.stream = uintptr_t(first->stream);
    s.is_large = !first->pool->is_small;
    s.is_expandable = first->expandable != nullptr;
    return s;
  };
  auto add_block = [](SegmentInfo& s, const Block* b) {
    BlockInfo info;
    info.address = uintptr_t(b->ptr);
    info.size = b->size;
    if (b->allocated) {
      info.state = BlockState::kActiveAllocated;
      info.requested_size = b->requested_size;
      s.allocated_size += b->size;
      s.requested_size += b->requested_size;
    } else if (b->event_count > 0) {
      info.state = BlockState::kActivePendingFree;
    }
    if (info.state != BlockState::kInactive) s.active_size += b->size;
    s.total_size += b->size;
    s.blocks.push_back(info);
  };
  for (const Block* head : segment_heads_) {
    SegmentInfo s = start_segment(head);
    for (const Block* b = head; b != nullptr; b = b->next) add_block(s, b);
    out.push_back(std::move(s));
  }
  // An expandable segment shows as one segment per run of mapped pages.
  for (const auto& seg : expandables_) {
    const Block* b = seg->head;
    while (b != nullptr) {
      if (!b->mapped) {
        b = b->next;
        continue;
      }
      SegmentInfo s = start_segment(b);
      for (; b != nullptr && b->mapped; b = b->next) add_block(s, b);
      out.push_back(std::move(s));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const SegmentInfo& a, const SegmentInfo& b) { return a.address < b.address; });
  return out;
}

void DeviceAllocator::device_memory(size_t* free_bytes, size_t* total_bytes) {
  check(api_->mem_get_info(api_->self, device_, free_bytes, total_bytes), "mem_get_info");
  device_total_ = *total_bytes;
}

[[noreturn]] void DeviceAllocator::throw_oom(const AllocParams& p) {
  ++stats_.num_ooms;
  OomReport r;
  r.device = device_;
  r.requested = p.requested;
  r.allocated = size_t(stats_.allocated_bytes.all().current);
  r.reserved = size_t(stats_.reserved_bytes.all().current);
  for (const Block* b : free_blocks()) {
    r.free_cached += b->size;
    r.largest_free = std::max(r.largest_free, b->size);
  }
  try {
    device_memory(&r.device_free, &r.device_total);
  } catch (const std::exception&) {
    r.device_free = r.device_total = 0;  // the report matters more than these two
  }
  r.allowed = allowed_;
  r.expandable = expandable_;
  throw OutOfMemoryError(r);
}

}  // namespace flambeau::cuda
