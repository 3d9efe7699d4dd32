// Frontends of the pointwise activations and their backward kernels: argument
// checks, then elementwise() (promotion, broadcasting, out=/in-place) and the
// kernel in cpu/nn_activation_kernels.cpp. selu, celu and relu6 are elu and
// hardtanh with fixed options, as in PyTorch.
#include "generated/kernels.h"
#include "generated/ops_nn_activation.h"

namespace flambeau::ops {

namespace {

template <class K>
Tensor act(std::initializer_list<Tensor> inputs, std::initializer_list<Scalar> args,
           const OutArg& out, uint32_t dtypes = kFloatTypes) {
  const char* name = K::name;
  const auto& op = handle<K>();
  return elementwise(op, {name, Promote::Default, dtypes}, inputs, args, out);
}

Scalar gelu_mode(const std::string& approximate, const char* name) {
  FLB_CHECK(approximate == "none" || approximate == "tanh", name,
            ": approximate argument must be either none or tanh, got '", approximate, "'");
  return Scalar(approximate == "tanh" ? 1.0 : 0.0);
}

Scalar flag(bool b) { return Scalar(b ? 1.0 : 0.0); }

}  // namespace

Tensor gelu(const Tensor& input, const std::string& approximate, const OutArg& out) {
  return act<kernels::gelu>({input}, {gelu_mode(approximate, "gelu")}, out);
}
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self,
                     const std::string& approximate) {
  return act<kernels::gelu_backward>({grad_output, self}, {gelu_mode(approximate, "gelu_backward")},
                                     OutArg::none());
}

Tensor silu(const Tensor& input, const OutArg& out) { return act<kernels::silu>({input}, {}, out); }
Tensor silu_backward(const Tensor& grad_output, const Tensor& self) {
  return act<kernels::silu_backward>({grad_output, self}, {}, OutArg::none());
}

Tensor mish(const Tensor& input, const OutArg& out) { return act<kernels::mish>({input}, {}, out); }
Tensor mish_backward(const Tensor& grad_output, const Tensor& self) {
  return act<kernels::mish_backward>({grad_output, self}, {}, OutArg::none());
}

Tensor elu(const Tensor& input, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale,
           const OutArg& out) {
  return act<kernels::elu>({input}, {alpha, scale, input_scale}, out);
}
Tensor elu_backward(const Tensor& grad_output, const Scalar& alpha, const Scalar& scale,
                    const Scalar& input_scale, bool is_result, const Tensor& self_or_result) {
  FLB_CHECK(!is_result || alpha.to_double() >= 0, "elu_backward: In-place elu backward ",
            "calculation is triggered with a negative slope which is not supported. This is "
            "caused by calling in-place forward function with a negative slope, please call "
            "out-of-place version instead.");
  return act<kernels::elu_backward>({grad_output, self_or_result},
                                    {alpha, scale, input_scale, flag(is_result)}, OutArg::none());
}

Tensor selu(const Tensor& input, const OutArg& out) {
  // SELU's fixed point constants (Klambauer et al., 2017).
  return elu(input, Scalar(1.6732632423543772848170429916717),
             Scalar(1.0507009873554804934193349852946), Scalar(1.0), out);
}

Tensor celu(const Tensor& input, const Scalar& alpha, const OutArg& out) {
  FLB_CHECK(alpha.to_double() != 0, "celu: ZeroDivisionError: alpha must not be 0");
  return elu(input, alpha, Scalar(1.0), Scalar(1.0 / alpha.to_double()), out);
}

Tensor leaky_relu(const Tensor& input, const Scalar& negative_slope, const OutArg& out) {
  return act<kernels::leaky_relu>({input}, {negative_slope}, out);
}
Tensor leaky_relu_backward(const Tensor& grad_output, const Tensor& self,
                           const Scalar& negative_slope, bool self_is_result) {
  FLB_CHECK(!self_is_result || negative_slope.to_double() >= 0,
            "leaky_relu_backward: In-place leakyReLu backward calculation is triggered with a "
            "negative slope which is not supported. This is caused by calling in-place forward "
            "function with a negative slope, please call out-of-place version instead. File an "
            "issue at https://github.com/pytorch/pytorch if you do require supporting in-place "
            "leakRelu backward calculation with negative slope");
  return act<kernels::leaky_relu_backward>({grad_output, self}, {negative_slope}, OutArg::none());
}

Tensor softplus(const Tensor& input, const Scalar& beta, const Scalar& threshold,
                const OutArg& out) {
  return act<kernels::softplus>({input}, {beta, threshold}, out);
}
Tensor softplus_backward(const Tensor& grad_output, const Tensor& self, const Scalar& beta,
                         const Scalar& threshold) {
  return act<kernels::softplus_backward>({grad_output, self}, {beta, threshold}, OutArg::none());
}

Tensor hardtanh(const Tensor& input, const Scalar& min_val, const Scalar& max_val,
                const OutArg& out) {
  FLB_CHECK(min_val.to_double() <= max_val.to_double(),
            "hardtanh: min_val cannot be greater than max_val (got min_val=", min_val.to_double(),
            ", max_val=", max_val.to_double(), ")");
  return act<kernels::hardtanh>({input}, {min_val, max_val}, out);
}
Tensor hardtanh_backward(const Tensor& grad_output, const Tensor& self, const Scalar& min_val,
                         const Scalar& max_val) {
  return act<kernels::hardtanh_backward>({grad_output, self}, {min_val, max_val}, OutArg::none());
}
Tensor relu6(const Tensor& input, const OutArg& out) {
  return hardtanh(input, Scalar(0.0), Scalar(6.0), out);
}

Tensor hardswish(const Tensor& input, const OutArg& out) {
  return act<kernels::hardswish>({input}, {}, out);
}
Tensor hardswish_backward(const Tensor& grad_output, const Tensor& self) {
  return act<kernels::hardswish_backward>({grad_output, self}, {}, OutArg::none());
}
Tensor hardsigmoid(const Tensor& input, const OutArg& out) {
  return act<kernels::hardsigmoid>({input}, {}, out);
}
Tensor hardsigmoid_backward(const Tensor& grad_output, const Tensor& self) {
  return act<kernels::hardsigmoid_backward>({grad_output, self}, {}, OutArg::none());
}

Tensor log_sigmoid(const Tensor& input, const OutArg& out) {
  return act<kernels::log_sigmoid>({input}, {}, out);
}
Tensor log_sigmoid_backward(const Tensor& grad_output, const Tensor& self) {
  return act<kernels::log_sigmoid_backward>({grad_output, self}, {}, OutArg::none());
}

Tensor softshrink(const Tensor& input, const Scalar& lambd, const OutArg& out) {
  FLB_CHECK(lambd.to_double() >= 0, "softshrink: lambda must be greater or equal to 0, but found ",
            "to be ", lambd.to_double(), ".");
  return act<kernels::softshrink>({input}, {lambd}, out);
}
Tensor softshrink_backward(const Tensor& grad_output, const Tensor& self, const Scalar& lambd) {
  return act<kernels::softshrink_backward>({grad_output, self}, {lambd}, OutArg::none());
}
Tensor hardshrink(const Tensor& input, const Scalar& lambd, const OutArg& out) {
  return act<kernels::hardshrink>({input}, {lambd}, out);
}
Tensor hardshrink_backward(const Tensor& grad_out, const Tensor& self, const Scalar& lambd) {
  return act<kernels::hardshrink_backward>({grad_out, self}, {lambd}, OutArg::none());
}

Tensor threshold(const Tensor& input, const Scalar& threshold, const Scalar& value,
                 const OutArg& out) {
  return act<kernels::threshold>({input}, {threshold, value}, out, kRealTypes);
}
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  return act<kernels::threshold_backward>({grad_output, self}, {threshold}, OutArg::none(),
                                          kRealTypes);
}

}  // namespace flambeau::ops
