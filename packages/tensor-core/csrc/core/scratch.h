// Scratch memory a kernel needs besides its output, sized by its input. It comes from
// the CPU allocator, as tensors do, so a size that cannot be had raises the allocator's
// RuntimeError (PyTorch raises one too) where std::vector would throw std::bad_alloc (a
// MemoryError, and under AddressSanitizer an abort). Elements start zeroed, as a
// std::vector's do.
#pragma once
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "core/error.h"
#include "core/storage.h"

namespace flambeau {

template <class T>
class Scratch {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "Scratch holds plain data");

 public:
  Scratch() = default;
  explicit Scratch(size_t n) { allocate(n); }
  Scratch(size_t n, const T& value) {
    allocate(n);
    for (size_t i = 0; i < n; ++i) p_[i] = value;
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  Scratch(Scratch&& o) noexcept : data_(o.data_), p_(o.p_), n_(o.n_) {
    o.data_ = DataPtr{};
    o.p_ = nullptr;
    o.n_ = 0;
  }
  ~Scratch() {
    if (data_.deleter) data_.deleter(data_.ctx, data_.ptr);
  }

  T* data() { return p_; }
  const T* data() const { return p_; }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }
  T* begin() { return p_; }
  T* end() { return p_ + n_; }
  const T* begin() const { return p_; }
  const T* end() const { return p_ + n_; }

 private:
  void allocate(size_t n) {
    size_t bytes = 0;
    FLB_CHECK(!__builtin_mul_overflow(n, sizeof(T), &bytes),
              "CPU allocator: out of memory allocating scratch space of ", n, " elements of ",
              sizeof(T), " bytes");
    if (n == 0) return;
    data_ = cpu_allocator()->allocate(bytes);
    p_ = static_cast<T*>(data_.ptr);
    n_ = n;
    std::memset(static_cast<void*>(p_), 0, bytes);
  }

  DataPtr data_;
  T* p_ = nullptr;
  size_t n_ = 0;
};

}  // namespace flambeau
