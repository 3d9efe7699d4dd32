// Random samplers: argument checks, output allocation, then the kernel the
// dispatcher holds for the output's device. The stream layout (which Philox
// counter and lane each element reads) is documented in ops/random.yaml and
// cpu/random_kernels.cpp.
#include <cmath>
#include <limits>

#include "generated/kernels.h"
#include "generated/ops.h"
#include "ops/memory_format.h"
#include "ops/random_kernels.h"
#include "ops/random_support.h"

namespace flambeau {

namespace {

Tensor finish(Tensor t, bool requires_grad) {
  if (requires_grad) {
    FLB_CHECK(is_floating(t->dtype()) || is_complex(t->dtype()),
              "Only Tensors of floating point and complex dtype can require gradients");
    t->set_requires_grad(true);
  }
  return t;
}

void fill_uniform(const Tensor& self, Generator& gen, double from, double to, const char* op) {
  check_sampling_dtype(self->dtype(), op);
  FLB_CHECK(std::isfinite(from) && std::isfinite(to), op, ": expects from and to to be finite, ",
            "got from=", from, ", to=", to);
  FLB_CHECK(from <= to, op, ": expects to return a [from, to) range, but found from=", from,
            " > to=", to);
  fill_contiguous(
      self, [&](const Tensor& t) { kernel<kernels::uniform_>(t->device())(t, gen, from, to); });
}

void fill_normal(const Tensor& self, Generator& gen, double mean, double std, const char* op) {
  check_sampling_dtype(self->dtype(), op);
  FLB_CHECK(std >= 0.0, op, ": expects std >= 0.0, but found std ", std);
  // A complex normal has total variance std^2, split evenly between its parts.
  if (is_complex(self->dtype())) std /= std::sqrt(2.0);
  fill_contiguous(
      self, [&](const Tensor& t) { kernel<kernels::normal_>(t->device())(t, gen, mean, std); });
}

// The integers [lo, hi] a dtype holds exactly (floats: up to 2**mantissa digits).
std::pair<int64_t, int64_t> exact_int_range(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return {0, 1};
    case ScalarType::UInt8:
      return {0, 255};
    case ScalarType::Int8:
      return {-128, 127};
    case ScalarType::Int16:
      return {-32768, 32767};
    case ScalarType::Int32:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    case ScalarType::Float16:
      return {-(int64_t(1) << 11), int64_t(1) << 11};
    case ScalarType::BFloat16:
      return {-(int64_t(1) << 8), int64_t(1) << 8};
    case ScalarType::Float32:
      return {-(int64_t(1) << 24), int64_t(1) << 24};
    case ScalarType::Float64:
      return {-(int64_t(1) << 53), int64_t(1) << 53};
    default:
      return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

// Fills self with integers uniform on [from, to) (to exclusive), or on
// [from, hi] inclusive when to is nullopt.
void fill_random(const Tensor& self, Generator& gen, int64_t from, std::optional<int64_t> to,
                 const char* op) {
  ScalarType dt = self->dtype();
  FLB_CHECK(!is_complex(dt), op, ": not implemented for dtype ", dtype_name(dt));
  auto [lo, hi] = exact_int_range(dt);
  uint64_t range;
  if (to) {
    FLB_CHECK(from < *to, op, ": random_ expects 'from' to be less than 'to', but got from=", from,
              " >= to=", *to);
    FLB_CHECK(from >= lo && *to - 1 <= hi, op, ": range [", from, ", ", *to,
              ") is not representable in dtype ", dtype_name(dt), " (which holds [", lo, ", ", hi,
              "])");
    range = static_cast<uint64_t>(*to) - static_cast<uint64_t>(from);
  } else {
    FLB_CHECK(from >= lo && from <= hi, op, ": 'from' = ", from, " is not representable in dtype ",
              dtype_name(dt));
    range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(from) + 1;
    if (range == 0) range = std::numeric_limits<uint64_t>::max();  // the whole int64 span
  }
  fill_contiguous(
      self, [&](const Tensor& t) { kernel<kernels::random_>(t->device())(t, gen, from, range); });
}

Tensor bernoulli_with(const Tensor& self, Generator& gen, const Tensor& p, const char* op) {
  FLB_CHECK(!is_complex(self->dtype()), op, ": not implemented for dtype ",
            dtype_name(self->dtype()));
  self->bump_version();
  fill_contiguous(self,
                  [&](const Tensor& t) { kernel<kernels::bernoulli_>(t->device())(t, gen, p); });
  return self;
}

Device device_or(const std::optional<Device>& d, Device fallback) { return d.value_or(fallback); }

}  // namespace

namespace ops {

Tensor rand(IntList size, Generator* generator, std::optional<ScalarType> dtype,
            std::optional<Device> device, bool requires_grad) {
  Tensor out = flambeau::empty(size, dtype.value_or(default_dtype()), device_or(device, {}));
  fill_uniform(out, *generator, 0.0, 1.0, "rand");
  return finish(out, requires_grad);
}

Tensor randn(IntList size, Generator* generator, std::optional<ScalarType> dtype,
             std::optional<Device> device, bool requires_grad) {
  Tensor out = flambeau::empty(size, dtype.value_or(default_dtype()), device_or(device, {}));
  fill_normal(out, *generator, 0.0, 1.0, "randn");
  return finish(out, requires_grad);
}

Tensor randint_low(int64_t low, int64_t high, IntList size, Generator* generator,
                   std::optional<ScalarType> dtype, std::optional<Device> device,
                   bool requires_grad) {
  Tensor out = flambeau::empty(size, dtype.value_or(ScalarType::Int64), device_or(device, {}));
  fill_random(out, *generator, low, high, "randint");
  return finish(out, requires_grad);
}

Tensor randint(int64_t high, IntList size, Generator* generator, std::optional<ScalarType> dtype,
               std::optional<Device> device, bool requires_grad) {
  return randint_low(0, high, size, generator, dtype, device, requires_grad);
}

Tensor randperm(int64_t n, Generator* generator, std::optional<ScalarType> dtype,
                std::optional<Device> device, bool requires_grad) {
  FLB_CHECK(n >= 0, "randperm: n must be non-negative, got ", n);
  ScalarType dt = dtype.value_or(ScalarType::Int64);
  FLB_CHECK(!is_complex(dt) && dt != ScalarType::Bool, "randperm: not implemented for dtype ",
            dtype_name(dt));
  FLB_CHECK(n == 0 || n - 1 <= exact_int_range(dt).second, "randperm: n = ", n,
            " is too large for dtype ", dtype_name(dt));
  Device dev = device_or(device, {});
  Tensor perm = flambeau::empty({n}, ScalarType::Int64, dev);
  kernel<kernels::randperm>(dev)(perm, *generator);
  return finish(to_dtype(perm, dt), requires_grad);
}

Tensor normal_float_float(double mean, double std, IntList size, Generator* generator,
                          std::optional<ScalarType> dtype, std::optional<Device> device,
                          bool requires_grad) {
  Tensor out = flambeau::empty(size, dtype.value_or(default_dtype()), device_or(device, {}));
  fill_normal(out, *generator, mean, std, "normal");
  return finish(out, requires_grad);
}

Tensor normal_Tensor_Tensor(const Tensor& mean, const Tensor& std, Generator* generator) {
  ScalarType dt = result_type({&mean, &std});
  FLB_CHECK(is_floating(dt), "normal: expected floating point mean and std, got ",
            dtype_name(mean->dtype()), " and ", dtype_name(std->dtype()));
  Tensor std64 = contiguous(to_dtype(std, ScalarType::Float64));
  Tensor std_host = cpu(std64);  // checked on the host (a device's values are copied)
  const double* s = std_host->data_as<double>();
  for (int64_t i = 0; i < std64->numel(); ++i)
    FLB_CHECK(s[i] >= 0.0, "normal: expects all elements of std >= 0.0, found ", s[i]);
  DimVector shape = broadcast_shapes(mean->sizes(), std->sizes(), "normal");
  Device dev = mean->is_wrapped_number() ? std->device() : mean->device();
  Tensor z = flambeau::empty(shape, dt, dev);
  fill_normal(z, *generator, 0.0, 1.0, "normal");
  Tensor scaled = mul(z, std, OutArg::none());
  return add(mean, scaled, Scalar(int64_t(1)), OutArg::into(z));
}

Tensor normal_Tensor_float(const Tensor& mean, double std, Generator* generator) {
  FLB_CHECK(std >= 0.0, "normal: expects std >= 0.0, but found std ", std);
  return normal_Tensor_Tensor(mean, wrapped_scalar(Scalar(std)), generator);
}

Tensor rand_like(const Tensor& input, Generator* generator, std::optional<ScalarType> dtype,
                 std::optional<Device> device, bool requires_grad, MemoryFormat memory_format) {
  Tensor out = empty_in_format(input, dtype.value_or(input->dtype()),
                               device_or(device, input->device()), memory_format, "rand_like");
  fill_uniform(out, *generator, 0.0, 1.0, "rand");
  return finish(out, requires_grad);
}

Tensor randn_like(const Tensor& input, Generator* generator, std::optional<ScalarType> dtype,
                  std::optional<Device> device, bool requires_grad, MemoryFormat memory_format) {
  Tensor out = empty_in_format(input, dtype.value_or(input->dtype()),
                               device_or(device, input->device()), memory_format, "randn_like");
  fill_normal(out, *generator, 0.0, 1.0, "randn");
  return finish(out, requires_grad);
}

Tensor randint_like_low(const Tensor& input, int64_t low, int64_t high, Generator* generator,
                        std::optional<ScalarType> dtype, std::optional<Device> device,
                        bool requires_grad, MemoryFormat memory_format) {
  Tensor out = empty_in_format(input, dtype.value_or(input->dtype()),
                               device_or(device, input->device()), memory_format, "randint_like");
  fill_random(out, *generator, low, high, "randint");
  return finish(out, requires_grad);
}

Tensor randint_like(const Tensor& input, int64_t high, Generator* generator,
                    std::optional<ScalarType> dtype, std::optional<Device> device,
                    bool requires_grad, MemoryFormat memory_format) {
  return randint_like_low(input, 0, high, generator, dtype, device, requires_grad, memory_format);
}

Tensor uniform_(const Tensor& self, double from, double to, Generator* generator) {
  self->bump_version();
  fill_uniform(self, *generator, from, to, "uniform_");
  return self;
}

Tensor normal_(const Tensor& self, double mean, double std, Generator* generator) {
  self->bump_version();
  fill_normal(self, *generator, mean, std, "normal_");
  return self;
}

Tensor random_(const Tensor& self, int64_t from, std::optional<int64_t> to, Generator* generator) {
  self->bump_version();
  fill_random(self, *generator, from, to, "random_");
  return self;
}

Tensor random__to(const Tensor& self, int64_t to, Generator* generator) {
  return random_(self, 0, to, generator);
}

Tensor bernoulli_(const Tensor& self, double p, Generator* generator) {
  FLB_CHECK(p >= 0.0 && p <= 1.0, "bernoulli_: expects p to be in [0, 1], but got p=", p);
  return bernoulli_with(self, *generator, scalar_tensor(Scalar(p), ScalarType::Float64),
                        "bernoulli_");
}

Tensor bernoulli__Tensor(const Tensor& self, const Tensor& p, Generator* generator) {
  FLB_CHECK(is_floating(p->dtype()), "bernoulli_: expected a floating point tensor of ",
            "probabilities, got ", dtype_name(p->dtype()));
  Tensor probs =
      contiguous(to_dtype(expand_to(p, self->sizes(), "bernoulli_"), ScalarType::Float64));
  Tensor probs_host = cpu(probs);  // checked on the host
  const double* v = probs_host->data_as<double>();
  for (int64_t i = 0; i < probs->numel(); ++i)
    FLB_CHECK(v[i] >= 0.0 && v[i] <= 1.0, "bernoulli_: expects all probabilities in [0, 1], found ",
              v[i]);
  return bernoulli_with(self, *generator, probs, "bernoulli_");
}

Tensor bernoulli_p(const Tensor& input, double p, Generator* generator) {
  FLB_CHECK_T(NotImplementedError, is_floating(input->dtype()),
              "bernoulli: not implemented for dtype ", dtype_name(input->dtype()),
              " (a floating point input is expected)");
  return bernoulli_(flambeau::empty(input->sizes(), input->dtype(), input->device()), p, generator);
}

Tensor bernoulli(const Tensor& input, Generator* generator) {
  FLB_CHECK_T(NotImplementedError, is_floating(input->dtype()),
              "bernoulli: not implemented for dtype ", dtype_name(input->dtype()),
              " (a floating point input of probabilities is expected)");
  Tensor p = contiguous(to_dtype(input, ScalarType::Float64));
  Tensor p_host = cpu(p);  // checked on the host
  const double* v = p_host->data_as<double>();
  for (int64_t i = 0; i < p->numel(); ++i)
    FLB_CHECK(v[i] >= 0.0 && v[i] <= 1.0,
              "bernoulli: expects all probabilities in [0, 1], "
              "found ",
              v[i]);
  Tensor out = flambeau::empty(input->sizes(), input->dtype(), input->device());
  return bernoulli_with(out, *generator, p, "bernoulli");
}

}  // namespace ops
}  // namespace flambeau
