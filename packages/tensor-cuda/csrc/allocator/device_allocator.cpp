#include "allocator/device_allocator.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "allocator/errors.h"

namespace flambeau::cuda {

DeviceAllocator::DeviceAllocator(const flb_cuda_device_api* api, int device,
                                 const AllocatorConfig& config)
    : api_(api), device_(device), config_(config), small_(device, true), large_(device, false) {
  bool has_vm = api->vm_granularity && api->reserve_va && api->release_va && api->map && api->unmap;
  if (has_vm && config.expandable_segments.value_or(true)) {
    size_t granularity = 0;
    check(api->vm_granularity(api->self, device, &granularity), "vm_granularity");
    expandable_ = granularity != 0;
    page_ = granularity;
  }
  stats_.max_split_size = config.max_split_size == SIZE_MAX ? -1 : int64_t(config.max_split_size);
}

DeviceAllocator::~DeviceAllocator() {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    release_cached();
  } catch (...) {
    // A failing device at exit: what is left stays with the device.
  }
  for (void* event : idle_events_) api_->event_destroy(api_->self, device_, event);
  // Blocks still allocated are leaked with their memory, as the owner never
  // returned them; their bookkeeping goes.
  auto delete_chain = [](Block* b) {
    while (b != nullptr) {
      Block* next = b->next;
      delete b;
      b = next;
    }
  };
  for (Block* head : segment_heads_) delete_chain(head);
  for (auto& seg : expandables_) delete_chain(seg->head);
  for (Block* b : idle_blocks_) delete b;
}

// ---------------------------------------------------------------------------
// Sizes

size_t DeviceAllocator::round_size(size_t size) const {
  if (size < kMinBlockSize) return kMinBlockSize;
  size_t divisions = config_.divisions_for(size);
  if (divisions > 1 && size > kMinBlockSize * divisions) {
    return round_to_power2_division(size, divisions);
  }
  return round_up(size, kMinBlockSize);
}

size_t DeviceAllocator::segment_size(size_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return round_up(size, kRoundLarge);
}

bool DeviceAllocator::reserve_allowed(size_t bytes) const {
  size_t reserved = size_t(stats_.reserved_bytes.all().current);
  return allowed_ == SIZE_MAX || (bytes <= allowed_ && reserved <= allowed_ - bytes);
}

// ---------------------------------------------------------------------------
// Allocation

Block* DeviceAllocator::malloc(size_t requested, void* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++clock_;
  if (pending_count_ != 0) process_events();

  AllocParams p;
  p.requested = requested;
  p.stream = stream;
  // Sizes this large cannot exist; rounding them would overflow.
  p.size = requested > (SIZE_MAX >> 2) ? (SIZE_MAX >> 2) : round_size(requested);
  p.pool = p.size <= kSmallSize ? &small_ : &large_;
  p.alloc_size = segment_size(p.size);

  if (!get_free_block(p)) {
    if (config_.garbage_collection_threshold > 0.0) garbage_collect(p);
    // New memory; else give back one cached segment that makes room; else give
    // back everything cached (after the pending frees) and try a last time.
    bool found = alloc_block(p, false) || (release_one_cached(p) && alloc_block(p, false));
    if (!found) {
      release_cached();
      found = alloc_block(p, true);
    }
    if (!found) throw_oom(p);
  }

  Block* b = p.block;
  if (should_split(b, p.size)) split(b, p.size);
  b->allocated = true;
  b->requested_size = requested;
  const bool small = p.pool->is_small;
  stats_.allocation.add(small, 1);
  stats_.allocated_bytes.add(small, int64_t(b->size));
  stats_.requested_bytes.add(small, int64_t(requested));
  stats_.active.add(small, 1);
  stats_.active_bytes.add(small, int64_t(b->size));
  if (b->expandable == nullptr && is_oversize(b->size)) stats_.oversize_allocations.add(1);
  return b;
}

bool DeviceAllocator::get_free_block(AllocParams& p) {
  BlockSet& blocks = p.pool->blocks;
  auto it = blocks.lower_bound(p.stream, p.size);
  if (it == blocks.end() || (*it)->stream != p.stream) return false;
  Block* b = *it;
  if (b->expandable == nullptr) {
    // Oversize blocks serve only oversize requests, and only those that
    // waste at most max_non_split_rounding_size of them.
    if (!is_oversize(p.size) && is_oversize(b->size)) return false;
    if (is_oversize(p.size) && b->size - p.size >= config_.max_non_split_rounding_size)
      return false;
  }
  blocks.erase(it);
  add_inactive_split(b, -1);
  p.block = b;
  return true;
}

bool DeviceAllocator::alloc_block(AllocParams& p, bool is_retry) {
  if (is_retry) ++stats_.num_alloc_retries;
  if (expandable_) return grow_expandable(p) && get_free_block(p);
  return alloc_segment(p);
}

bool DeviceAllocator::alloc_segment(AllocParams& p) {
  const size_t size = p.alloc_size;
  if (!reserve_allowed(size)) return false;
  void* ptr = nullptr;
  flb_cuda_status status = api_->malloc(api_->self, device_, size, &ptr);
  if (status == FLB_CUDA_OUT_OF_MEMORY) return false;
  check(status, "malloc");
  ++stats_.num_device_alloc;

  Block* b = new_block();
  b->ptr = static_cast<char*>(ptr);
  b->size = size;
  b->stream = p.stream;
  b->pool = p.pool;
  b->free_stamp = clock_;
  segment_heads_.insert(b);
  const bool small = p.pool->is_small;
  stats_.segment.add(small, 1);
  stats_.reserved_bytes.add(small, int64_t(size));
  if (is_oversize(size)) stats_.oversize_segments.add(1);
  p.block = b;
  return true;
}

bool DeviceAllocator::should_split(const Block* b, size_t size) const {
  const size_t remaining = b->size - size;
  if (b->pool->is_small) return remaining >= kMinBlockSize;
  if (b->expandable == nullptr && is_oversize(size)) return false;
  // A large-pool remainder of 1 MiB or less stays with the allocation: it
  // could only serve small requests, which have their own pool.
  return remaining > kSmallSize;
}

void DeviceAllocator::split(Block* b, size_t size) {
  Block* rest = new_block();
  rest->ptr = b->ptr + size;
  rest->size = b->size - size;
  rest->stream = b->stream;
  rest->pool = b->pool;
  rest->expandable = b->expandable;
  rest->free_stamp = b->free_stamp;
  link_after(b, rest);
  b->size = size;
  add_inactive_split(rest, +1);
  b->pool->blocks.insert(rest);
}

// ---------------------------------------------------------------------------
// Freeing

void DeviceAllocator::free(Block* b) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!b->allocated) throw AllocatorError("free: the block is not allocated (double free?)");
  b->allocated = false;
  const bool small = b->pool->is_small;
  stats_.allocation.add(small, -1);
  stats_.allocated_bytes.add(small, -int64_t(b->size));
  stats_.requested_bytes.add(small, -int64_t(b->requested_size));
  if (b->expandable == nullptr && is_oversize(b->size)) stats_.oversize_allocations.add(-1);
  if (b->stream_uses.empty()) {
    free_block(b);
  } else {
    insert_events(b);  // free_block once the other streams are done with it
  }
}

void DeviceAllocator::free_block(Block* b) {
  const bool small = b->pool->is_small;
  stats_.active.add(small, -1);
  stats_.active_bytes.add(small, -int64_t(b->size));
  b->requested_size = 0;
  Block* merged = merge_free_neighbours(b);
  merged->free_stamp = clock_;
  add_inactive_split(merged, +1);
  merged->pool->blocks.insert(merged);
}

Block* DeviceAllocator::merge_free_neighbours(Block* b) {
  BlockSet& blocks = b->pool->blocks;
  Block* prev = b->prev;
  if (prev != nullptr && prev->is_free()) {
    add_inactive_split(prev, -1);
    blocks.erase(prev);
    merge(prev, b);
    b = prev;
  }
  Block* next = b->next;
  if (next != nullptr && next->is_free()) {
    add_inactive_split(next, -1);
    blocks.erase(next);
    merge(b, next);
  }
  return b;
}

void DeviceAllocator::record_stream(Block* b, void* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!b->allocated) throw AllocatorError("record_stream: the block is not allocated");
  if (stream == b->stream) return;  // ordered on its own stream already
  if (api_->event_create == nullptr || api_->event_record == nullptr ||
      api_->event_query == nullptr || api_->event_synchronize == nullptr) {
    throw AllocatorError("record_stream: the device API has no events");
  }
  for (void* s : b->stream_uses) {
    if (s == stream) return;
  }
  b->stream_uses.push_back(stream);
}

// ---------------------------------------------------------------------------
// Events of cross-stream frees

void DeviceAllocator::insert_events(Block* b) {
  for (void* stream : b->stream_uses) {
    void* event = get_event();
    flb_cuda_status status = api_->event_record(api_->self, event, stream);
    if (status != FLB_CUDA_OK) {
      put_event(event);
      fail("event_record");
    }
    ++b->event_count;
    pending_[stream].push_back(PendingFree{event, b});
    ++pending_count_;
  }
  b->stream_uses.clear();
}

void DeviceAllocator::process_events() {
  for (auto& entry : pending_) {
    std::deque<PendingFree>& queue = entry.second;
    // Events of one stream complete in the order they were recorded.
    while (!queue.empty()) {
      PendingFree f = queue.front();
      flb_cuda_status status = api_->event_query(api_->self, f.event);
      if (status == FLB_CUDA_NOT_READY) break;
      check(status, "event_query");
      queue.pop_front();
      --pending_count_;
      put_event(f.event);
      if (--f.block->event_count == 0) free_block(f.block);
    }
  }
}

void DeviceAllocator::synchronize_and_free_events() {
  ++stats_.num_sync_all_streams;
  for (auto& entry : pending_) {
    std::deque<PendingFree>& queue = entry.second;
    while (!queue.empty()) {
      PendingFree f = queue.front();
      check(api_->event_synchronize(api_->self, f.event), "event_synchronize");
      queue.pop_front();
      --pending_count_;
      put_event(f.event);
      if (--f.block->event_count == 0) free_block(f.block);
    }
  }
}

void* DeviceAllocator::get_event() {
  if (!idle_events_.empty()) {
    void* event = idle_events_.back();
    idle_events_.pop_back();
    return event;
  }
  void* event = nullptr;
  check(api_->event_create(api_->self, device_, &event), "event_create");
  return event;
}

void DeviceAllocator::put_event(void* event) { idle_events_.push_back(event); }

// ---------------------------------------------------------------------------
// Giving memory back

std::vector<Block*> DeviceAllocator::free_blocks() const {
  std::vector<Block*> out;
  out.reserve(small_.blocks.size() + large_.blocks.size());
  for (const BlockPool* pool : {&small_, &large_}) {
    out.insert(out.end(), pool->blocks.begin(), pool->blocks.end());
  }
  return out;
}

bool DeviceAllocator::release_one_cached(const AllocParams& p) {
  Block* best = nullptr;
  size_t best_bytes = 0;
  if (expandable_) {
    // The free pages that make room for the request with the least unmapped.
    const size_t need = round_up(p.size, page_);
    for (Block* b : free_blocks()) {
      size_t bytes = whole_page_bytes(b);
      if (bytes >= need && (best == nullptr || bytes < best_bytes)) best = b, best_bytes = bytes;
    }
    if (best == nullptr) return false;
    unmap_free_pages(best);
    return true;
  }
  // The smallest whole cached segment, of any stream and pool, at least as
  // large as the segment the request needs.
  for (Block* b : free_blocks()) {
    if (!b->is_split() && b->size >= p.alloc_size && (best == nullptr || b->size < best->size)) {
      best = b;
    }
  }
  if (best == nullptr) return false;
  release_segment(best);
  return true;
}

void DeviceAllocator::release_cached() {
  synchronize_and_free_events();
  for (Block* b : free_blocks()) {
    if (b->expandable != nullptr) {
      unmap_free_pages(b);
    } else if (!b->is_split()) {
      release_segment(b);
    }
  }
  release_empty_expandables();
}

void DeviceAllocator::release_segment(Block* b) {
  check(api_->free(api_->self, device_, b->ptr), "free");
  ++stats_.num_device_free;
  b->pool->blocks.erase(b);
  const bool small = b->pool->is_small;
  stats_.segment.add(small, -1);
  stats_.reserved_bytes.add(small, -int64_t(b->size));
  if (is_oversize(b->size)) stats_.oversize_segments.add(-1);
  segment_heads_.erase(b);
  recycle(b);
}

void DeviceAllocator::garbage_collect(const AllocParams& p) {
  size_t limit = allowed_;
  if (limit == SIZE_MAX) {
    size_t free_bytes = 0;
    device_memory(&free_bytes, &limit);
  }
  const size_t threshold = size_t(config_.garbage_collection_threshold * double(limit));
  const size_t need = expandable_ ? round_up(p.size, page_) : p.alloc_size;
  auto over = [&] { return size_t(stats_.reserved_bytes.all().current) + need > threshold; };
  if (!over()) return;
  // Cached memory that can go back, least recently freed first, until the new
  // memory fits under the threshold again.
  std::vector<Block*> candidates;
  for (Block* b : free_blocks()) {
    if (b->expandable != nullptr ? whole_page_bytes(b) > 0 : !b->is_split()) {
      candidates.push_back(b);
    }
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const Block* a, const Block* b) { return a->free_stamp < b->free_stamp; });
  for (Block* b : candidates) {
    if (!over()) break;
    if (b->expandable != nullptr) {
      unmap_free_pages(b);
    } else {
      release_segment(b);
    }
  }
}

void DeviceAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_cached();
}

void DeviceAllocator::set_memory_fraction(double fraction) {
  if (!(fraction >= 0.0 && fraction <= 1.0)) {
    throw std::invalid_argument("set_memory_fraction: fraction must be in [0, 1], got " +
                                std::to_string(fraction));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  size_t free_bytes = 0, total = 0;
  device_memory(&free_bytes, &total);
  allowed_ = size_t(fraction * double(total));
}

// ---------------------------------------------------------------------------
// Block bookkeeping

Block* DeviceAllocator::new_block() {
  if (idle_blocks_.empty()) return new Block();
  Block* b = idle_blocks_.back();
  idle_blocks_.pop_back();
  return b;
}

void DeviceAllocator::recycle(Block* b) {
  b->stream_uses.clear();  // keeps its capacity for the Block's next life
  std::vector<void*> uses = std::move(b->stream_uses);
  *b = Block();
  b->stream_uses = std::move(uses);
  idle_blocks_.push_back(b);
}

void DeviceAllocator::link_after(Block* at, Block* b) {
  b->prev = at;
  b->next = at->next;
  if (at->next != nullptr) at->next->prev = b;
  at->next = b;
}

void DeviceAllocator::merge(Block* lower, Block* upper) {
  lower->size += upper->size;
  lower->next = upper->next;
  if (lower->next != nullptr) lower->next->prev = lower;
  recycle(upper);
}

void DeviceAllocator::add_inactive_split(const Block* b, int sign) {
  if (!b->is_free() || !b->is_split()) return;
  const bool small = b->pool->is_small;
  stats_.inactive_split.add(small, sign);
  stats_.inactive_split_bytes.add(small, sign * int64_t(b->size));
}

[[noreturn]] void DeviceAllocator::fail(const char* call) {
  const char* message = api_->last_error != nullptr ? api_->last_error(api_->self) : nullptr;
  throw AllocatorError(std::string("CUDA error in ") + call + " on device " +
                       std::to_string(device_) + ": " +
                       (message != nullptr && *message != '\0' ? message : "unknown error"));
}

}  // namespace flambeau::cuda
