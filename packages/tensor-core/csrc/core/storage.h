// Storage: a reference-counted block of device memory with a version counter
// that in-place operations bump, so autograd can detect modified saved tensors.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/device.h"
#include "core/inference_mode.h"
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
  // Memory from an allocator: resizable (resize_ reallocates it in place).
  StorageImpl(size_t nbytes, Device device, Allocator* allocator)
      : nbytes_(nbytes), device_(allocator->resolve(device)), allocator_(allocator) {
    data_ = allocator->allocate_on(nbytes, device_);
  }
  // Borrowed memory (a NumPy array, a DLPack capsule): its size is fixed.
  StorageImpl(DataPtr data, size_t nbytes, Device device)
      : data_(data), nbytes_(nbytes), device_(device) {}
  ~StorageImpl() override {
    release(data_);
    for (const DataPtr& d : retired_) release(d);
  }

  void* data() const { return data_.ptr; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  uint64_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }
  // Allocated (or wrapped) in inference mode: an inference tensor's memory.
  bool inference() const { return inference_; }

  bool resizable() const { return allocator_ != nullptr; }
  // In memory other processes map (share_memory_): such a storage is never resized.
  bool shared() const { return shared_; }
  void mark_shared() { shared_ = true; }
  // Whether the memory is borrowed with `deleter`, whose context is then context().
  bool borrowed_from(void (*deleter)(void*, void*)) const { return data_.deleter == deleter; }
  void* context() const { return data_.ctx; }
  Allocator* allocator() const { return allocator_; }
  // A raw pointer to the memory went to a foreign holder (a NumPy array, a DLPack
  // capsule) that cannot follow a reallocation.
  void mark_exported() { exported_ = true; }
  // Takes other's memory (a larger block the caller filled), giving other this
  // one's, which dies with other. Exported memory is instead kept until this
  // storage dies: its foreign holders still read it.
  // Moves to memory the caller filled with this storage's bytes and that someone else
  // owns (shared memory): the storage cannot be resized from then on.
  void adopt(DataPtr data, bool shared) {
    if (exported_)
      retired_.push_back(data_);
    else
      release(data_);
    data_ = data;
    allocator_ = nullptr;
    shared_ = shared;
  }
  void take_memory(StorageImpl& other) {
    std::swap(data_, other.data_);
    std::swap(nbytes_, other.nbytes_);
    if (exported_) {
      retired_.push_back(other.data_);
      other.data_ = DataPtr{};
      other.nbytes_ = 0;
    }
  }

 private:
  static void release(const DataPtr& d) {
    if (d.deleter) d.deleter(d.ctx, d.ptr);
  }
  DataPtr data_;
  size_t nbytes_;
  Device device_;
  Allocator* allocator_ = nullptr;
  bool exported_ = false;
  bool shared_ = false;
  std::vector<DataPtr> retired_;  // exported blocks replaced by take_memory
  std::atomic<uint64_t> version_{0};
  bool inference_ = inference_mode_enabled();
};

using Storage = Ref<StorageImpl>;

}  // namespace flambeau
