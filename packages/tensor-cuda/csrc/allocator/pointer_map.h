// Pointer -> Block lookups for free() and record_stream(): an open-addressing
// hash table (linear probing, deletion by backward shift) that allocates only
// when it grows, sharded so that devices and threads rarely share a lock.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace flambeau::cuda {

struct Block;

class PointerMap {
 public:
  PointerMap() : slots_(64) {}

  void insert(void* key, Block* value) {
    if ((count_ + 1) * 2 > slots_.size()) grow();
    place(key, value);
    ++count_;
  }

  Block* find(void* key) const {
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      if (slots_[i].key == key) return slots_[i].value;
      if (slots_[i].key == nullptr) return nullptr;
    }
  }

  // Removes `key` and returns its block; nullptr when absent.
  Block* take(void* key) {
    const size_t mask = slots_.size() - 1;
    size_t i = hash(key) & mask;
    while (slots_[i].key != key) {
      if (slots_[i].key == nullptr) return nullptr;
      i = (i + 1) & mask;
    }
    Block* value = slots_[i].value;
    // Shift later entries of the probe run back over the hole, so that lookups
    // never need tombstones.
    for (size_t j = (i + 1) & mask; slots_[j].key != nullptr; j = (j + 1) & mask) {
      size_t home = hash(slots_[j].key) & mask;
      bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i] = Slot{};
    --count_;
    return value;
  }

  size_t size() const { return count_; }

 private:
  struct Slot {
    void* key = nullptr;
    Block* value = nullptr;
  };

  static size_t hash(void* p) {
    uint64_t x = uint64_t(uintptr_t(p));
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return size_t(x);
  }

  void place(void* key, Block* value) {
    const size_t mask = slots_.size() - 1;
    size_t i = hash(key) & mask;
    while (slots_[i].key != nullptr) i = (i + 1) & mask;
    slots_[i] = Slot{key, value};
  }

  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& s : old) {
      if (s.key != nullptr) place(s.key, s.value);
    }
  }

  std::vector<Slot> slots_;  // a power of two long
  size_t count_ = 0;
};

// The live allocations of every device, split over independently locked shards.
class LiveBlocks {
 public:
  void insert(void* ptr, Block* block) {
    Shard& s = shard(ptr);
    std::lock_guard<std::mutex> lock(s.mutex);
    s.map.insert(ptr, block);
  }
  Block* find(void* ptr) {
    Shard& s = shard(ptr);
    std::lock_guard<std::mutex> lock(s.mutex);
    return s.map.find(ptr);
  }
  Block* take(void* ptr) {
    Shard& s = shard(ptr);
    std::lock_guard<std::mutex> lock(s.mutex);
    return s.map.take(ptr);
  }

 private:
  static constexpr size_t kShards = 16;
  struct alignas(64) Shard {
    std::mutex mutex;
    PointerMap map;
  };
  // Blocks are at least 512-byte aligned: skip those bits when picking a shard.
  Shard& shard(void* p) { return shards_[(uintptr_t(p) >> 9) % kShards]; }
  Shard shards_[kShards];
};

}  // namespace flambeau::cuda
