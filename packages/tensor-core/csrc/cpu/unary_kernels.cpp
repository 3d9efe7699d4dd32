// CPU kernels of the non-transcendental unary operators: neg, abs, sign, sgn,
// rounding, relu, nan_to_num.
#include <cmath>
#include <limits>

#include "cpu/pointwise_loops.h"
#include "cpu/vec_math.h"
#include "generated/kernels.h"

namespace flambeau {

namespace {

template <class C>
constexpr bool is_float_v = std::is_floating_point_v<C>;

void neg_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  unary_op<kRealTypes | kComplexTypes>(out, in[0], "neg", [](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<C>) {
      return [](C x) { return C(-static_cast<std::make_unsigned_t<C>>(x)); };  // wraps
    } else {
      return [](C x) { return C(-x); };
    }
  });
}

void abs_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  unary_op<kRealTypes | kComplexTypes, OutKind::Real>(out, in[0], "abs", [](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (is_complex_t<C>::value) {
      return [](C x) { return std::abs(x); };
    } else if constexpr (std::is_unsigned_v<C>) {
      return [](C x) { return x; };
    } else if constexpr (std::is_integral_v<C>) {
      return [](C x) { return C(x < 0 ? C(-static_cast<std::make_unsigned_t<C>>(x)) : x); };
    } else {
      return [](C x) { return std::fabs(x); };
    }
  });
}

template <class C>
C sign_of(C x) {
  if constexpr (std::is_same_v<C, bool>)
    return x;
  else
    return C((C(0) < x) - (x < C(0)));
}

void sign_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  unary_op<kRealTypes | kBoolTypes>(out, in[0], "sign", [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C x) { return sign_of(x); };
  });
}

void sgn_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  unary_op<kAllTypes>(out, in[0], "sgn", [](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (is_complex_t<C>::value) {
      return [](C x) { return x == C(0) ? C(0) : x / std::abs(x); };
    } else {
      return [](C x) { return sign_of(x); };
    }
  });
}

// Rounding: the identity on integers.
#define FLB_ROUNDING(NAME, EXPR)                                         \
  void NAME##_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) { \
    unary_op<kRealTypes>(out, in[0], #NAME, [](auto tag) {               \
      using C = typename decltype(tag)::type;                            \
      if constexpr (is_float_v<C>)                                       \
        return [](C x) -> C { return EXPR; };                            \
      else                                                               \
        return [](C x) { return x; };                                    \
    });                                                                  \
  }                                                                      \
  FLB_REGISTER_KERNEL(NAME, kCPU, NAME##_kernel);

FLB_ROUNDING(floor, std::floor(x))
FLB_ROUNDING(ceil, std::ceil(x))
FLB_ROUNDING(trunc, std::trunc(x))
FLB_ROUNDING(frac, x - std::trunc(x))

// Half to even, after scaling by 10^decimals (as PyTorch and NumPy do).
void round_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar> args) {
  const int64_t decimals = args[0].to_int();
  unary_op<kRealTypes>(out, in[0], "round", [decimals](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (is_float_v<C>) {
      const bool neg = decimals < 0;
      const C scale =
          static_cast<C>(std::pow(10.0, static_cast<double>(neg ? -decimals : decimals)));
      return [neg, scale, decimals](C x) -> C {
        if (decimals == 0) return std::nearbyint(x);
        return neg ? std::nearbyint(x / scale) * scale : std::nearbyint(x * scale) / scale;
      };
    } else {
      return [](C x) { return x; };
    }
  });
}

void relu_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  unary_op<kRealTypes>(
      out, in[0], "relu",
      [](auto tag) {
        using C = typename decltype(tag)::type;
        if constexpr (is_float_v<C>)
          return [](C x) -> C { return x > 0 ? x : (x != x ? x : 0); };
        else
          return [](C x) { return C(x > 0 ? x : 0); };
      },
      vec::relu_f32, vec::relu_f64);
}

// args: nan, posinf, neginf replacements; a bool Scalar means "not given"
// (then the stored type's largest / lowest finite value).
void nan_to_num_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar> args) {
  Tensor ops[] = {out, in[0]};
  auto it = TensorIterator::build(Span<Tensor>(ops, 2));
  visit_dtype<kAllTypes>(in[0]->dtype(), "nan_to_num", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    // Complex numbers have the replacement applied to each part.
    using S = std::conditional_t<is_complex_t<T>::value, typename real_of<T>::type, T>;
    using R = compute_t<S>;
    if constexpr (is_float_v<R>) {
      const R nan = args[0].to<R>();
      const R pinf = args[1].is_bool() ? R(std::numeric_limits<S>::max()) : args[1].to<R>();
      const R ninf = args[2].is_bool() ? R(std::numeric_limits<S>::lowest()) : args[2].to<R>();
      const R inf = std::numeric_limits<R>::infinity();
      auto fix = [=](R x) -> R {
        return x != x ? nan : (x == inf ? pinf : (x == -inf ? ninf : x));
      };
      if constexpr (is_complex_t<C>::value) {
        cpu_kernel<T, T, 1>(it, [fix](C z) { return C(fix(z.real()), fix(z.imag())); });
      } else {
        cpu_kernel<T, T, 1>(it, lift<T>(fix));
      }
    } else {
      cpu_kernel<T, T, 1>(it, [](T x) { return x; });
    }
  });
}

}  // namespace

FLB_REGISTER_KERNEL(neg, kCPU, neg_kernel);
FLB_REGISTER_KERNEL(abs, kCPU, abs_kernel);
FLB_REGISTER_KERNEL(sign, kCPU, sign_kernel);
FLB_REGISTER_KERNEL(sgn, kCPU, sgn_kernel);
FLB_REGISTER_KERNEL(round, kCPU, round_kernel);
FLB_REGISTER_KERNEL(relu, kCPU, relu_kernel);
FLB_REGISTER_KERNEL(nan_to_num, kCPU, nan_to_num_kernel);

}  // namespace flambeau
