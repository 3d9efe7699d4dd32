// Range kernels: arange, linspace and logspace fill a contiguous 1-d tensor.
// Arithmetic follows PyTorch's CPU kernels (accumulate in double for floats and
// int64 for integers; linspace fills from both ends toward the middle).
#include <cmath>
#include <type_traits>

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
      const S from_a = static_cast<S>(i), from_z = static_cast<S>(steps - i - 1);
      // Real steps are fused multiply-adds (one rounding), as PyTorch's vectorized kernel
      // computes them: a + 3 * step may differ by an ulp otherwise.
      S v;
      if constexpr (std::is_floating_point_v<S>) {
        v = i < halfway ? std::fma(step, from_a, a) : std::fma(-step, from_z, z);
      } else {
        v = i < halfway ? a + step * from_a : z - step * from_z;
      }
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

// Real logspace steps its exponent in double, except for integer outputs, which step in
// float; the difference end - start is taken in the element type first. This is
// PyTorch's arithmetic, so results agree to the bit.
template <class T>
void fill_real_logspace(const Tensor& out, const Scalar& start, const Scalar& end, double base) {
  using E = std::conditional_t<std::is_integral_v<T>, float, double>;
  const int64_t steps = out->numel();
  const T a = start.to<T>(), z = end.to<T>();
  const E b = static_cast<E>(base);
  const E ea = static_cast<E>(static_cast<compute_t<T>>(a));
  const E ez = static_cast<E>(static_cast<compute_t<T>>(z));
  const E diff = static_cast<E>(static_cast<compute_t<T>>(
      convert<T>(static_cast<compute_t<T>>(z) - static_cast<compute_t<T>>(a))));
  const E step = steps > 1 ? diff / static_cast<E>(steps - 1) : E(0);
  const int64_t halfway = steps / 2;
  T* p = out->data_as<T>();
  if (steps == 1) {  // PyTorch fills base ** start, in double
    p[0] = convert<T>(std::pow(base, start.to<double>()));
    return;
  }
  parallel_for(0, steps, kGrainSize, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const E v =
          i < halfway ? ea + step * static_cast<E>(i) : ez - step * static_cast<E>(steps - i - 1);
      p[i] = convert<T>(std::pow(b, v));
    }
  });
}

void logspace_kernel(const Tensor& out, const Scalar& start, const Scalar& end, double base) {
  visit_dtype<kSpaceTypes>(out->dtype(), "logspace", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using S = step_t<T>;
    if constexpr (is_complex_t<S>::value) {
      fill_space<T>(out, start, end, [base](S v) { return std::pow(S(base), v); });
    } else {
      fill_real_logspace<T>(out, start, end, base);
    }
  });
}

}  // namespace

FLB_REGISTER_KERNEL(arange, kCPU, arange_kernel);
FLB_REGISTER_KERNEL(linspace, kCPU, linspace_kernel);
FLB_REGISTER_KERNEL(logspace, kCPU, logspace_kernel);

}  // namespace flambeau
