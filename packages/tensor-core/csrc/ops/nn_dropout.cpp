// Dropout frontends. Keep masks are Bernoulli(1 - p) draws from the default
// generator through bernoulli_ (Philox: the same seed gives the same mask
// whatever the thread count); the rest is pointwise arithmetic.
#include <cmath>

#include "generated/ops_nn_activation.h"
#include "generated/ops_pointwise.h"
#include "generated/ops_random.h"
#include "generated/ops_tensor.h"

namespace flambeau::ops {

namespace {

void check_p(double p, const char* name) {
  FLB_CHECK(p >= 0 && p <= 1, name, ": dropout probability has to be between 0 and 1, but got ", p);
}

void check_float(const Tensor& input, const char* name) {
  FLB_CHECK(is_floating(input->dtype()), name, ": expected a floating point input, got ",
            dtype_name(input->dtype()));
}

// A 0/1 tensor of `sizes` in `dtype`: 1 with probability 1 - p.
Tensor keep_mask(IntList sizes, double p, ScalarType dtype, Device device) {
  Tensor m = empty(sizes, dtype, device);
  bernoulli_(m, 1.0 - p, &default_generator());
  return m;
}

Tensor finish(const Tensor& result, const OutArg& out) {
  if (!out.inplace) return result;
  copy_into(out.tensor, result);
  return out.tensor;
}

// input * noise * 1/(1-p) with noise drawn per element (feature=false) or per
// (batch, channel) (feature=true).
Tensor scaled_drop(const Tensor& input, double p, bool feature, const char* name) {
  check_float(input, name);
  if (p == 1) return mul(input, zeros({}, input->dtype(), input->device(), false), OutArg::none());
  DimVector shape(input->sizes());
  if (feature) {
    FLB_CHECK(input->dim() >= 2, name, ": Feature dropout requires at least 2 dimensions in the ",
              "input, got shape ", shape_str(input->sizes()));
    for (int64_t i = 2; i < input->dim(); ++i) shape[i] = 1;
  }
  Tensor noise = keep_mask(shape, p, input->dtype(), input->device());
  Tensor scale = scalar_tensor(Scalar(1.0 / (1.0 - p)), input->dtype());
  return mul(mul(input, noise, OutArg::none()), scale, OutArg::none());
}

}  // namespace

std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p,
                                          std::optional<bool> train) {
  check_p(p, "native_dropout");
  check_float(input, "native_dropout");
  if (train.has_value() && !*train) {
    Tensor ones_mask = empty(input->sizes(), ScalarType::Bool, input->device());
    fill_(ones_mask, Scalar(true));
    return {contiguous_copy(input), ones_mask};
  }
  Tensor noise = keep_mask(input->sizes(), p, input->dtype(), input->device());
  Tensor mask = to_dtype(noise, ScalarType::Bool);
  Tensor out = p == 1 ? mul(input, noise, OutArg::none())
                      : mul(mul(input, noise, OutArg::none()),
                            scalar_tensor(Scalar(1.0 / (1.0 - p)), input->dtype()), OutArg::none());
  return {out, mask};
}

Tensor native_dropout_backward(const Tensor& grad_output, const Tensor& mask, double scale) {
  FLB_CHECK(mask->dtype() == ScalarType::Bool,
            "native_dropout_backward: Mask should be Bool Scalar Type, got ",
            dtype_name(mask->dtype()));
  Tensor m = to_dtype(mask, grad_output->dtype());
  return mul(mul(grad_output, m, OutArg::none()),
             scalar_tensor(Scalar(scale), grad_output->dtype()), OutArg::none());
}

Tensor dropout(const Tensor& input, double p, bool train, const OutArg& out) {
  check_p(p, "dropout");
  if (!train || p == 0 || input->numel() == 0) return out.inplace ? out.tensor : input;
  return finish(scaled_drop(input, p, false, "dropout"), out);
}

Tensor feature_dropout(const Tensor& input, double p, bool train, const OutArg& out) {
  check_p(p, "feature_dropout");
  if (!train || p == 0 || input->numel() == 0) return out.inplace ? out.tensor : input;
  return finish(scaled_drop(input, p, true, "feature_dropout"), out);
}

Tensor alpha_dropout(const Tensor& input, double p, bool train, const OutArg& out) {
  check_p(p, "alpha_dropout");
  if (!train || p == 0 || input->numel() == 0) return out.inplace ? out.tensor : input;
  check_float(input, "alpha_dropout");
  if (p == 1) {
    return finish(mul(input, zeros({}, input->dtype(), input->device(), false), OutArg::none()),
                  out);
  }
  // Dropped elements take SELU's negative saturation -alpha', then a * x + b
  // restores zero mean and unit variance (Klambauer et al., 2017).
  constexpr double alpha = 1.7580993408473766;
  const double a = 1.0 / std::sqrt((alpha * alpha * p + 1) * (1 - p));
  const ScalarType t = input->dtype();
  Tensor noise = keep_mask(input->sizes(), p, t, input->device());
  // input * noise * a + (noise - 1) * alpha * a + alpha * a * p
  Tensor kept = mul(mul(input, noise, OutArg::none()), scalar_tensor(Scalar(a), t), OutArg::none());
  Tensor b = add(mul(sub(noise, scalar_tensor(Scalar(1.0), t), Scalar(1), OutArg::none()),
                     scalar_tensor(Scalar(alpha * a), t), OutArg::none()),
                 scalar_tensor(Scalar(alpha * a * p), t), Scalar(1), OutArg::none());
  return finish(add(kept, b, Scalar(1), OutArg::none()), out);
}

}  // namespace flambeau::ops
