// CPU kernels of the losses: pointwise per-element losses and their gradients
// (elementwise(): inputs broadcast and cast to one float type; backward kernels
// take (grad_output, self, target) and args[last] is the reduction's scale),
// and the nll_loss gather/scatter over (N, C, D) layouts.
#include <algorithm>
#include <cmath>

#include "cpu/pointwise_loops.h"
#include "generated/kernels.h"
#include "ops/nn_kernels.h"

namespace flambeau {

namespace {

double arg(Span<Scalar> args, size_t i) { return args[i].to_double(); }

#define FLB_LOSS_KERNEL(NAME, N, ...)                                         \
  void NAME##_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar> args) { \
    nary_op<kFloatTypes, OutKind::Same, N>(out, in, #NAME, [&](auto tag) {    \
      using C = typename decltype(tag)::type;                                 \
      (void)args;                                                             \
      __VA_ARGS__                                                             \
    });                                                                       \
  }                                                                           \
  FLB_REGISTER_KERNEL(NAME, kCPU, NAME##_kernel);

FLB_LOSS_KERNEL(mse_loss, 2, { return [](C x, C t) -> C { return (x - t) * (x - t); }; })
FLB_LOSS_KERNEL(mse_loss_backward, 3, {
  const C norm = C(arg(args, 0));
  return [=](C g, C x, C t) -> C { return C(2) * norm * (x - t) * g; };
})

// smooth_l1: args beta.
FLB_LOSS_KERNEL(smooth_l1_loss, 2, {
  const C beta = C(arg(args, 0));
  return [=](C x, C t) -> C {
    C d = std::abs(x - t);
    return d < beta ? C(0.5) * d * d / beta : d - C(0.5) * beta;
  };
})
FLB_LOSS_KERNEL(smooth_l1_loss_backward, 3, {
  const C beta = C(arg(args, 0)), norm = C(arg(args, 1));
  return [=](C g, C x, C t) -> C {
    C d = x - t;
    if (d <= -beta) return -norm * g;
    if (d >= beta) return norm * g;
    return norm * d / beta * g;
  };
})

// huber: args delta.
FLB_LOSS_KERNEL(huber_loss, 2, {
  const C delta = C(arg(args, 0));
  return [=](C x, C t) -> C {
    C d = std::abs(x - t);
    return d < delta ? C(0.5) * d * d : delta * (d - C(0.5) * delta);
  };
})
FLB_LOSS_KERNEL(huber_loss_backward, 3, {
  const C delta = C(arg(args, 0)), norm = C(arg(args, 1));
  return [=](C g, C x, C t) -> C {
    C d = x - t;
    if (d <= -delta) return -norm * delta * g;
    if (d >= delta) return norm * delta * g;
    return norm * d * g;
  };
})

// Logs clamp at -100 so a 0 or 1 probability gives a finite loss (as PyTorch).
FLB_LOSS_KERNEL(binary_cross_entropy, 2, {
  return [](C x, C t) -> C {
    C lx = std::max(std::log(x), C(-100));
    C l1x = std::max(std::log1p(-x), C(-100));
    return -(t * lx + (C(1) - t) * l1x);
  };
})
FLB_LOSS_KERNEL(binary_cross_entropy_backward, 3, {
  const C norm = C(arg(args, 0));
  return
      [=](C g, C x, C t) -> C { return norm * g * (x - t) / std::max((C(1) - x) * x, C(1e-12)); };
})

// (x, t, pos_weight): (1 - t) x + (1 + (pw - 1) t) (log1p(exp(-|x|)) + max(-x, 0)).
FLB_LOSS_KERNEL(binary_cross_entropy_with_logits, 3, {
  return [](C x, C t, C pw) -> C {
    C lw = (pw - C(1)) * t + C(1);
    return (C(1) - t) * x + lw * (std::log1p(std::exp(-std::abs(x))) + std::max(-x, C(0)));
  };
})

// kl_div: args log_target.
FLB_LOSS_KERNEL(kl_div, 2, {
  const bool log_target = arg(args, 0) != 0;
  return [=](C x, C t) -> C {
    if (log_target) return std::exp(t) * (t - x);
    // target * (log(target) - input), with 0 * log(0) = 0
    return t == C(0) ? -t * x : t * (std::log(t) - x);
  };
})

#undef FLB_LOSS_KERNEL

void nll_loss_kernel(const Tensor& out, const Tensor& total_weight, const Tensor& input,
                     const Tensor& target, const Tensor& weight, int64_t N, int64_t C, int64_t D,
                     int64_t reduction, int64_t ignore_index) {
  visit_dtype<kFloatTypes>(input->dtype(), "nll_loss", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = input->data_as<const T>();
    const int64_t* tg = target->data_as<const int64_t>();
    const T* w = weight ? weight->data_as<const T>() : nullptr;
    T* o = out->data_as<T>();
    double sum = 0, tw = 0;
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t d = 0; d < D; ++d) {
        const int64_t t = tg[n * D + d];
        double loss = 0;
        if (t != ignore_index) {
          FLB_CHECK_T(IndexError, t >= 0 && t < C, "nll_loss: Target ", t, " is out of bounds (", C,
                      " classes).");
          const double wt = w ? static_cast<double>(w[t]) : 1.0;
          loss = -wt * static_cast<double>(x[(n * C + t) * D + d]);
          tw += wt;
        }
        if (reduction == 0) o[n * D + d] = static_cast<T>(loss);
        sum += loss;
      }
    }
    if (reduction != 0) o[0] = static_cast<T>(reduction == 1 ? sum / tw : sum);
    *total_weight->data_as<T>() = static_cast<T>(tw);
  });
}
FLB_REGISTER_KERNEL(nll_loss_forward, kCPU, nll_loss_kernel);

void nll_loss_backward_kernel(const Tensor& grad_input, const Tensor& grad_output,
                              const Tensor& target, const Tensor& weight, int64_t N, int64_t C,
                              int64_t D, int64_t reduction, int64_t ignore_index) {
  visit_dtype<kFloatTypes>(grad_input->dtype(), "nll_loss_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = compute_t<T>;
    T* gi = grad_input->data_as<T>();
    std::fill(gi, gi + N * C * D, T(0));
    const T* g = grad_output->data_as<const T>();
    const int64_t* tg = target->data_as<const int64_t>();
    const T* w = weight ? weight->data_as<const T>() : nullptr;
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t d = 0; d < D; ++d) {
        const int64_t t = tg[n * D + d];
        if (t == ignore_index) continue;
        FLB_CHECK_T(IndexError, t >= 0 && t < C, "nll_loss_backward: Target ", t,
                    " is out of bounds (", C, " classes).");
        const A gv = static_cast<A>(reduction == 0 ? g[n * D + d] : g[0]);
        const A wt = w ? static_cast<A>(w[t]) : A(1);
        gi[(n * C + t) * D + d] = static_cast<T>(-wt * gv);
      }
    }
  });
}
FLB_REGISTER_KERNEL(nll_loss_backward, kCPU, nll_loss_backward_kernel);

}  // namespace

}  // namespace flambeau
