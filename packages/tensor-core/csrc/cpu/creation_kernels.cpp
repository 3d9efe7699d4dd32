// Range kernels: arange, linspace and logspace fill a contiguous 1-d tensor.
// Arithmetic follows PyTorch's CPU kernels (accumulate in double for floats and
// int64 for integers; linspace fills from both ends toward the middle).
#include <cmath>

#include "cpu/parallel.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"

namespace flambeau {

namespace {

constexpr uint32_t kRangeTypes = kIntTypes | kFloatTypes;
constexpr uint32_t kSpaceTypes = kIntTypes | kFloatTypes | kComplexTypes;

template <class T>
using acc_t = std::conditional_t<std::is_integral_v<T>, int64_t, double>;

void arange_kernel(const Tensor& out, const Scalar& start, const Scalar& step) {
  visit_dtype<kRangeTypes>(out->dtype(), "arange", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    const A s = start.to<A>(), st = step.to<A>();
    T* p = out->data_as<T>();
    parallel_for(0, out->numel(), kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) p[i] = convert<T>(s + st * static_cast<A>(i));
    });
  });
}

// The type linspace steps in: double for integers, the element type otherwise.
template <class T>
using step_t = std::conditional_t<std::is_integral_v<T>, double, compute_t<T>>;

template <class T, class F>
void fill_space(const Tensor& out, const Scalar& start, const Scalar& end, F&& f) {
  using S = step_t<T>;
  const int64_t steps = out->numel();
  const S a = static_cast<S>(start.to<T>()), z = static_cast<S>(end.to<T>());
  const S step = steps > 1 ? (z - a) / static_cast<S>(steps - 1) : S(0);
  const int64_t halfway = steps / 2;
  T* p = out->data_as<T>();
  if (steps == 1) {  // PyTorch fills start
    p[0] = convert<T>(f(a));
    return;
  }
  parallel_for(0, steps, kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      S v = i < halfway ? a + step * static_cast<S>(i) : z - step * static_cast<S>(steps - i - 1);
      p[i] = convert<T>(f(v));
    }
  });
}

void linspace_kernel(const Tensor& out, const Scalar& start, const Scalar& end) {
  visit_dtype<kSpaceTypes>(out->dtype(), "linspace", [&](auto tag) {
    using T = typename decltype(tag)::type;
    fill_space<T>(out, start, end, [](auto v) { return v; });
  });
}

void logspace_kernel(const Tensor& out, const Scalar& start, const Scalar& end, double base) {
  visit_dtype<kSpaceTypes>(out->dtype(), "logspace", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using S = step_t<T>;
    if constexpr (is_complex_t<S>::value) {
      fill_space<T>(out, start, end, [base](S v) { return std::pow(S(base), v); });
    } else {
      fill_space<T>(out, start, end,
                    [base](S v) { return static_cast<S>(std::pow(base, static_cast<double>(v))); });
    }
  });
}

}  // namespace

FLB_REGISTER_KERNEL(arange, kCPU, arange_kernel);
FLB_REGISTER_KERNEL(linspace, kCPU, linspace_kernel);
FLB_REGISTER_KERNEL(logspace, kCPU, logspace_kernel);

}  // namespace flambeau
