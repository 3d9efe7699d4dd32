// Sizes and strides: a vector that keeps up to 6 elements inline so the common
// tensor allocates nothing for its shape.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

namespace flambeau {

template <class T>
class Span {
 public:
  Span() = default;
  Span(const T* data, size_t size) : data_(data), size_(size) {}
  Span(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  Span(std::initializer_list<T> l) : data_(l.begin()), size_(l.size()) {}
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](size_t i) const { return data_[i]; }
  const T& back() const { return data_[size_ - 1]; }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  bool operator==(Span o) const {
    return size_ == o.size_ && std::equal(begin(), end(), o.begin());
  }
  bool operator!=(Span o) const { return !(*this == o); }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

class DimVector {
 public:
  static constexpr size_t kInline = 6;
  DimVector() = default;
  explicit DimVector(size_t n, int64_t value = 0) { assign(n, value); }
  DimVector(Span<int64_t> s) { assign(s.begin(), s.end()); }  // NOLINT
  DimVector(std::initializer_list<int64_t> l) { assign(l.begin(), l.end()); }
  DimVector(const DimVector& o) { assign(o.begin(), o.end()); }
  DimVector& operator=(const DimVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  ~DimVector() {
    if (heap_) delete[] heap_;
  }

  operator Span<int64_t>() const { return Span<int64_t>(data(), size_); }  // NOLINT
  int64_t* data() { return heap_ ? heap_ : inline_; }
  const int64_t* data() const { return heap_ ? heap_ : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* begin() { return data(); }
  int64_t* end() { return data() + size_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t& operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t back() const { return data()[size_ - 1]; }

  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = value;
    size_ = n;
  }
  void assign(size_t n, int64_t value) {
    size_ = 0;
    resize(n, value);
  }
  template <class It>
  void assign(It first, It last) {
    size_t n = static_cast<size_t>(last - first);
    reserve(n);
    std::copy(first, last, data());
    size_ = n;
  }
  void clear() { size_ = 0; }
  void push_back(int64_t v) {
    reserve(size_ + 1);
    data()[size_++] = v;
  }
  void insert(size_t pos, int64_t v) {
    push_back(0);
    int64_t* d = data();
    for (size_t i = size_ - 1; i > pos; --i) d[i] = d[i - 1];
    d[pos] = v;
  }
  void erase(size_t pos) {
    int64_t* d = data();
    for (size_t i = pos; i + 1 < size_; ++i) d[i] = d[i + 1];
    --size_;
  }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  bool operator==(const DimVector& o) const { return Span<int64_t>(*this) == Span<int64_t>(o); }
  bool operator!=(const DimVector& o) const { return !(*this == o); }

 private:
  void reserve(size_t n) {
    size_t cap = heap_ ? cap_ : kInline;
    if (n <= cap) return;
    size_t new_cap = std::max(n, cap * 2);
    int64_t* fresh = new int64_t[new_cap];
    std::copy(begin(), end(), fresh);
    if (heap_) delete[] heap_;
    heap_ = fresh;
    cap_ = new_cap;
  }
  int64_t inline_[kInline];
  int64_t* heap_ = nullptr;
  size_t size_ = 0;
  size_t cap_ = 0;
};

using IntList = Span<int64_t>;

}  // namespace flambeau
