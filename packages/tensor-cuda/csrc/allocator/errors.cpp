#include "allocator/errors.h"

#include <cstdio>

#include "allocator/alloc_config.h"

namespace flambeau::cuda {

std::string format_bytes(size_t bytes) {
  char buf[64];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof buf, "%zu bytes", bytes);
  } else if (bytes < kMiB) {
    std::snprintf(buf, sizeof buf, "%.2f KiB", bytes / 1024.0);
  } else if (bytes < 1024 * kMiB) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / double(kMiB));
  } else {
    std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / double(1024 * kMiB));
  }
  return buf;
}

namespace {

std::string oom_message(const OomReport& r) {
  char fragmentation[32];
  std::snprintf(fragmentation, sizeof fragmentation, "%.2f", r.fragmentation());
  std::string msg = "CUDA out of memory. Tried to allocate " + format_bytes(r.requested) +
                    ". GPU " + std::to_string(r.device) + " has a total capacity of " +
                    format_bytes(r.device_total) + " of which " + format_bytes(r.device_free) +
                    " is free.";
  if (r.allowed != SIZE_MAX) {
    msg += " This process may use at most " + format_bytes(r.allowed) +
           " (set_per_process_memory_fraction).";
  }
  msg += " Of the allocated memory " + format_bytes(r.allocated) +
         " is allocated by flambeau, and " + format_bytes(r.reserved - r.allocated) +
         " is reserved by flambeau but unallocated; the largest free block is " +
         format_bytes(r.largest_free) + " (fragmentation " + fragmentation +
         " = 1 - largest free block / free cached memory).";
  // Only when it would have helped: the free cached memory was enough, but in
  // pieces (PyTorch prints this hint on every OOM, which teaches users to ignore it).
  if (!r.expandable && r.free_cached >= r.requested) {
    msg += std::string(
               " The free cached memory would fit the request if it were one piece: "
               "setting ") +
           kAllocConfEnv + "=expandable_segments:True avoids this fragmentation.";
  }
  return msg;
}

}  // namespace

OutOfMemoryError::OutOfMemoryError(const OomReport& r)
    : std::runtime_error(oom_message(r)), report(r) {}

}  // namespace flambeau::cuda
