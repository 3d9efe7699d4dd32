// The allocator's memory as torch.cuda.memory_snapshot() describes it: a list of
// segments, each with its blocks in address order.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace flambeau::cuda {

enum class BlockState {
  kActiveAllocated,    // handed out ("active_allocated")
  kActivePendingFree,  // freed, waiting on events of other streams ("active_pending_free")
  kInactive,           // free and cached ("inactive")
};

const char* block_state_name(BlockState s);

struct BlockInfo {
  uintptr_t address = 0;
  size_t size = 0;
  size_t requested_size = 0;  // 0 unless allocated
  BlockState state = BlockState::kInactive;
};

// One malloc'd segment, or one contiguous mapped range of an expandable segment
// (as PyTorch reports them; unmapped address space is not listed).
struct SegmentInfo {
  int device = 0;
  uintptr_t address = 0;
  size_t total_size = 0;
  size_t allocated_size = 0;
  size_t active_size = 0;
  size_t requested_size = 0;
  uintptr_t stream = 0;
  bool is_large = false;  // segment_type "large" or "small"
  bool is_expandable = false;
  std::vector<BlockInfo> blocks;
};

}  // namespace flambeau::cuda
