// Layouts of new tensors by memory format: see memory_format.h.
#include "ops/memory_format.h"

#include <utility>

namespace flambeau {

namespace {

// Dims of a channels-last layout, innermost first: C, then the spatial dims from the last,
// then N (NHWC: C, W, H, N).
DimVector channels_last_order(int64_t nd) {
  DimVector order{1};
  for (int64_t d = nd - 1; d >= 2; --d) order.push_back(d);
  order.push_back(0);
  return order;
}

int64_t channels_last_rank(MemoryFormat f) { return f == MemoryFormat::ChannelsLast ? 4 : 5; }

// Dense strides keeping a non-dense tensor's memory order: dims sorted innermost first by
// stride, equal strides putting the smaller dim inside. A zero stride (a broadcast dim) is
// not comparable, so such a dim keeps its row-major place and the search steps over it.
DimVector strides_in_memory_order(const Tensor& t) {
  const int64_t nd = t->dim();
  IntList sizes = t->sizes(), strides = t->strides();
  DimVector order(static_cast<size_t>(nd));  // innermost first
  for (int64_t i = 0; i < nd; ++i) order[i] = nd - 1 - i;
  // > 0: dim a belongs outside dim b; < 0: inside; 0: no opinion.
  auto outer = [&](int64_t a, int64_t b) -> int {
    if (strides[a] == 0 || strides[b] == 0) return 0;
    if (strides[a] != strides[b]) return strides[a] > strides[b] ? 1 : -1;
    return sizes[a] > sizes[b] ? 1 : 0;
  };
  for (int64_t i = 1; i < nd; ++i) {
    int64_t moving = i;
    for (int64_t j = i - 1; j >= 0; --j) {
      int c = outer(order[j], order[moving]);
      if (c < 0) break;
      if (c > 0) {
        std::swap(order[j], order[moving]);
        moving = j;
      }
    }
  }
  DimVector out(static_cast<size_t>(nd));
  int64_t next = 1;
  for (int64_t d : order) {
    out[d] = next;
    if (sizes[d] > 1) next *= sizes[d];
  }
  return out;
}

}  // namespace

DimVector memory_format_strides(const Tensor& like, MemoryFormat f, const char* op) {
  IntList sizes = like->sizes();
  switch (f) {
    case MemoryFormat::Contiguous:
      return contiguous_strides(sizes);
    case MemoryFormat::Preserve:
      if (dense_layout_of(like)) return DimVector(like->strides());
      return strides_in_memory_order(like);
    case MemoryFormat::ChannelsLast:
    case MemoryFormat::ChannelsLast3d: {
      const int64_t rank = channels_last_rank(f);
      FLB_CHECK(like->dim() == rank, op, ": required rank ", rank, " tensor to use ",
                memory_format_name(f), " format, but got a tensor of shape ", shape_str(sizes));
      DimVector out(static_cast<size_t>(rank));
      int64_t next = 1;
      for (int64_t d : channels_last_order(rank)) {
        out[d] = next;
        next *= sizes[d];  // as PyTorch: a zero size zeroes the outer strides
      }
      return out;
    }
  }
  return contiguous_strides(sizes);
}

Tensor empty_in_format(const Tensor& like, ScalarType dtype, Device device, MemoryFormat f,
                       const char* op) {
  if (f == MemoryFormat::Contiguous) return empty(like->sizes(), dtype, device);
  return empty_strided(like->sizes(), memory_format_strides(like, f, op), dtype, device);
}

bool is_contiguous_in(const Tensor& t, MemoryFormat f) {
  if (f == MemoryFormat::Contiguous || f == MemoryFormat::Preserve) return t->is_contiguous();
  if (t->dim() != channels_last_rank(f)) return false;
  int64_t expected = 1;
  for (int64_t d : channels_last_order(t->dim())) {
    const int64_t size = t->sizes()[d];
    if (size == 1) continue;  // any stride will do
    if (t->strides()[d] != expected) return false;
    expected *= size;
  }
  return true;
}

}  // namespace flambeau
