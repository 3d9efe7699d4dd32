// Frontends of ops/pointwise_numeric.yaml: gcd, lcm, heaviside, nextafter,
// signbit, ldexp, frexp, float_power, deg2rad and rad2deg.
#include "generated/kernels.h"
#include "generated/ops_pointwise.h"
#include "generated/ops_pointwise_numeric.h"
#include "ops/frexp_kernel.h"
#include "ops/sorting_kernels.h"

namespace flambeau::ops {

namespace {

template <class K>
Tensor binary(Promote promote, uint32_t dtypes, const Tensor& a, const Tensor& b,
              const OutArg& out) {
  const char* name = K::name;
  return elementwise(handle<K>(), {name, promote, dtypes}, {a, b}, {}, out);
}

void check_real(const Tensor& input, const char* name) {
  FLB_CHECK(!is_complex(input->dtype()), name, " is not supported for complex tensors.");
}

}  // namespace

Tensor gcd(const Tensor& input, const Tensor& other, const OutArg& out) {
  return binary<kernels::gcd>(Promote::Default, kIntTypes, input, other, out);
}

Tensor lcm(const Tensor& input, const Tensor& other, const OutArg& out) {
  return binary<kernels::lcm>(Promote::Default, kIntTypes, input, other, out);
}

Tensor heaviside(const Tensor& input, const Tensor& values, const OutArg& out) {
  FLB_CHECK(!is_complex(input->dtype()) && !is_complex(values->dtype()),
            "heaviside is not yet implemented for complex tensors.");
  // A Python number for values takes input's dtype when it promotes to it.
  const bool same = values->is_wrapped_number() ? result_type({&input, &values}) == input->dtype()
                                                : values->dtype() == input->dtype();
  FLB_CHECK(same, "heaviside is not yet implemented for tensors with different dtypes.");
  return binary<kernels::heaviside>(Promote::Default, kRealTypes | kBoolTypes, input, values, out);
}

Tensor nextafter(const Tensor& input, const Tensor& other, const OutArg& out) {
  return binary<kernels::nextafter>(Promote::Default, kFloatTypes, input, other, out);
}

Tensor signbit(const Tensor& input, const OutArg& out) {
  FLB_CHECK_T(NotImplementedError, !is_complex(input->dtype()),
              "signbit is not implemented for complex tensors.");
  return elementwise(handle<kernels::signbit>(),
                     {"signbit", Promote::BoolOut, kRealTypes | kBoolTypes}, {input}, {}, out);
}

Tensor ldexp(const Tensor& input, const Tensor& other, const OutArg& out) {
  return binary<kernels::ldexp>(Promote::IntToFloat, kFloatTypes | kComplexTypes, input, other,
                                out);
}

std::tuple<Tensor, Tensor> frexp(const Tensor& input, const std::vector<Tensor>& out) {
  FLB_CHECK(is_floating(input->dtype()), "torch.frexp() only supports floating-point dtypes");
  check_out_tuple(out, 2, "frexp");
  Tensor mantissa = empty(input->sizes(), input->dtype(), input->device());
  Tensor exponent = empty(input->sizes(), ScalarType::Int32, input->device());
  if (input->numel() > 0) {
    kernel<kernels::frexp>(input->device())(mantissa, exponent, input);
  }
  return {write_out(out, 0, mantissa, "frexp"), write_out(out, 1, exponent, "frexp")};
}

// pow in double precision: both operands go to float64 (complex128 when either is
// complex), and so does the result.
Tensor float_power(const Tensor& input, const Tensor& exponent, const OutArg& out) {
  const bool complex = is_complex(input->dtype()) || is_complex(exponent->dtype());
  const ScalarType dtype = complex ? ScalarType::Complex128 : ScalarType::Float64;
  if (out.inplace) {
    FLB_CHECK(input->dtype() == dtype, "the base given to float_power_ has dtype ",
              dtype_name(input->dtype()), " but the operation's result requires dtype ",
              dtype_name(dtype));
  } else if (out.given()) {
    FLB_CHECK(out.tensor->dtype() == dtype, "the output given to float_power has dtype ",
              dtype_name(out.tensor->dtype()), " but the operation's result requires dtype ",
              dtype_name(dtype));
  }
  return pow(to_dtype(input, dtype), to_dtype(exponent, dtype), out);
}

Tensor deg2rad(const Tensor& input, const OutArg& out) {
  check_real(input, "deg2rad");
  return elementwise(handle<kernels::deg2rad>(), {"deg2rad", Promote::IntToFloat, kFloatTypes},
                     {input}, {}, out);
}

Tensor rad2deg(const Tensor& input, const OutArg& out) {
  check_real(input, "rad2deg");
  return elementwise(handle<kernels::rad2deg>(), {"rad2deg", Promote::IntToFloat, kFloatTypes},
                     {input}, {}, out);
}

}  // namespace flambeau::ops
