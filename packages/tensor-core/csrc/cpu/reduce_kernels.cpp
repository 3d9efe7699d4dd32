// CPU kernels of sum-like reductions (sum, mean, prod, nansum, nanmean,
// count_nonzero, all, any, norm), on the engine in cpu/reduce.h.
#include <cmath>
#include <limits>

#include "cpu/reduce.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"

namespace flambeau {

Tensor positions_along(const Tensor& in, int64_t dim) {
  const int64_t n = in->sizes()[dim];
  Tensor pos = empty({n}, ScalarType::Int64);
  int64_t* p = pos->data_as<int64_t>();
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  DimVector strides(in->dim(), 0);
  strides[dim] = 1;
  return make_view(pos, in->sizes(), strides, 0);
}

namespace {

// Accumulator type of sums: double for real floats, complex<double>, int64.
template <class T>
using sum_acc_t = std::conditional_t<is_complex_t<T>::value, c128,
                                     std::conditional_t<std::is_integral_v<T>, int64_t, double>>;

template <class T>
bool is_nan(const T& v) {
  if constexpr (std::is_integral_v<T>) {
    return false;
  } else {
    auto c = static_cast<compute_t<T>>(v);
    return c != c;
  }
}

// Sum-shaped reductions: `out` has in's dtype; f(acc, count) finishes.
template <uint32_t Mask, class Finish>
void sum_like(const Tensor& out, const Tensor& in, IntList dims, const char* name, bool skip_nan,
              const Finish& fin) {
  const double count = static_cast<double>(reduced_count(in, dims));
  visit_dtype<Mask>(in->dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = sum_acc_t<T>;
    AccBuffer<Acc> buf(out->sizes(), Acc(0));
    auto add = [](Acc x, Acc y) { return x + y; };
    if (skip_nan) {
      reduce_into<T, Acc>(
          buf, in, [](Acc x, T v) { return is_nan(v) ? x : x + convert<Acc>(v); }, add);
    } else if constexpr (std::is_same_v<T, float>) {
      reduce_into<T, Acc>(buf, in, SumF32{}, add);
    } else {
      reduce_into<T, Acc>(buf, in, [](Acc x, T v) { return x + convert<Acc>(v); }, add);
    }
    finish<T>(out, buf, [&](Acc a) { return convert<T>(fin(a, count)); });
  });
}

void sum_kernel(const Tensor& out, const Tensor& in, IntList dims, Span<Scalar>) {
  sum_like<kAllTypes>(out, in, dims, "sum", false, [](auto a, double) { return a; });
}

void nansum_kernel(const Tensor& out, const Tensor& in, IntList dims, Span<Scalar>) {
  sum_like<kRealTypes>(out, in, dims, "nansum", true, [](auto a, double) { return a; });
}

void mean_kernel(const Tensor& out, const Tensor& in, IntList dims, Span<Scalar>) {
  sum_like<kFloatTypes | kComplexTypes>(out, in, dims, "mean", false,
                                        [](auto a, double n) { return a / n; });
}

void prod_kernel(const Tensor& out, const Tensor& in, IntList dims, Span<Scalar>) {
  visit_dtype<kAllTypes>(in->dtype(), "prod", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = sum_acc_t<T>;
    AccBuffer<Acc> buf(out->sizes(), Acc(1));
    auto mul = [](Acc x, Acc y) { return x * y; };
    reduce_into<T, Acc>(buf, in, [](Acc x, T v) { return x * convert<Acc>(v); }, mul);
    finish<T>(out, buf, [](Acc a) { return convert<T>(a); });
  });
}

struct SumCount {
  double sum;
  int64_t n;
};

void nanmean_kernel(const Tensor& out, const Tensor& in, IntList dims, Span<Scalar>) {
  visit_dtype<kFloatTypes>(in->dtype(), "nanmean", [&](auto tag) {
    using T = typename decltype(tag)::type;
    AccBuffer<SumCount> buf(out->sizes(), SumCount{0.0, 0});
    reduce_into<T, SumCount>(
        buf, in,
        [](SumCount a, T v) {
          double d = static_cast<double>(static_cast<compute_t<T>>(v));
          return d != d ? a : SumCount{a.sum + d, a.n + 1};
        },
        [](SumCount a, SumCount b) { return SumCount{a.sum + b.sum, a.n + b.n}; });
    finish<T>(out, buf, [](SumCount a) { return convert<T>(a.sum / static_cast<double>(a.n)); });
  });
}

void count_nonzero_kernel(const Tensor& out, const Tensor& in, IntList, Span<Scalar>) {
  visit_dtype<kAllTypes>(in->dtype(), "count_nonzero", [&](auto tag) {
    using T = typename decltype(tag)::type;
    AccBuffer<int64_t> buf(out->sizes(), 0);
    reduce_into<T, int64_t>(
        buf, in, [](int64_t a, T v) { return a + (convert<bool>(v) ? 1 : 0); },
        [](int64_t a, int64_t b) { return a + b; });
    finish<int64_t>(out, buf, [](int64_t a) { return a; });
  });
}

// all / any: `out` is bool, or uint8 for uint8 input (as in PyTorch).
template <bool IsAll>
void all_any_kernel(const Tensor& out, const Tensor& in, IntList, Span<Scalar>) {
  const char* name = IsAll ? "all" : "any";
  visit_dtype<kAllTypes>(in->dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    AccBuffer<uint8_t> buf(out->sizes(), IsAll ? 1 : 0);
    auto merge = [](uint8_t a, uint8_t b) -> uint8_t { return IsAll ? (a & b) : (a | b); };
    reduce_into<T, uint8_t>(
        buf, in,
        [](uint8_t a, T v) -> uint8_t {
          uint8_t b = convert<bool>(v) ? 1 : 0;
          return IsAll ? (a & b) : (a | b);
        },
        merge);
    if (out->dtype() == ScalarType::Bool) {
      finish<bool>(out, buf, [](uint8_t a) { return a != 0; });
    } else {
      finish<uint8_t>(out, buf, [](uint8_t a) { return a; });
    }
  });
}

// Vector norms; args: p (inf / -inf / 0 / 1 / 2 / other). `in` is float or
// complex; `out` has the real type.
void norm_kernel(const Tensor& out, const Tensor& in, IntList, Span<Scalar> args) {
  const double p = args[0].to_double();
  visit_dtype<kFloatTypes | kComplexTypes>(in->dtype(), "norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = real_of_t<T>;
    auto mag = [](T v) -> double {
      if constexpr (is_complex_t<T>::value)
        return std::abs(c128(v.real(), v.imag()));
      else
        return std::fabs(static_cast<double>(static_cast<compute_t<T>>(v)));
    };
    auto sq = [](T v) -> double {
      if constexpr (is_complex_t<T>::value)
        return std::norm(c128(v.real(), v.imag()));
      else {
        double d = static_cast<double>(static_cast<compute_t<T>>(v));
        return d * d;
      }
    };
    auto add = [](double a, double b) { return a + b; };
    const double inf = std::numeric_limits<double>::infinity();
    if (std::isinf(p)) {
      // max / min of |x|; NaN propagates.
      const bool hi = p > 0;
      AccBuffer<double> buf(out->sizes(), hi ? 0.0 : inf);
      auto pick = [hi](double a, double b) {
        if (a != a || b != b) return a != a ? a : b;
        return hi ? (b > a ? b : a) : (b < a ? b : a);
      };
      reduce_into<T, double>(buf, in, [&](double a, T v) { return pick(a, mag(v)); }, pick);
      finish<R>(out, buf, [](double a) { return convert<R>(a); });
      return;
    }
    AccBuffer<double> buf(out->sizes(), 0.0);
    if (p == 2) {
      reduce_into<T, double>(buf, in, [&](double a, T v) { return a + sq(v); }, add);
      finish<R>(out, buf, [](double a) { return convert<R>(std::sqrt(a)); });
    } else if (p == 1) {
      reduce_into<T, double>(buf, in, [&](double a, T v) { return a + mag(v); }, add);
      finish<R>(out, buf, [](double a) { return convert<R>(a); });
    } else if (p == 0) {
      reduce_into<T, double>(
          buf, in, [&](double a, T v) { return a + (mag(v) != 0 ? 1.0 : 0.0); }, add);
      finish<R>(out, buf, [](double a) { return convert<R>(a); });
    } else {
      reduce_into<T, double>(buf, in, [&](double a, T v) { return a + std::pow(mag(v), p); }, add);
      finish<R>(out, buf, [p](double a) { return convert<R>(std::pow(a, 1.0 / p)); });
    }
  });
}

}  // namespace

FLB_REGISTER_KERNEL(sum, kCPU, sum_kernel);
FLB_REGISTER_KERNEL(nansum, kCPU, nansum_kernel);
FLB_REGISTER_KERNEL(mean, kCPU, mean_kernel);
FLB_REGISTER_KERNEL(prod, kCPU, prod_kernel);
FLB_REGISTER_KERNEL(nanmean, kCPU, nanmean_kernel);
FLB_REGISTER_KERNEL(count_nonzero, kCPU, count_nonzero_kernel);
FLB_REGISTER_KERNEL(all, kCPU, all_any_kernel<true>);
FLB_REGISTER_KERNEL(any, kCPU, all_any_kernel<false>);
FLB_REGISTER_KERNEL(norm, kCPU, norm_kernel);

}  // namespace flambeau
