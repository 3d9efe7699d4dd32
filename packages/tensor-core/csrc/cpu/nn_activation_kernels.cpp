// CPU kernels of the pointwise activations and their backward kernels. Inputs
// arrive broadcast and cast to the compute type by elementwise(); Scalar args
// are the operator's numeric options in schema order. 16-bit floats compute in
// float (lift in cpu/pointwise_loops.h).
#include <cmath>

#include "cpu/pointwise_loops.h"
#include "cpu/vec_math.h"
#include "generated/kernels.h"

namespace flambeau {

namespace {

constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kGeluC = 0.044715;

double arg(Span<Scalar> args, size_t i) { return args[i].to_double(); }

// softplus(x) = log1p(exp(x)) without overflow.
template <class C>
C softplus1(C x) {
  return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
template <class C>
C sigmoid_of(C x) {
  return C(1) / (C(1) + std::exp(-x));
}

// Defines NAME_kernel(out, in, args) for a unary activation; BODY is a lambda
// over the compute type C built from the args.
// V32/V64: contiguous float32/float64 loops from cpu/vec_math.h, or nullptr.
#define FLB_ACT_UNARY_VEC(NAME, MASK, V32, V64, ...)                          \
  void NAME##_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar> args) { \
    unary_op<MASK>(                                                           \
        out, in[0], #NAME,                                                    \
        [&](auto tag) {                                                       \
          using C = typename decltype(tag)::type;                             \
          (void)args;                                                         \
          __VA_ARGS__                                                         \
        },                                                                    \
        V32, V64);                                                            \
  }                                                                           \
  FLB_REGISTER_KERNEL(NAME, kCPU, NAME##_kernel);
#define FLB_ACT_UNARY(NAME, MASK, ...) FLB_ACT_UNARY_VEC(NAME, MASK, nullptr, nullptr, __VA_ARGS__)

// Same for backward kernels: inputs (grad_output, self).
#define FLB_ACT_BINARY(NAME, MASK, ...)                                       \
  void NAME##_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar> args) { \
    binary_op<MASK>(out, in, #NAME, [&](auto tag) {                           \
      using C = typename decltype(tag)::type;                                 \
      (void)args;                                                             \
      __VA_ARGS__                                                             \
    });                                                                       \
  }                                                                           \
  FLB_REGISTER_KERNEL(NAME, kCPU, NAME##_kernel);

// gelu: args[0] is 1 for approximate='tanh'.
FLB_ACT_UNARY_VEC(gelu, kFloatTypes, arg(args, 0) != 0 ? vec::gelu_tanh_f32 : vec::gelu_f32,
                  arg(args, 0) != 0 ? vec::gelu_tanh_f64 : vec::gelu_f64, {
                    const bool approx = arg(args, 0) != 0;
                    return [approx](C x) -> C {
                      if (approx) {
                        C u = C(kSqrt2OverPi) * (x + C(kGeluC) * x * x * x);
                        return C(0.5) * x * (C(1) + std::tanh(u));
                      }
                      return C(0.5) * x * (C(1) + std::erf(x / C(kSqrt2)));
                    };
                  })
FLB_ACT_BINARY(gelu_backward, kFloatTypes, {
  const bool approx = arg(args, 0) != 0;
  return [approx](C g, C x) -> C {
    if (approx) {
      C u = C(kSqrt2OverPi) * (x + C(kGeluC) * x * x * x);
      C t = std::tanh(u);
      C du = C(kSqrt2OverPi) * (C(1) + C(3 * kGeluC) * x * x);
      return g * (C(0.5) * (C(1) + t) + C(0.5) * x * (C(1) - t * t) * du);
    }
    C cdf = C(0.5) * (C(1) + std::erf(x / C(kSqrt2)));
    C pdf = C(kInvSqrt2Pi) * std::exp(C(-0.5) * x * x);
    return g * (cdf + x * pdf);
  };
})

FLB_ACT_UNARY_VEC(silu, kFloatTypes, vec::silu_f32, vec::silu_f64,
                  { return [](C x) -> C { return x / (C(1) + std::exp(-x)); }; })
FLB_ACT_BINARY(silu_backward, kFloatTypes, {
  return [](C g, C x) -> C {
    C s = sigmoid_of(x);
    return g * s * (C(1) + x * (C(1) - s));
  };
})

FLB_ACT_UNARY(mish, kFloatTypes, { return [](C x) -> C { return x * std::tanh(softplus1(x)); }; })
FLB_ACT_BINARY(mish_backward, kFloatTypes, {
  return [](C g, C x) -> C {
    C t = std::tanh(softplus1(x));
    return g * (t + x * sigmoid_of(x) * (C(1) - t * t));
  };
})

// elu: args alpha, scale, input_scale.
FLB_ACT_UNARY(elu, kFloatTypes, {
  const C alpha = C(arg(args, 0)), scale = C(arg(args, 1)), in_scale = C(arg(args, 2));
  return [=](C x) -> C { return x > C(0) ? scale * x : scale * alpha * std::expm1(x * in_scale); };
})
// elu_backward: args alpha, scale, input_scale, is_result; in[1] is self or result.
FLB_ACT_BINARY(elu_backward, kFloatTypes, {
  const C alpha = C(arg(args, 0)), scale = C(arg(args, 1)), in_scale = C(arg(args, 2));
  const bool is_result = arg(args, 3) != 0;
  return [=](C g, C v) -> C {
    if (v > C(0)) return g * scale;
    return is_result ? g * in_scale * (v + alpha * scale)
                     : g * in_scale * scale * alpha * std::exp(v * in_scale);
  };
})

FLB_ACT_UNARY(leaky_relu, kFloatTypes, {
  const C slope = C(arg(args, 0));
  return [=](C x) -> C { return x > C(0) ? x : x * slope; };
})
FLB_ACT_BINARY(leaky_relu_backward, kFloatTypes, {
  const C slope = C(arg(args, 0));
  return [=](C g, C x) -> C { return x > C(0) ? g : g * slope; };
})

// softplus: args beta, threshold.
FLB_ACT_UNARY(softplus, kFloatTypes, {
  const C beta = C(arg(args, 0)), thr = C(arg(args, 1));
  return [=](C x) -> C { return x * beta > thr ? x : std::log1p(std::exp(x * beta)) / beta; };
})
FLB_ACT_BINARY(softplus_backward, kFloatTypes, {
  const C beta = C(arg(args, 0)), thr = C(arg(args, 1));
  return [=](C g, C x) -> C {
    C z = std::exp(x * beta);
    return x * beta > thr ? g : g * z / (z + C(1));
  };
})

FLB_ACT_UNARY(hardtanh, kFloatTypes, {
  const C lo = C(arg(args, 0)), hi = C(arg(args, 1));
  return [=](C x) -> C { return x < lo ? lo : (x > hi ? hi : x); };
})
FLB_ACT_BINARY(hardtanh_backward, kFloatTypes, {
  const C lo = C(arg(args, 0)), hi = C(arg(args, 1));
  return [=](C g, C x) -> C { return x <= lo || x >= hi ? C(0) : g; };
})

FLB_ACT_UNARY(hardswish, kFloatTypes, {
  return [](C x) -> C {
    C r = x + C(3);
    r = r < C(0) ? C(0) : (r > C(6) ? C(6) : r);
    return x * r / C(6);
  };
})
FLB_ACT_BINARY(hardswish_backward, kFloatTypes, {
  return [](C g, C x) -> C {
    if (x < C(-3)) return C(0);
    if (x <= C(3)) return g * (x / C(3) + C(0.5));
    return g;
  };
})

FLB_ACT_UNARY(hardsigmoid, kFloatTypes, {
  return [](C x) -> C {
    C r = x + C(3);
    r = r < C(0) ? C(0) : (r > C(6) ? C(6) : r);
    return r / C(6);
  };
})
FLB_ACT_BINARY(hardsigmoid_backward, kFloatTypes,
               { return [](C g, C x) -> C { return x > C(-3) && x < C(3) ? g / C(6) : C(0); }; })

// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)).
FLB_ACT_UNARY(log_sigmoid, kFloatTypes, {
  return [](C x) -> C {
    C m = x < C(0) ? x : C(0);
    return m - std::log1p(std::exp(-std::abs(x)));
  };
})
FLB_ACT_BINARY(log_sigmoid_backward, kFloatTypes,
               { return [](C g, C x) -> C { return g * sigmoid_of(-x); }; })

FLB_ACT_UNARY(softshrink, kFloatTypes, {
  const C l = C(arg(args, 0));
  return [=](C x) -> C { return x > l ? x - l : (x < -l ? x + l : C(0)); };
})
FLB_ACT_BINARY(softshrink_backward, kFloatTypes, {
  const C l = C(arg(args, 0));
  return [=](C g, C x) -> C { return x >= -l && x <= l ? C(0) : g; };
})
FLB_ACT_UNARY(hardshrink, kFloatTypes, {
  const C l = C(arg(args, 0));
  return [=](C x) -> C { return x >= -l && x <= l ? C(0) : x; };
})
FLB_ACT_BINARY(hardshrink_backward, kFloatTypes, {
  const C l = C(arg(args, 0));
  return [=](C g, C x) -> C { return x >= -l && x <= l ? C(0) : g; };
})

// threshold: args threshold, value (NaN stays NaN: the comparison is false).
FLB_ACT_UNARY(threshold, kRealTypes, {
  const C th = static_cast<C>(arg(args, 0)), value = static_cast<C>(arg(args, 1));
  return [=](C x) -> C { return x <= th ? value : x; };
})
FLB_ACT_BINARY(threshold_backward, kRealTypes, {
  const C th = static_cast<C>(arg(args, 0));
  return [=](C g, C x) -> C { return x <= th ? C(0) : g; };
})

#undef FLB_ACT_UNARY
#undef FLB_ACT_UNARY_VEC
#undef FLB_ACT_BINARY

}  // namespace

}  // namespace flambeau
