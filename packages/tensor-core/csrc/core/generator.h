// Random number generation: a counter-based Philox-4x32-10 stream. Element i of
// a sampling call draws from counter (offset + i / 4), lane i % 4, so the
// numbers depend only on the seed and the call sequence, never on threads.
#pragma once
#include <array>
#include <cstdint>
#include <mutex>

#include "core/device.h"
#include "core/refcount.h"

namespace flambeau {

// The seed of a default generator nobody has seeded (PyTorch's default_rng_seed_val).
constexpr uint64_t kDefaultSeed = 67280421310721ULL;

class Generator : public RefCounted {
 public:
  explicit Generator(uint64_t seed = kDefaultSeed, Device device = Device{})
      : seed_(seed), device_(device) {}
  Device device() const { return device_; }
  void manual_seed(uint64_t seed) {
    std::lock_guard<std::mutex> g(mutex_);
    seed_ = seed;
    offset_ = 0;
  }
  uint64_t seed() const { return seed_; }
  uint64_t offset() const { return offset_; }
  void set_state(uint64_t seed, uint64_t offset) {
    std::lock_guard<std::mutex> g(mutex_);
    seed_ = seed;
    offset_ = offset;
  }
  // Claims `blocks` counters (4 x 32 random bits each); returns the first.
  uint64_t reserve(uint64_t blocks) {
    std::lock_guard<std::mutex> g(mutex_);
    uint64_t start = offset_;
    offset_ += blocks;
    return start;
  }

 private:
  std::mutex mutex_;
  uint64_t seed_;
  uint64_t offset_ = 0;
  Device device_;
};

// The CPU's default generator (flambeau.default_generator).
Generator& default_generator();
// Each device's own default generator, as PyTorch has one per CUDA device: random
// kernels on a plugin device draw from it when no generator is given. Made on first
// use, seeded with the last seed given to seed_device_generators (else kDefaultSeed).
Generator& default_generator(Device device);
// Seeds every device's default generator, and those made later (flambeau.manual_seed).
void seed_device_generators(uint64_t seed);

// The 128-bit counter is (counter, counter_hi); samplers with a fixed number of
// draws per element leave counter_hi at 0, those that draw until accepted
// (poisson) give each element its own counter and count draws in counter_hi.
inline std::array<uint32_t, 4> philox4x32(uint64_t key64, uint64_t counter,
                                          uint64_t counter_hi = 0) {
  uint32_t k0 = static_cast<uint32_t>(key64), k1 = static_cast<uint32_t>(key64 >> 32);
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
  uint32_t c2 = static_cast<uint32_t>(counter_hi), c3 = static_cast<uint32_t>(counter_hi >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0;
    uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2;
    uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c0 = n0;
    c1 = static_cast<uint32_t>(p1);
    c2 = n2;
    c3 = static_cast<uint32_t>(p0);
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {c0, c1, c2, c3};
}

}  // namespace flambeau
