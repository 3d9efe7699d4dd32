// Storage: a reference-counted block of device memory with a version counter
// that in-place operations bump, so autograd can detect modified saved tensors.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/device.h"
#include "core/refcount.h"

namespace flambeau {

// Memory plus how to give it back. ctx lets foreign owners (a NumPy array, a
// DLPack capsule) keep their memory alive for as long as the storage lives.
struct DataPtr {
  void* ptr = nullptr;
  void* ctx = nullptr;
  void (*deleter)(void* ctx, void* ptr) = nullptr;
};

struct AllocatorStats {
  int64_t allocated = 0;  // bytes currently handed out
  int64_t peak = 0;
  int64_t allocations = 0;  // number of live blocks
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual DataPtr allocate(size_t nbytes) = 0;
  virtual AllocatorStats stats() const = 0;
  // Devices with several ordinals (plugins) turn index -1, "the current
  // device", into the one they allocate on.
  virtual Device resolve(Device d) const { return d; }
  virtual DataPtr allocate_on(size_t nbytes, Device d) {
    (void)d;
    return allocate(nbytes);
  }
};

// The CPU allocator: 64-byte aligned blocks, with statistics.
Allocator* cpu_allocator();
Allocator* allocator_for(DeviceType t);
void set_allocator(DeviceType t, Allocator* a);

class StorageImpl : public RefCounted {
 public:
  StorageImpl(size_t nbytes, Device device, Allocator* allocator)
      : nbytes_(nbytes), device_(allocator->resolve(device)) {
    data_ = allocator->allocate_on(nbytes, device_);
  }
  StorageImpl(DataPtr data, size_t nbytes, Device device)
      : data_(data), nbytes_(nbytes), device_(device) {}
  ~StorageImpl() override {
    if (data_.deleter) data_.deleter(data_.ctx, data_.ptr);
  }

  void* data() const { return data_.ptr; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  uint64_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  DataPtr data_;
  size_t nbytes_;
  Device device_;
  std::atomic<uint64_t> version_{0};
};

using Storage = Ref<StorageImpl>;

}  // namespace flambeau
