// CPU kernels of the boolean-mask operators: masked_select and nonzero (two
// parallel passes: count per chunk, then write at the chunk's prefix offset),
// masked_fill (elementwise) and masked_scatter (serial, in row-major order).
#include <functional>
#include <vector>

#include "cpu/itemsize_visit.h"
#include "cpu/tensor_iterator.h"
#include "generated/kernels.h"
#include "ops/indexing_util.h"

namespace flambeau {

namespace {

// Splits [0, n) into chunks, counts with count(lo, hi) per chunk in parallel,
// then calls write(lo, hi, first) with each chunk's first output position.
// Returns the total count.
template <class Count, class Write>
int64_t count_then_write(int64_t n, const Count& count, const Write& write,
                         const std::function<void(int64_t)>& allocate) {
  const int64_t chunks = std::max<int64_t>(
      1, std::min<int64_t>(get_num_threads() * 4, (n + kGrainSize - 1) / kGrainSize));
  std::vector<int64_t> counts(static_cast<size_t>(chunks) + 1, 0);
  auto lo_of = [&](int64_t c) { return n * c / chunks; };
  parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) counts[c + 1] = count(lo_of(c), lo_of(c + 1));
  });
  for (int64_t c = 0; c < chunks; ++c) counts[c + 1] += counts[c];
  allocate(counts[chunks]);
  parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) write(lo_of(c), lo_of(c + 1), counts[c], counts[c + 1]);
  });
  return counts[chunks];
}

Tensor masked_select_kernel(const Tensor& input, const Tensor& mask) {
  const uint8_t* m = reinterpret_cast<const uint8_t*>(mask->data());
  Tensor out;
  auto count = [&](int64_t lo, int64_t hi) {
    int64_t c = 0;
    for (int64_t i = lo; i < hi; ++i) c += m[i];
    return c;
  };
  visit_itemsize(input->itemsize(), [&](auto tag) {
    using W = typename decltype(tag)::type;
    const W* x = reinterpret_cast<const W*>(input->data());
    W* o = nullptr;
    auto write = [&](int64_t lo, int64_t hi, int64_t first, int64_t last) {
      // Branch-free: every element is written, the unselected ones overwritten
      // by the next; past the chunk's last slot writes go to a scratch slot.
      W scratch;
      int64_t j = first;
      for (int64_t i = lo; i < hi; ++i) {
        W* dst = j < last ? o + j : &scratch;
        *dst = x[i];
        j += m[i];
      }
    };
    count_then_write(input->numel(), count, write, [&](int64_t total) {
      out = empty(DimVector{total}, input->dtype(), input->device());
      o = reinterpret_cast<W*>(out->data());
    });
  });
  return out;
}

Tensor nonzero_kernel(const Tensor& input) {
  const int64_t nd = input->dim();
  IntList sizes = input->sizes();
  Tensor out;
  visit_dtype<kAllTypes>(input->dtype(), "nonzero", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = input->data_as<T>();
    auto count = [&](int64_t lo, int64_t hi) {
      int64_t c = 0;
      for (int64_t i = lo; i < hi; ++i) c += convert<bool>(x[i]) ? 1 : 0;
      return c;
    };
    auto write = [&](int64_t lo, int64_t hi, int64_t first, int64_t) {
      if (lo >= hi) return;
      int64_t* o = out->data_as<int64_t>() + first * nd;
      DimVector pos(static_cast<size_t>(nd));  // multi-index of lo, kept in step
      int64_t rem = lo;
      for (int64_t d = nd - 1; d >= 0; --d) {
        pos[d] = rem % sizes[d];
        rem /= sizes[d];
      }
      for (int64_t i = lo; i < hi; ++i) {
        if (convert<bool>(x[i])) {
          for (int64_t d = 0; d < nd; ++d) *o++ = pos[d];
        }
        for (int64_t d = nd - 1; d >= 0 && ++pos[d] == sizes[d]; --d) pos[d] = 0;
      }
    };
    count_then_write(input->numel(), count, write, [&](int64_t total) {
      out = empty(DimVector{total, nd}, ScalarType::Int64, input->device());
    });
  });
  return out;
}

void masked_fill_kernel(const Tensor& dst, const Tensor& mask, const Scalar& value) {
  Tensor v = scalar_tensor(value, dst->dtype());
  Tensor ops[] = {dst, mask};
  auto it = TensorIterator::build(Span<Tensor>(ops, 2));
  visit_itemsize(dst->itemsize(), [&](auto tag) {
    using W = typename decltype(tag)::type;
    const W fill = *reinterpret_cast<const W*>(v->data());
    it.for_each([&](char** d, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        if (*reinterpret_cast<const bool*>(d[1] + i * s[1]))
          *reinterpret_cast<W*>(d[0] + i * s[0]) = fill;
    });
  });
}

// Calls f(dst_ptr, mask_ptr) for every element in row-major order.
template <class F>
void walk_row_major(const Tensor& dst, const Tensor& mask, const F& f) {
  const int64_t nd = dst->dim();
  IntList sizes = dst->sizes();
  const int64_t isz = static_cast<int64_t>(dst->itemsize());
  DimVector pos(static_cast<size_t>(nd));
  for (int64_t i = 0, n = dst->numel(); i < n; ++i) {
    char* p = dst->data();
    const char* m = mask->data();
    for (int64_t d = 0; d < nd; ++d) {
      p += pos[d] * dst->strides()[d] * isz;
      m += pos[d] * mask->strides()[d];
    }
    f(p, m);
    for (int64_t d = nd - 1; d >= 0 && ++pos[d] == sizes[d]; --d) pos[d] = 0;
  }
}

void masked_scatter_kernel(const Tensor& dst, const Tensor& mask, const Tensor& source) {
  int64_t need = 0;
  walk_row_major(dst, mask, [&](char*, const char* m) { need += *m ? 1 : 0; });
  FLB_CHECK(need <= source->numel(), "masked_scatter: expected source to have at least ", need,
            " elements (the number of True entries in mask), but it has ", source->numel());
  visit_itemsize(dst->itemsize(), [&](auto tag) {
    using W = typename decltype(tag)::type;
    const W* src = reinterpret_cast<const W*>(source->data());
    walk_row_major(dst, mask, [&](char* p, const char* m) {
      if (*m) *reinterpret_cast<W*>(p) = *src++;
    });
  });
}

}  // namespace

FLB_REGISTER_KERNEL(masked_select, kCPU, masked_select_kernel);
FLB_REGISTER_KERNEL(nonzero, kCPU, nonzero_kernel);
FLB_REGISTER_KERNEL(masked_fill, kCPU, masked_fill_kernel);
FLB_REGISTER_KERNEL(masked_scatter, kCPU, masked_scatter_kernel);

}  // namespace flambeau
