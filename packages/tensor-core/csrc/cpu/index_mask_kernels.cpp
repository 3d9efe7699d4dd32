// CPU kernels of the boolean-mask operators: _nonzero_count, then masked_select and
// nonzero into the output it sized (two parallel passes: count per chunk, then write
// at the chunk's prefix offset),
// masked_fill (elementwise) and masked_scatter (serial, in row-major order).
#include <functional>
#include <vector>

#include "cpu/itemsize_visit.h"
#include "cpu/tensor_iterator.h"
#include "generated/kernels.h"
#include "ops/indexing_util.h"

namespace flambeau {

namespace {

// Splits [0, n) into chunks and counts with count(lo, hi) per chunk in parallel:
// the chunks' output positions, as prefix sums (chunks + 1 of them).
struct Chunks {
  int64_t n, chunks;
  std::vector<int64_t> first;
  int64_t lo_of(int64_t c) const { return n * c / chunks; }
};

template <class Count>
Chunks count_chunks(int64_t n, const Count& count) {
  Chunks ch{n,
            std::max<int64_t>(
                1, std::min<int64_t>(get_num_threads() * 4, (n + kGrainSize - 1) / kGrainSize)),
            {}};
  ch.first.assign(static_cast<size_t>(ch.chunks) + 1, 0);
  parallel_for(0, ch.chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) ch.first[c + 1] = count(ch.lo_of(c), ch.lo_of(c + 1));
  });
  for (int64_t c = 0; c < ch.chunks; ++c) ch.first[c + 1] += ch.first[c];
  return ch;
}

// Counts per chunk, then calls write(lo, hi, first, last) with each chunk's output
// positions [first, last). The frontend sized the output by _nonzero_count: the
// counts must add up to it.
template <class Count, class Write>
void count_then_write(int64_t n, int64_t expected, const Count& count, const Write& write) {
  const Chunks ch = count_chunks(n, count);
  FLB_CHECK(ch.first.back() == expected, "internal error: ", ch.first.back(),
            " non-zero elements where the output holds ", expected);
  parallel_for(0, ch.chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c)
      write(ch.lo_of(c), ch.lo_of(c + 1), ch.first[c], ch.first[c + 1]);
  });
}

// Counts the non-zero elements of x[lo, hi).
template <class T>
int64_t count_nonzero_in(const T* x, int64_t lo, int64_t hi) {
  int64_t c = 0;
  for (int64_t i = lo; i < hi; ++i) c += convert<bool>(x[i]) ? 1 : 0;
  return c;
}

int64_t nonzero_count_kernel(const Tensor& input) {
  int64_t total = 0;
  visit_dtype<kAllTypes>(input->dtype(), "nonzero", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = input->data_as<T>();
    total = count_chunks(input->numel(), [&](int64_t lo, int64_t hi) {
              return count_nonzero_in(x, lo, hi);
            }).first.back();
  });
  return total;
}

void masked_select_kernel(const Tensor& out, const Tensor& input, const Tensor& mask) {
  const bool* m = mask->data_as<bool>();
  auto count = [&](int64_t lo, int64_t hi) { return count_nonzero_in(m, lo, hi); };
  visit_itemsize(input->itemsize(), [&](auto tag) {
    using W = typename decltype(tag)::type;
    const W* x = reinterpret_cast<const W*>(input->data());
    W* o = reinterpret_cast<W*>(out->data());
    auto write = [&](int64_t lo, int64_t hi, int64_t first, int64_t last) {
      // Branch-free: every element is written, the unselected ones overwritten
      // by the next; past the chunk's last slot writes go to a scratch slot.
      W scratch;
      int64_t j = first;
      for (int64_t i = lo; i < hi; ++i) {
        W* dst = j < last ? o + j : &scratch;
        *dst = x[i];
        j += m[i] ? 1 : 0;
      }
    };
    count_then_write(input->numel(), out->numel(), count, write);
  });
}

void nonzero_kernel(const Tensor& out, const Tensor& input) {
  const int64_t nd = input->dim();
  IntList sizes = input->sizes();
  visit_dtype<kAllTypes>(input->dtype(), "nonzero", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = input->data_as<T>();
    auto count = [&](int64_t lo, int64_t hi) { return count_nonzero_in(x, lo, hi); };
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
    count_then_write(input->numel(), out->sizes()[0], count, write);
  });
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

FLB_REGISTER_KERNEL(_nonzero_count, kCPU, nonzero_count_kernel);
FLB_REGISTER_KERNEL(masked_select, kCPU, masked_select_kernel);
FLB_REGISTER_KERNEL(nonzero, kCPU, nonzero_kernel);
FLB_REGISTER_KERNEL(masked_fill, kCPU, masked_fill_kernel);
FLB_REGISTER_KERNEL(masked_scatter, kCPU, masked_scatter_kernel);

}  // namespace flambeau
