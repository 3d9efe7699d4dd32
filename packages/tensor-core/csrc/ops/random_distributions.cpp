// Frontends of the samplers beyond uniform and normal: argument checks as in
// PyTorch, then the kernel registered for the tensor's device (see
// cpu/random_distributions.cpp for the stream layout).
#include <cmath>

#include "generated/kernels.h"
#include "generated/ops_random.h"
#include "generated/ops_tensor.h"
#include "ops/random_kernels.h"
#include "ops/random_support.h"

namespace flambeau {

namespace {

template <class K>
Tensor fill_with(const Tensor& self, Generator& gen, double a, double b) {
  const char* op = K::name;
  const auto& entry = handle<K>();
  self->bump_version();
  fill_contiguous(self, [&](const Tensor& t) { kernel_for(entry, t->device())(t, gen, a, b); });
  return self;
}

// PyTorch raises RuntimeError for exponential_ and cauchy_ (continuous distributions), and
// NotImplementedError (no kernel for the dtype) for log_normal_ and poisson.
void check_floating(const Tensor& self, const char* op) {
  FLB_CHECK(is_floating(self->dtype()), op, ": expected a floating point dtype, got ",
            dtype_name(self->dtype()));
}

void check_floating_kernel(const Tensor& self, const char* op) {
  FLB_CHECK_T(NotImplementedError, is_floating(self->dtype()), op, ": not implemented for dtype ",
              dtype_name(self->dtype()), " (a floating point dtype is expected)");
}

// Probabilities as a contiguous float64 (rows x categories) matrix, checked.
Tensor checked_weights(const Tensor& input, int64_t num_samples, bool replacement) {
  FLB_CHECK(is_floating(input->dtype()),
            "multinomial only supports floating-point dtypes for input, got: ",
            dtype_name(input->dtype()));
  FLB_CHECK(input->dim() == 1 || input->dim() == 2, "prob_dist must be 1 or 2 dim, got ",
            input->dim());
  FLB_CHECK(num_samples > 0, "cannot sample n_sample <= 0 samples");
  const int64_t cats = input->sizes()[input->dim() - 1];
  FLB_CHECK(cats > 0, "multinomial: the probability distribution has no categories");
  FLB_CHECK(replacement || num_samples <= cats,
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  Tensor p = ops::contiguous(to_dtype(input, ScalarType::Float64));
  const int64_t rows = input->dim() == 2 ? input->sizes()[0] : 1;
  // Read on the host (a device's values are copied); meta tensors have none to check.
  Tensor p_host = p->device().has_data() ? ops::cpu(p) : Tensor();
  const double* v = p_host ? p_host->data_as<double>() : nullptr;
  for (int64_t r = 0; v != nullptr && r < rows; ++r) {
    double total = 0;
    int64_t support = 0;
    for (int64_t c = 0; c < cats; ++c) {
      const double x = v[r * cats + c];
      FLB_CHECK(std::isfinite(x) && x >= 0,
                "probability tensor contains either `inf`, `nan` or element < 0");
      total += x;
      support += x > 0;
    }
    FLB_CHECK(total > 0, "invalid multinomial distribution (sum of probabilities <= 0)");
    FLB_CHECK(replacement || support >= num_samples,
              "invalid multinomial distribution (with replacement=False, not enough non-negative "
              "category to sample)");
  }
  return make_ref<TensorImpl>(p->storage(), DimVector{rows, cats}, DimVector{cats, 1}, p->offset(),
                              ScalarType::Float64);
}

}  // namespace

namespace ops {

Tensor exponential_(const Tensor& self, double lambd, Generator* generator) {
  check_floating(self, "exponential_");
  FLB_CHECK(lambd > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  return fill_with<kernels::exponential_>(self, *generator, lambd, 0.0);
}

Tensor geometric_(const Tensor& self, double p, Generator* generator) {
  FLB_CHECK(!is_complex(self->dtype()) && self->dtype() != ScalarType::Bool,
            "geometric_: not implemented for dtype ", dtype_name(self->dtype()));
  FLB_CHECK(p > 0.0 && p < 1.0, "geometric_ expects p to be in (0, 1), but got p=", p);
  return fill_with<kernels::geometric_>(self, *generator, p, 0.0);
}

Tensor cauchy_(const Tensor& self, double median, double sigma, Generator* generator) {
  check_floating(self, "cauchy_");
  FLB_CHECK(sigma > 0.0, "cauchy_ expects sigma > 0.0, but found sigma=", sigma);
  return fill_with<kernels::cauchy_>(self, *generator, median, sigma);
}

Tensor log_normal_(const Tensor& self, double mean, double std, Generator* generator) {
  check_floating_kernel(self, "log_normal_");
  FLB_CHECK(std > 0.0, "log_normal_ expects std > 0.0, but found std=", std);
  return fill_with<kernels::log_normal_>(self, *generator, mean, std);
}

Tensor poisson(const Tensor& input, Generator* generator) {
  check_floating_kernel(input, "poisson");
  Tensor rates = ops::contiguous(to_dtype(input, ScalarType::Float64));
  // Checked on the host (a device's values are copied); meta tensors have none to check.
  Tensor rates_host = rates->device().has_data() ? ops::cpu(rates) : Tensor();
  const double* r = rates_host ? rates_host->data_as<double>() : nullptr;
  for (int64_t i = 0; r != nullptr && i < rates->numel(); ++i)
    FLB_CHECK(r[i] >= 0.0 && std::isfinite(r[i]),
              "poisson: invalid Poisson rate, expected rate to be non-negative and finite, got ",
              r[i]);
  Tensor out = flambeau::empty(input->sizes(), input->dtype(), input->device());
  if (out->numel() == 0) return out;
  kernel<kernels::poisson>(out->device())(out, *generator, rates);
  return out;
}

Tensor multinomial(const Tensor& input, int64_t num_samples, bool replacement, Generator* generator,
                   const OutArg& out) {
  Tensor probs = checked_weights(input, num_samples, replacement);
  DimVector shape{num_samples};
  if (input->dim() == 2) shape = DimVector{input->sizes()[0], num_samples};
  Tensor result = prepare_out(out, shape, ScalarType::Int64, input->device(), "multinomial");
  FLB_CHECK(result->dtype() == ScalarType::Int64, "multinomial expects an int64 out= tensor, got ",
            dtype_name(result->dtype()));
  Tensor dst =
      result->is_contiguous() ? result : flambeau::empty(shape, ScalarType::Int64, input->device());
  Tensor rows = make_ref<TensorImpl>(dst->storage(), DimVector{probs->sizes()[0], num_samples},
                                     DimVector{num_samples, 1}, dst->offset(), ScalarType::Int64);
  kernel<kernels::multinomial>(input->device())(rows, *generator, probs, replacement);
  if (dst != result) copy_into(result, dst);
  return result;
}

}  // namespace ops
}  // namespace flambeau
