// Exceptions of the caching allocator. The Python bindings turn OutOfMemoryError
// into flambeau.cuda.OutOfMemoryError (torch.cuda.OutOfMemoryError is a
// RuntimeError too) and AllocatorError into RuntimeError.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace flambeau::cuda {

// A failing device call (other than out of memory) or a misuse of the allocator
// such as freeing a pointer it did not hand out.
struct AllocatorError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What the allocator knew when it gave up; the message says it in words.
struct OomReport {
  int device = 0;
  size_t requested = 0;     // bytes asked for
  size_t allocated = 0;     // bytes in live allocations
  size_t reserved = 0;      // bytes held from the device
  size_t free_cached = 0;   // reserved bytes in free blocks
  size_t largest_free = 0;  // the largest free block
  size_t device_free = 0;   // as the device reported it after the cache was emptied
  size_t device_total = 0;
  size_t allowed = SIZE_MAX;  // set_memory_fraction's limit; SIZE_MAX when none is set
  bool expandable = false;    // expandable segments were in use
  // 1 - largest_free / free_cached: 0 when the free cached memory is one block,
  // near 1 when it is scattered over many small ones.
  double fragmentation() const {
    return free_cached == 0 ? 0.0 : 1.0 - double(largest_free) / double(free_cached);
  }
};

struct OutOfMemoryError : std::runtime_error {
  explicit OutOfMemoryError(const OomReport& r);
  OomReport report;
};

// "512 bytes", "1.50 KiB", "20.00 MiB", "2.00 GiB" (as PyTorch's messages).
std::string format_bytes(size_t bytes);

}  // namespace flambeau::cuda
