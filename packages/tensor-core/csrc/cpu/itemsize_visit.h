// Moving elements without looking at their values: index and mask kernels copy
// any dtype as an unsigned word of its size.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/dtype.h"
#include "core/error.h"

namespace flambeau {

struct Bytes16 {
  uint64_t lo, hi;
};

// Calls f(Tag<W>) with W a trivially copyable type of `itemsize` bytes.
template <class F>
void visit_itemsize(size_t itemsize, F&& f) {
  switch (itemsize) {
    case 1:
      return f(Tag<uint8_t>{});
    case 2:
      return f(Tag<uint16_t>{});
    case 4:
      return f(Tag<uint32_t>{});
    case 8:
      return f(Tag<uint64_t>{});
    case 16:
      return f(Tag<Bytes16>{});
    default:
      fail("unsupported item size ", itemsize);
  }
}

}  // namespace flambeau
