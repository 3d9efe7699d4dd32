// The caching allocator of one device: pools of free blocks, the segments they
// come from, stream-ordered reuse through events, and the out-of-memory path.
// Every public method takes the device's mutex.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "allocator/alloc_config.h"
#include "allocator/block.h"
#include "allocator/device_api.h"
#include "allocator/snapshot.h"
#include "allocator/stats.h"

namespace flambeau::cuda {

class DeviceAllocator {
 public:
  // `api` must outlive the allocator and have malloc, free and mem_get_info.
  DeviceAllocator(const flb_cuda_device_api* api, int device, const AllocatorConfig& config);
  ~DeviceAllocator();
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  // A block of at least `size` (> 0) bytes, to be used on `stream`. Throws
  // OutOfMemoryError once the cache cannot make room, AllocatorError when the
  // device fails otherwise.
  Block* malloc(size_t size, void* stream);
  // Returns a block malloc gave. It is reused at once on its own stream, and
  // after the work queued on the streams given to record_stream has finished.
  void free(Block* block);
  // Marks a use of `block` on `stream` besides its allocation stream.
  void record_stream(Block* block, void* stream);
  // Waits for pending frees, then returns every unused segment to the device
  // (and unmaps the free pages of expandable segments).
  void empty_cache();

  DeviceStats stats();
  void reset_peak_stats();
  void reset_accumulated_stats();
  std::vector<SegmentInfo> snapshot();
  // Caps reserved memory at fraction * device total (0 <= fraction <= 1).
  void set_memory_fraction(double fraction);
  bool expandable_segments() const { return expandable_; }
  int device() const { return device_; }

 private:
  struct AllocParams {
    size_t requested;   // the caller's size
    size_t size;        // rounded
    size_t alloc_size;  // a new malloc'd segment's size
    void* stream;
    BlockPool* pool;
    Block* block = nullptr;  // the result
  };
  struct PendingFree {
    void* event;
    Block* block;
  };

  size_t round_size(size_t size) const;
  static size_t segment_size(size_t size);
  bool is_oversize(size_t size) const { return size >= config_.max_split_size; }

  // Allocation steps, cheapest first (device_allocator.cpp).
  bool get_free_block(AllocParams& p);
  bool alloc_block(AllocParams& p, bool is_retry);
  bool alloc_segment(AllocParams& p);
  bool should_split(const Block* block, size_t size) const;
  void split(Block* block, size_t size);
  void free_block(Block* block);
  bool release_one_cached(const AllocParams& p);
  void release_cached();
  void release_segment(Block* block);
  void garbage_collect(const AllocParams& p);
  bool reserve_allowed(size_t bytes) const;

  // Blocks and their bookkeeping.
  Block* new_block();
  void recycle(Block* block);
  void merge(Block* lower, Block* upper);  // lower absorbs upper (both out of any set)
  static void link_after(Block* at, Block* block);
  void add_inactive_split(const Block* block, int sign);
  Block* merge_free_neighbours(Block* block);
  std::vector<Block*> free_blocks() const;

  // Events of cross-stream frees (device_allocator.cpp).
  void insert_events(Block* block);
  void process_events();
  void synchronize_and_free_events();
  void* get_event();
  void put_event(void* event);

  // Expandable segments (expandable_segments.cpp).
  bool grow_expandable(AllocParams& p);
  ExpandableSegment* new_expandable(void* stream, BlockPool* pool);
  size_t whole_page_bytes(const Block* block) const;
  size_t unmap_free_pages(Block* block);
  void release_expandable(size_t index);
  void release_empty_expandables();

  // Reports (device_allocator_report.cpp).
  [[noreturn]] void throw_oom(const AllocParams& p);
  void device_memory(size_t* free_bytes, size_t* total_bytes);

  [[noreturn]] void fail(const char* call);
  void check(flb_cuda_status status, const char* call) {
    if (status != FLB_CUDA_OK) fail(call);
  }

  const flb_cuda_device_api* api_;
  const int device_;
  const AllocatorConfig config_;
  bool expandable_ = false;
  size_t page_ = 0;            // mapping granularity of expandable segments
  size_t device_total_ = 0;    // learnt on first need
  size_t allowed_ = SIZE_MAX;  // set_memory_fraction's cap on reserved bytes

  std::mutex mutex_;
  BlockPool small_;
  BlockPool large_;
  DeviceStats stats_;
  uint64_t clock_ = 0;  // counts malloc calls; ages cached blocks for garbage collection

  std::unordered_set<Block*> segment_heads_;  // malloc'd segments, by their first block
  std::vector<std::unique_ptr<ExpandableSegment>> expandables_;

  std::unordered_map<void*, std::deque<PendingFree>> pending_;  // by stream, in record order
  size_t pending_count_ = 0;
  std::vector<void*> idle_events_;
  std::vector<Block*> idle_blocks_;
};

}  // namespace flambeau::cuda
