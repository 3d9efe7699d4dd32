#include <sys/mman.h>

#include <array>
#include <cstdlib>
#include <new>

#include "core/error.h"
#include "core/storage.h"

namespace flambeau {

namespace {

constexpr size_t kAlignment = 64;
// Large blocks are 2 MiB aligned and marked for transparent huge pages: a fresh
// 64 MiB output then takes 32 page faults instead of 16384.
constexpr size_t kHugePage = size_t(2) << 20;

class CPUAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    size_t align = nbytes >= kHugePage ? kHugePage : kAlignment;
    size_t rounded = (nbytes + align - 1) / align * align;
    void* p = std::aligned_alloc(align, rounded == 0 ? align : rounded);
    FLB_CHECK(p != nullptr, "CPU allocator: out of memory allocating ", nbytes, " bytes");
#ifdef MADV_HUGEPAGE
    if (align == kHugePage) madvise(p, rounded, MADV_HUGEPAGE);
#endif
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
    std::free(ptr);
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
