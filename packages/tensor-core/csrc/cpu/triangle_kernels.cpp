// tril/triu on the CPU: zero, in place, the elements of each matrix (last two
// dims) outside the kept triangle. Zero bits are zero in every dtype, so the
// kernel works on bytes and needs no per-dtype instantiation.
#include <cstring>

#include "cpu/parallel.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"

namespace flambeau {

namespace {

template <bool Lower>
void triangle_kernel(const Tensor& self, int64_t k) {
  const int64_t nd = self->dim();
  const int64_t rows = self->sizes()[nd - 2], cols = self->sizes()[nd - 1];
  const int64_t item = static_cast<int64_t>(self->itemsize());
  const int64_t rs = self->strides()[nd - 2] * item, cs = self->strides()[nd - 1] * item;
  const int64_t batches = self->numel() / (rows * cols);
  char* base = self->data();
  auto row_ptr = [&](int64_t flat_row) {
    int64_t b = flat_row / rows, r = flat_row % rows;
    char* p = base + r * rs;
    for (int64_t d = nd - 3; d >= 0; --d) {  // unravel the batch index
      int64_t size = self->sizes()[d];
      p += (b % size) * self->strides()[d] * item;
      b /= size;
    }
    return p;
  };
  parallel_for(0, batches * rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(cols, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t fr = begin; fr < end; ++fr) {
                   int64_t r = fr % rows;
                   // Columns [lo, hi) of this row are zeroed.
                   int64_t lo = Lower ? std::max<int64_t>(0, r + k + 1) : 0;
                   int64_t hi = Lower ? cols : std::min<int64_t>(cols, std::max<int64_t>(0, r + k));
                   if (lo >= hi) continue;
                   char* p = row_ptr(fr);
                   if (cs == item) {
                     std::memset(p + lo * item, 0, static_cast<size_t>((hi - lo) * item));
                   } else {
                     for (int64_t c = lo; c < hi; ++c)
                       std::memset(p + c * cs, 0, static_cast<size_t>(item));
                   }
                 }
               });
}

}  // namespace

FLB_REGISTER_KERNEL(tril, kCPU, triangle_kernel<true>);
FLB_REGISTER_KERNEL(triu, kCPU, triangle_kernel<false>);

}  // namespace flambeau
