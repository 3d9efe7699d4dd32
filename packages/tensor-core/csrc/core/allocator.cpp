#include <sys/mman.h>

#include <array>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/storage.h"

namespace flambeau {

namespace {

constexpr size_t kAlignment = 64;
// Large blocks are 2 MiB aligned and marked for transparent huge pages: a fresh
// 64 MiB output then takes 32 page faults instead of 16384.
constexpr size_t kHugePage = size_t(2) << 20;

size_t rounded_size(size_t nbytes) {
  size_t align = nbytes >= kHugePage ? kHugePage : kAlignment;
  size_t rounded = (nbytes + align - 1) / align * align;
  return rounded == 0 ? align : rounded;
}

// Freed blocks of 256 KiB and more wait here for a request of the same rounded
// size, up to FLAMBEAU_CPU_CACHE_MB (default 256) in all. A training step frees
// and allocates the same large sizes every iteration, and a block fresh from
// the OS costs a page fault per page touched: a third of an MLP step's time.
class BlockCache {
 public:
  static constexpr size_t kMinBlock = size_t(256) << 10;

  void* take(size_t rounded) {
    if (rounded < kMinBlock) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(rounded);
    if (it == free_.end() || it->second.empty()) return nullptr;
    void* p = it->second.back();
    it->second.pop_back();
    cached_ -= rounded;
    return p;
  }

  bool put(void* p, size_t rounded) {
    if (rounded < kMinBlock) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    if (cached_ + rounded > limit_) return false;
    free_[rounded].push_back(p);
    cached_ += rounded;
    return true;
  }

 private:
  static size_t limit_from_env() {
    const char* v = std::getenv("FLAMBEAU_CPU_CACHE_MB");
    if (v == nullptr || *v == '\0') return size_t(256) << 20;
    try {
      return static_cast<size_t>(std::stoull(v)) << 20;
    } catch (...) {
      return size_t(256) << 20;
    }
  }

  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  size_t cached_ = 0;
  const size_t limit_ = limit_from_env();
};

BlockCache& block_cache() {
  static auto* cache = new BlockCache();  // leaked: storages may die after static destructors
  return *cache;
}

class CPUAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    const size_t rounded = rounded_size(nbytes);
    void* p = block_cache().take(rounded);
    if (p == nullptr) {
      const size_t align = rounded >= kHugePage ? kHugePage : kAlignment;
      p = std::aligned_alloc(align, rounded);
      FLB_CHECK(p != nullptr, "CPU allocator: out of memory allocating ", nbytes, " bytes");
#ifdef MADV_HUGEPAGE
      if (align == kHugePage) madvise(p, rounded, MADV_HUGEPAGE);
#endif
    }
    record(static_cast<int64_t>(nbytes));
    // The size rides in ctx so the deleter can keep the statistics right.
    return DataPtr{p, reinterpret_cast<void*>(nbytes), &CPUAllocator::release};
  }
  AllocatorStats stats() const override {
    AllocatorStats s;
    s.allocated = allocated_.load();
    s.peak = peak_.load();
    s.allocations = blocks_.load();
    return s;
  }

 private:
  static void release(void* ctx, void* ptr) {
    if (!block_cache().put(ptr, rounded_size(reinterpret_cast<size_t>(ctx)))) std::free(ptr);
    auto* self = static_cast<CPUAllocator*>(cpu_allocator());
    self->allocated_ -= static_cast<int64_t>(reinterpret_cast<size_t>(ctx));
    self->blocks_ -= 1;
  }
  void record(int64_t nbytes) {
    int64_t now = allocated_ += nbytes;
    blocks_ += 1;
    int64_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
  }
  std::atomic<int64_t> allocated_{0}, peak_{0}, blocks_{0};
};

std::array<Allocator*, kMaxDeviceTypes>& allocators() {
  static std::array<Allocator*, kMaxDeviceTypes> a{};
  return a;
}

}  // namespace

Allocator* cpu_allocator() {
  static CPUAllocator instance;
  return &instance;
}

Allocator* allocator_for(DeviceType t) {
  if (t == kCPU) return cpu_allocator();
  Allocator* a = allocators()[static_cast<size_t>(t)];
  FLB_CHECK(a != nullptr, "no backend for device type '", device_type_name(t),
            "' is loaded: install a flambeau backend plugin that provides it");
  return a;
}

void set_allocator(DeviceType t, Allocator* a) { allocators()[static_cast<size_t>(t)] = a; }

}  // namespace flambeau
