// The caching allocator of page-locked host memory (pin_memory, non_blocking
// copies), as PyTorch's: sizes rounded up to a power of two, freed blocks kept
// for reuse, and a block used by asynchronous copies reused only once the
// work queued on those streams before its free has finished (events).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace flambeau::cuda::runtime {

class HostAllocator {
 public:
  struct Block {
    void* ptr = nullptr;
    size_t size = 0;
    bool in_use = false;
    std::vector<cudaStream_t> streams;  // used on, since allocation
    std::vector<cudaEvent_t> events;    // recorded at free, one per stream
  };
  struct Stats {
    int64_t allocated_bytes = 0;  // in live blocks
    int64_t reserved_bytes = 0;   // held from cudaHostAlloc
    int64_t allocations = 0;
  };

  // A pinned block of at least nbytes (nbytes 0: nullptr). On failure returns
  // cudart's error and leaves *block null.
  cudaError_t allocate(size_t nbytes, Block** block);
  // Returns a block to the cache (events recorded on the streams it was used on).
  void free(Block* block);
  // Records that an asynchronous copy on `stream` reads or writes `ptr`; a
  // no-op unless ptr is inside a live pinned block. Returns whether it was.
  bool record_stream(const void* ptr, cudaStream_t stream);
  // Whether `ptr` is inside a live pinned block.
  bool is_pinned(const void* ptr);
  // Frees every cached block whose events have completed.
  void empty_cache();
  Stats stats();

 private:
  Block* find_live(const void* ptr);  // under mutex_
  void process_events();              // under mutex_

  std::mutex mutex_;
  std::map<uintptr_t, Block*> blocks_;  // every block, by address
  std::multimap<size_t, Block*> free_;  // reusable, by size
  std::vector<Block*> pending_;         // freed, events not yet complete
  Stats stats_;
};

HostAllocator& host_allocator();

}  // namespace flambeau::cuda::runtime
