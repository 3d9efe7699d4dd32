// Blocks, the pieces a segment of device memory is cut into, and the pools that
// index the free ones.
#pragma once
#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

namespace flambeau::cuda {

struct BlockPool;
struct ExpandableSegment;

struct Block {
  char* ptr = nullptr;
  size_t size = 0;
  size_t requested_size = 0;  // what the caller asked for (allocated blocks)
  void* stream = nullptr;     // the stream it was allocated on; reused only there
  BlockPool* pool = nullptr;
  ExpandableSegment* expandable = nullptr;  // null: the block lives in a malloc'd segment
  // Neighbours in the same segment, by address. A split keeps the lower part in
  // the original Block and a merge keeps the lower Block, so the Block at a
  // segment's start stays the same object for the segment's whole life.
  Block* prev = nullptr;
  Block* next = nullptr;
  bool allocated = false;
  bool mapped = true;              // false: an expandable segment's range with no memory behind it
  int event_count = 0;             // events still to complete before a freed block is reusable
  uint64_t free_stamp = 0;         // when it was last freed, for garbage collection
  std::vector<void*> stream_uses;  // other streams it was used on (record_stream)

  bool is_split() const { return prev != nullptr || next != nullptr; }
  // Free and reusable: in its pool's `blocks` set.
  bool is_free() const { return !allocated && event_count == 0 && mapped; }
};

// Best fit order: stream first (a pool lookup never crosses streams), then size,
// then address (lower addresses first, which packs allocations together).
struct BlockOrder {
  bool operator()(const Block* a, const Block* b) const {
    if (a->stream != b->stream) return uintptr_t(a->stream) < uintptr_t(b->stream);
    if (a->size != b->size) return a->size < b->size;
    return uintptr_t(a->ptr) < uintptr_t(b->ptr);
  }
};

// A std::set of blocks whose erased nodes are kept for the next insert, so that
// a cached allocation and free do not touch the heap once the pool is warm.
class BlockSet {
 public:
  using Set = std::set<Block*, BlockOrder>;
  using iterator = Set::iterator;

  void insert(Block* b) {
    if (spare_.empty()) {
      set_.insert(b);
      return;
    }
    Set::node_type node = std::move(spare_.back());
    spare_.pop_back();
    node.value() = b;
    set_.insert(std::move(node));
  }
  void erase(iterator it) { spare_.push_back(set_.extract(it)); }
  // Erases `b`, which must be in the set (with its current stream, size, ptr).
  void erase(Block* b) { erase(set_.find(b)); }
  bool contains(Block* b) const { return set_.count(b) != 0; }

  // The first block of `stream` with size >= `size`, or end().
  iterator lower_bound(void* stream, size_t size) const {
    Block key;
    key.stream = stream;
    key.size = size;
    return set_.lower_bound(&key);
  }
  iterator begin() const { return set_.begin(); }
  iterator end() const { return set_.end(); }
  size_t size() const { return set_.size(); }
  bool empty() const { return set_.empty(); }

 private:
  Set set_;
  std::vector<Set::node_type> spare_;
};

struct BlockPool {
  BlockPool(int device_index, bool small) : device(device_index), is_small(small) {}
  BlockSet blocks;    // free mapped blocks
  BlockSet unmapped;  // expandable segments' ranges with nothing mapped
  const int device;
  const bool is_small;
};

// A reserved range of addresses that grows by mapping pages (see
// docs/design/cuda-allocator.rst).
struct ExpandableSegment {
  char* base = nullptr;
  size_t reserved = 0;  // bytes of address space
  size_t page = 0;      // the mapping granularity
  size_t mapped = 0;    // bytes mapped now
  void* stream = nullptr;
  BlockPool* pool = nullptr;
  Block* head = nullptr;  // the block at `base`
};

}  // namespace flambeau::cuda
