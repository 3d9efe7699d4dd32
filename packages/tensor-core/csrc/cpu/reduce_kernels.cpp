// CPU kernels of reductions, on the engine in cpu/reduce.h.
#include "cpu/reduce.h"
#include "dispatch/dispatcher.h"

namespace flambeau {

namespace {

// Accumulator type of sums: double for real floats, complex<double>, int64.
template <class T>
using sum_acc_t = std::conditional_t<
    is_complex_t<T>::value, c128,
    std::conditional_t<std::is_integral_v<T>, int64_t, double>>;

void sum_kernel(const Tensor& out, const Tensor& in, IntList, Span<Scalar>) {
  visit_dtype<kAllTypes>(in->dtype(), "sum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = sum_acc_t<T>;
    Tensor acc = empty(out->sizes(), scalar_type_of<Acc>(), out->device());
    Acc* a = acc->data_as<Acc>();
    for (int64_t i = 0; i < acc->numel(); ++i) a[i] = Acc(0);
    reduce_into<T, Acc>(
        acc, in, Acc(0), [](Acc x, T v) { return x + convert<Acc>(v); },
        [](Acc x, Acc y) { return x + y; });
    copy_into(out, acc);
  });
}

}  // namespace

FLB_REGISTER_KERNEL("sum", kCPU, sum_kernel);

}  // namespace flambeau
