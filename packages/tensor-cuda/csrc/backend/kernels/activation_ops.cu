// The pointwise activations, their backwards (tensors [out, grad_output, self]) and
// logit, as the CPU kernels compute them (cpu/nn_activation_kernels.cpp,
// cpu/unary_float_kernels.cpp): on the floating dtypes, 16-bit floats computing in
// float; threshold and threshold_backward on the integer dtypes too. Scalars are the
// operator's numeric options in schema order, converted to the compute type once.
#include <type_traits>

#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"

namespace flambeau::cuda::kernels {

namespace {

constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kGeluC = 0.044715;

// log1p(exp(x)) without overflow.
template <class A>
__device__ inline A softplus1(A x) {
  return x > A(0) ? x + log1p(exp(-x)) : log1p(exp(x));
}
template <class A>
__device__ inline A sigmoid_of(A x) {
  return A(1) / (A(1) + exp(-x));
}

template <class A>
struct Activation {
  ActivationOp op;
  A s0, s1, s2;  // the options, in the compute type
  bool flag;     // gelu's approximate='tanh', elu_backward's is_result, logit's clamp

  // The forward functions of x.
  __device__ A operator()(A x) const {
    if constexpr (!std::is_floating_point_v<A>) {
      return x <= s0 ? s1 : x;  // threshold, the one integer activation
    } else {
      switch (op) {
        case ActivationOp::kGelu:
          if (flag) {
            const A u = A(kSqrt2OverPi) * (x + A(kGeluC) * x * x * x);
            return A(0.5) * x * (A(1) + tanh(u));
          }
          return A(0.5) * x * (A(1) + erf(x / A(kSqrt2)));
        case ActivationOp::kSilu:
          return x / (A(1) + exp(-x));
        case ActivationOp::kMish:
          return x * tanh(softplus1(x));
        case ActivationOp::kElu:  // alpha, scale, input_scale
          return x > A(0) ? s1 * x : s1 * s0 * expm1(x * s2);
        case ActivationOp::kLeakyRelu:
          return x > A(0) ? x : x * s0;
        case ActivationOp::kSoftplus:  // beta, threshold
          return x * s0 > s1 ? x : log1p(exp(x * s0)) / s0;
        case ActivationOp::kHardtanh:
          return x < s0 ? s0 : (x > s1 ? s1 : x);
        case ActivationOp::kHardswish: {
          A r = x + A(3);
          r = r < A(0) ? A(0) : (r > A(6) ? A(6) : r);
          return x * r / A(6);
        }
        case ActivationOp::kHardsigmoid: {
          A r = x + A(3);
          r = r < A(0) ? A(0) : (r > A(6) ? A(6) : r);
          return r / A(6);
        }
        case ActivationOp::kLogSigmoid: {
          const A m = x < A(0) ? x : A(0);
          return m - log1p(exp(-fabs(x)));
        }
        case ActivationOp::kSoftshrink:
          return x > s0 ? x - s0 : (x < -s0 ? x + s0 : A(0));
        case ActivationOp::kHardshrink:
          return x >= -s0 && x <= s0 ? A(0) : x;
        case ActivationOp::kThreshold:
          return x <= s0 ? s1 : x;  // NaN stays NaN: the comparison is false
        case ActivationOp::kLogit:  // s0, s1: the clamp bounds eps, 1 - eps
          if (flag) x = x < s0 ? s0 : (x > s1 ? s1 : x);
          return log(x / (A(1) - x));
        default:
          return x;
      }
    }
  }

  // The backwards of (grad_output g, self x); elu_backward's x is the result
  // when flag (is_result) is set.
  __device__ A operator()(A g, A x) const {
    if constexpr (!std::is_floating_point_v<A>) {
      return x <= s0 ? A(0) : g;  // threshold_backward
    } else {
      switch (op) {
        case ActivationOp::kGeluBackward: {
          if (flag) {
            const A u = A(kSqrt2OverPi) * (x + A(kGeluC) * x * x * x);
            const A t = tanh(u);
            const A du = A(kSqrt2OverPi) * (A(1) + A(3 * kGeluC) * x * x);
            return g * (A(0.5) * (A(1) + t) + A(0.5) * x * (A(1) - t * t) * du);
          }
          const A cdf = A(0.5) * (A(1) + erf(x / A(kSqrt2)));
          const A pdf = A(kInvSqrt2Pi) * exp(A(-0.5) * x * x);
          return g * (cdf + x * pdf);
        }
        case ActivationOp::kSiluBackward: {
          const A s = sigmoid_of(x);
          return g * s * (A(1) + x * (A(1) - s));
        }
        case ActivationOp::kMishBackward: {
          const A t = tanh(softplus1(x));
          return g * (t + x * sigmoid_of(x) * (A(1) - t * t));
        }
        case ActivationOp::kEluBackward:  // alpha, scale, input_scale
          if (x > A(0)) return g * s1;
          return flag ? g * s2 * (x + s0 * s1) : g * s2 * s1 * s0 * exp(x * s2);
        case ActivationOp::kLeakyReluBackward:
          return x > A(0) ? g : g * s0;
        case ActivationOp::kSoftplusBackward: {
          const A z = exp(x * s0);
          return x * s0 > s1 ? g : g * z / (z + A(1));
        }
        case ActivationOp::kHardtanhBackward:
          return x <= s0 || x >= s1 ? A(0) : g;
        case ActivationOp::kHardswishBackward:
          if (x < A(-3)) return A(0);
          if (x <= A(3)) return g * (x / A(3) + A(0.5));
          return g;
        case ActivationOp::kHardsigmoidBackward:
          return x > A(-3) && x < A(3) ? g / A(6) : A(0);
        case ActivationOp::kLogSigmoidBackward:
          return g * sigmoid_of(-x);
        case ActivationOp::kSoftshrinkBackward:
        case ActivationOp::kHardshrinkBackward:
          return x >= -s0 && x <= s0 ? A(0) : g;
        case ActivationOp::kThresholdBackward:
          return x <= s0 ? A(0) : g;
        default:
          return g;
      }
    }
  }
};

bool is_backward(ActivationOp op) {
  switch (op) {
    case ActivationOp::kGeluBackward:
    case ActivationOp::kSiluBackward:
    case ActivationOp::kMishBackward:
    case ActivationOp::kEluBackward:
    case ActivationOp::kLeakyReluBackward:
    case ActivationOp::kSoftplusBackward:
    case ActivationOp::kHardtanhBackward:
    case ActivationOp::kHardswishBackward:
    case ActivationOp::kHardsigmoidBackward:
    case ActivationOp::kLogSigmoidBackward:
    case ActivationOp::kSoftshrinkBackward:
    case ActivationOp::kHardshrinkBackward:
    case ActivationOp::kThresholdBackward:
      return true;
    default:
      return false;
  }
}

double scalar_arg(const flb_kernel_call* c, int i, double fallback) {
  if (c->n_scalars <= i) return fallback;
  const flb_scalar& s = c->scalars[i];
  return s.kind == FLB_SCALAR_FLOAT || s.kind == FLB_SCALAR_COMPLEX ? s.real
                                                                    : static_cast<double>(s.i);
}

template <class A>
Activation<A> make_activation(ActivationOp op, const flb_kernel_call* c) {
  Activation<A> f{op, static_cast<A>(scalar_arg(c, 0, 0)), static_cast<A>(scalar_arg(c, 1, 0)),
                  static_cast<A>(scalar_arg(c, 2, 0)), false};
  switch (op) {
    case ActivationOp::kGelu:
    case ActivationOp::kGeluBackward:
      f.flag = scalar_arg(c, 0, 0) != 0;
      break;
    case ActivationOp::kEluBackward:
      f.flag = scalar_arg(c, 3, 0) != 0;
      break;
    case ActivationOp::kLogit: {  // eps is negative when not given: no clamp
      const double eps = scalar_arg(c, 0, -1);
      f.flag = eps >= 0;
      f.s0 = static_cast<A>(eps);
      f.s1 = static_cast<A>(1.0 - eps);
      break;
    }
    default:
      break;
  }
  return f;
}

}  // namespace

flb_status activation(void* ctx, const flb_kernel_call* c) {
  const ActivationOp op = *static_cast<const ActivationOp*>(ctx);
  const bool backward = is_backward(op);
  if (c->n_tensors != (backward ? 3 : 2) || !all_dtype(c, c->tensors[0].dtype))
    return unsupported_dtypes(c);
  const bool integers_too =
      op == ActivationOp::kThreshold || op == ActivationOp::kThresholdBackward;
  flb_status status = FLB_OK;
  const bool known = dispatch(c->tensors[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    if constexpr (std::is_same_v<T, bool>) {
      status = unsupported_dtypes(c);
    } else {
      if (!std::is_floating_point_v<A> && !integers_too) {
        status = unsupported_dtypes(c);
        return;
      }
      const Activation<A> f = make_activation<A>(op, c);
      status = backward ? launch_elementwise<T, 2>(c, f) : launch_elementwise<T, 1>(c, f);
    }
  });
  return known ? status : unsupported_dtypes(c);
}

}  // namespace flambeau::cuda::kernels
