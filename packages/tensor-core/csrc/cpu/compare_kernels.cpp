// CPU kernels of comparisons, value tests (isnan, isclose, ...) and where.
#include <cmath>

#include "cpu/pointwise_loops.h"
#include "generated/kernels.h"

namespace flambeau {

namespace {

constexpr uint32_t kOrdered = kRealTypes | kBoolTypes;

#define FLB_COMPARE(NAME, MASK, EXPR)                                    \
  void NAME##_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) { \
    binary_op<MASK, OutKind::Bool>(out, in, #NAME, [](auto tag) {        \
      using C = typename decltype(tag)::type;                            \
      return [](C a, C b) -> bool { return EXPR; };                      \
    });                                                                  \
  }                                                                      \
  FLB_REGISTER_KERNEL(NAME, kCPU, NAME##_kernel);

FLB_COMPARE(eq, kAllTypes, a == b)
FLB_COMPARE(ne, kAllTypes, a != b)
FLB_COMPARE(lt, kOrdered, a < b)
FLB_COMPARE(le, kOrdered, a <= b)
FLB_COMPARE(gt, kOrdered, a > b)
FLB_COMPARE(ge, kOrdered, a >= b)

template <class C>
bool is_nan(C x) {
  if constexpr (is_complex_t<C>::value)
    return x.real() != x.real() || x.imag() != x.imag();
  else if constexpr (std::is_floating_point_v<C>)
    return x != x;
  else
    return false;
}

// args: rtol, atol, equal_nan.
void isclose_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar> args) {
  const double rtol = args[0].to_double(), atol = args[1].to_double();
  const bool equal_nan = args[2].to<bool>();
  binary_op<kAllTypes, OutKind::Bool>(out, in, "isclose", [&](auto tag) {
    using C = typename decltype(tag)::type;
    return [rtol, atol, equal_nan](C a, C b) -> bool {
      if (a == b) return true;
      if constexpr (std::is_same_v<C, bool>) {
        return false;
      } else if constexpr (std::is_integral_v<C>) {
        double err = std::fabs(static_cast<double>(a) - static_cast<double>(b));
        return err <= atol + std::fabs(rtol * static_cast<double>(b));
      } else {
        if (is_nan(a) || is_nan(b)) return equal_nan && is_nan(a) && is_nan(b);
        using R = typename real_of<C>::type;
        R err = std::abs(a - b);
        R allowed = static_cast<R>(atol) + std::abs(static_cast<R>(rtol) * std::abs(b));
        return std::isfinite(err) && err <= allowed;
      }
    };
  });
}

#define FLB_TEST(NAME, MASK, REAL, CPLX)                                 \
  void NAME##_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) { \
    unary_op<MASK, OutKind::Bool>(out, in[0], #NAME, [](auto tag) {      \
      using C = typename decltype(tag)::type;                            \
      if constexpr (is_complex_t<C>::value) {                            \
        return [](C x) -> bool { return CPLX; };                         \
      } else if constexpr (std::is_floating_point_v<C>) {                \
        return [](C x) -> bool { return REAL; };                         \
      } else {                                                           \
        return [](C x) -> bool { return NAME##_int; };                   \
      }                                                                  \
    });                                                                  \
  }                                                                      \
  FLB_REGISTER_KERNEL(NAME, kCPU, NAME##_kernel);

// Integers are never NaN or infinite.
constexpr bool isnan_int = false, isinf_int = false, isposinf_int = false, isneginf_int = false,
               isfinite_int = true, isreal_int = true;
FLB_TEST(isnan, kAllTypes, x != x, is_nan(x))
FLB_TEST(isinf, kAllTypes, std::isinf(x), std::isinf(x.real()) || std::isinf(x.imag()))
FLB_TEST(isposinf, kOrdered, x == std::numeric_limits<C>::infinity(), false)
FLB_TEST(isneginf, kOrdered, x == -std::numeric_limits<C>::infinity(), false)
FLB_TEST(isfinite, kAllTypes, std::isfinite(x), std::isfinite(x.real()) && std::isfinite(x.imag()))
FLB_TEST(isreal, kAllTypes, true, x.imag() == 0)

// out = cond ? a : b, with cond bool and a, b already of out's type.
void where_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  Tensor ops[] = {out, in[0], in[1], in[2]};
  auto it = TensorIterator::build(Span<Tensor>(ops, 4));
  visit_dtype<kAllTypes>(out->dtype(), "where", [&](auto tag) {
    using T = typename decltype(tag)::type;
    it.for_each([](char** d, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(T) && s[1] == 1 && s[2] == sizeof(T) && s[3] == sizeof(T)) {
        T* __restrict__ o = reinterpret_cast<T*>(d[0]);
        const bool* c = reinterpret_cast<const bool*>(d[1]);
        const T* a = reinterpret_cast<const T*>(d[2]);
        const T* b = reinterpret_cast<const T*>(d[3]);
        for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? a[i] : b[i];
        return;
      }
      for (int64_t i = 0; i < n; ++i) {
        bool c = *reinterpret_cast<const bool*>(d[1] + i * s[1]);
        *reinterpret_cast<T*>(d[0] + i * s[0]) =
            *reinterpret_cast<const T*>(d[c ? 2 : 3] + i * s[c ? 2 : 3]);
      }
    });
  });
}

}  // namespace

FLB_REGISTER_KERNEL(isclose, kCPU, isclose_kernel);
FLB_REGISTER_KERNEL(where, kCPU, where_kernel);

}  // namespace flambeau
