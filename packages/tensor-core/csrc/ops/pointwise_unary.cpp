// Frontends of unary elementwise operators: sign and magnitude, the floating
// point functions (integers compute in the default float type), rounding,
// relu and nan_to_num.
#include "generated/kernels.h"
#include "generated/ops.h"

namespace flambeau::ops {

namespace {
constexpr uint32_t kFC = kFloatTypes | kComplexTypes;

void check_not_bool(const Tensor& input, const char* msg) {
  FLB_CHECK(input->dtype() != ScalarType::Bool, msg);
}
}  // namespace

Tensor neg(const Tensor& input, const OutArg& out) {
  check_not_bool(input,
                 "neg: Negation, the `-` operator, on a bool tensor is not supported. If you are "
                 "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  return elementwise(handle<kernels::neg>(), {"neg", Promote::Default, kRealTypes | kComplexTypes},
                     {input}, {}, out);
}
Tensor negative(const Tensor& input, const OutArg& out) { return neg(input, out); }

Tensor positive(const Tensor& input) {
  check_not_bool(input, "positive: The `+` operator, on a bool tensor is not supported.");
  return input;
}

Tensor abs(const Tensor& input, const OutArg& out) {
  FLB_CHECK(!(out.inplace && is_complex(input->dtype())),
            "abs_: In-place abs is not supported for complex tensors.");
  return elementwise(handle<kernels::abs>(),
                     {"abs", Promote::ComplexToReal, kRealTypes | kComplexTypes}, {input}, {}, out);
}
Tensor absolute(const Tensor& input, const OutArg& out) { return abs(input, out); }

Tensor sign(const Tensor& input, const OutArg& out) {
  FLB_CHECK(!is_complex(input->dtype()),
            "sign: Unlike NumPy, torch.sign is not intended to support complex numbers. Please "
            "use torch.sgn instead.");
  return elementwise(handle<kernels::sign>(), {"sign", Promote::Default, kRealTypes | kBoolTypes},
                     {input}, {}, out);
}

Tensor sgn(const Tensor& input, const OutArg& out) {
  return elementwise(handle<kernels::sgn>(), {"sgn"}, {input}, {}, out);
}

// Floating-point functions: name, supported compute types.
#define FLB_FLOAT_UNARY_OP(NAME, DTYPES)                                                           \
  Tensor NAME(const Tensor& input, const OutArg& out) {                                            \
    return elementwise(handle<kernels::NAME>(), {#NAME, Promote::IntToFloat, DTYPES}, {input}, {}, \
                       out);                                                                       \
  }

FLB_FLOAT_UNARY_OP(reciprocal, kFC)
FLB_FLOAT_UNARY_OP(exp, kFC)
FLB_FLOAT_UNARY_OP(exp2, kFC)
FLB_FLOAT_UNARY_OP(expm1, kFC)
FLB_FLOAT_UNARY_OP(log, kFC)
FLB_FLOAT_UNARY_OP(log1p, kFC)
FLB_FLOAT_UNARY_OP(log2, kFC)
FLB_FLOAT_UNARY_OP(log10, kFC)
FLB_FLOAT_UNARY_OP(sqrt, kFC)
FLB_FLOAT_UNARY_OP(rsqrt, kFC)
FLB_FLOAT_UNARY_OP(sin, kFC)
FLB_FLOAT_UNARY_OP(cos, kFC)
FLB_FLOAT_UNARY_OP(tan, kFC)
FLB_FLOAT_UNARY_OP(asin, kFC)
FLB_FLOAT_UNARY_OP(acos, kFC)
FLB_FLOAT_UNARY_OP(atan, kFC)
FLB_FLOAT_UNARY_OP(sinh, kFC)
FLB_FLOAT_UNARY_OP(cosh, kFC)
FLB_FLOAT_UNARY_OP(tanh, kFC)
FLB_FLOAT_UNARY_OP(asinh, kFC)
FLB_FLOAT_UNARY_OP(acosh, kFC)
FLB_FLOAT_UNARY_OP(atanh, kFC)
FLB_FLOAT_UNARY_OP(sigmoid, kFC)
FLB_FLOAT_UNARY_OP(erf, kFloatTypes)
FLB_FLOAT_UNARY_OP(erfc, kFloatTypes)
FLB_FLOAT_UNARY_OP(erfinv, kFloatTypes)
FLB_FLOAT_UNARY_OP(lgamma, kFloatTypes)
FLB_FLOAT_UNARY_OP(digamma, kFloatTypes)
#undef FLB_FLOAT_UNARY_OP

Tensor arcsin(const Tensor& input, const OutArg& out) { return asin(input, out); }
Tensor arccos(const Tensor& input, const OutArg& out) { return acos(input, out); }
Tensor arctan(const Tensor& input, const OutArg& out) { return atan(input, out); }
Tensor arcsinh(const Tensor& input, const OutArg& out) { return asinh(input, out); }
Tensor arccosh(const Tensor& input, const OutArg& out) { return acosh(input, out); }
Tensor arctanh(const Tensor& input, const OutArg& out) { return atanh(input, out); }

Tensor logit(const Tensor& input, std::optional<double> eps, const OutArg& out) {
  return elementwise(handle<kernels::logit>(), {"logit", Promote::IntToFloat, kFloatTypes}, {input},
                     {Scalar(eps ? *eps : -1.0)}, out);
}

// Rounding keeps integer dtypes (the identity on them).
#define FLB_ROUNDING_OP(NAME, DTYPES)                                                           \
  Tensor NAME(const Tensor& input, const OutArg& out) {                                         \
    return elementwise(handle<kernels::NAME>(), {#NAME, Promote::Default, DTYPES}, {input}, {}, \
                       out);                                                                    \
  }
FLB_ROUNDING_OP(floor, kRealTypes)
FLB_ROUNDING_OP(ceil, kRealTypes)
FLB_ROUNDING_OP(trunc, kRealTypes)
FLB_ROUNDING_OP(frac, kFloatTypes)
#undef FLB_ROUNDING_OP
Tensor fix(const Tensor& input, const OutArg& out) { return trunc(input, out); }

Tensor round(const Tensor& input, int64_t decimals, const OutArg& out) {
  // Integers round to themselves, but only without decimals (as PyTorch).
  if (decimals != 0 && is_integral(input->dtype(), true)) fail_dtype("round", input->dtype());
  return elementwise(handle<kernels::round>(), {"round", Promote::Default, kRealTypes}, {input},
                     {Scalar(decimals)}, out);
}

Tensor relu(const Tensor& input, const OutArg& out) {
  return elementwise(handle<kernels::relu>(), {"relu", Promote::Default, kRealTypes}, {input}, {},
                     out);
}

Tensor nan_to_num(const Tensor& input, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf, const OutArg& out) {
  // A bool Scalar tells the kernel to use the dtype's own limit.
  Scalar p = posinf ? Scalar(*posinf) : Scalar(false);
  Scalar n = neginf ? Scalar(*neginf) : Scalar(false);
  return elementwise(handle<kernels::nan_to_num>(), {"nan_to_num"}, {input},
                     {Scalar(nan ? *nan : 0.0), p, n}, out);
}

}  // namespace flambeau::ops
