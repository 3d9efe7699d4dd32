// CPU kernels of cumulative scans (cumsum, cumprod) along one dim. Every line
// along the dim is independent: the iterator walks the other dims (in memory
// order, in parallel) and each run scans its lines side by side, so a scan
// along an outer dim still reads rows contiguously.
#include <vector>

#include "core/scratch.h"
#include "cpu/tensor_iterator.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/reduce_util.h"

namespace flambeau {

namespace {

template <class T>
using scan_acc_t = std::conditional_t<is_complex_t<T>::value, c128,
                                      std::conditional_t<std::is_integral_v<T>, int64_t, double>>;

// out and in have the same shape and dtype; dim is wrapped; in->dim() > 0.
template <bool IsSum>
void scan_kernel(const Tensor& out, const Tensor& in, int64_t dim) {
  if (in->numel() == 0) return;
  const int64_t len = in->sizes()[dim];
  DimVector shape = in->sizes();
  shape[dim] = 1;
  Tensor ops[] = {make_view(out, shape, out->strides(), out->offset()),
                  make_view(in, shape, in->strides(), in->offset())};
  auto it = TensorIterator::build(Span<Tensor>(ops, 2));
  const int64_t so = out->strides()[dim] * static_cast<int64_t>(out->itemsize());
  const int64_t si = in->strides()[dim] * static_cast<int64_t>(in->itemsize());
  visit_dtype<kAllTypes>(in->dtype(), IsSum ? "cumsum" : "cumprod", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = scan_acc_t<T>;
    it.for_each(
        [&](char** d, const int64_t* s, int64_t n) {
          Scratch<Acc> acc(static_cast<size_t>(n), Acc(IsSum ? 0 : 1));
          for (int64_t k = 0; k < len; ++k) {
            char* o = d[0] + k * so;
            const char* x = d[1] + k * si;
            for (int64_t i = 0; i < n; ++i) {
              Acc v = convert<Acc>(*reinterpret_cast<const T*>(x + i * s[1]));
              acc[i] = IsSum ? acc[i] + v : acc[i] * v;
              *reinterpret_cast<T*>(o + i * s[0]) = convert<T>(acc[i]);
            }
          }
        },
        std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, len)));
  });
}

}  // namespace

FLB_REGISTER_KERNEL(cumsum, kCPU, scan_kernel<true>);
FLB_REGISTER_KERNEL(cumprod, kCPU, scan_kernel<false>);

}  // namespace flambeau
