// Frontends of the special functions (ops/special.yaml): elementwise over
// broadcast inputs, integers and bool computing in the default float type.
#include "generated/kernels.h"
#include "generated/ops_special.h"

namespace flambeau::ops {

namespace {

template <class K>
Tensor float_elementwise(std::initializer_list<Tensor> inputs, const OutArg& out,
                         uint32_t dtypes = kFloatTypes) {
  const char* name = K::name;
  return elementwise(handle<K>(), {name, Promote::IntToFloat, dtypes}, inputs, {}, out);
}

}  // namespace

#define FLB_SPECIAL_UNARY(NAME)                            \
  Tensor NAME(const Tensor& input, const OutArg& out) {    \
    return float_elementwise<kernels::NAME>({input}, out); \
  }
#define FLB_SPECIAL_BINARY(NAME)                                             \
  Tensor NAME(const Tensor& input, const Tensor& other, const OutArg& out) { \
    return float_elementwise<kernels::NAME>({input, other}, out);            \
  }

FLB_SPECIAL_UNARY(special_airy_ai)
FLB_SPECIAL_UNARY(special_bessel_j0)
FLB_SPECIAL_UNARY(special_bessel_j1)
FLB_SPECIAL_UNARY(special_bessel_y0)
FLB_SPECIAL_UNARY(special_bessel_y1)
FLB_SPECIAL_UNARY(special_modified_bessel_i0)
FLB_SPECIAL_UNARY(special_modified_bessel_i1)
FLB_SPECIAL_UNARY(special_modified_bessel_k0)
FLB_SPECIAL_UNARY(special_modified_bessel_k1)
FLB_SPECIAL_UNARY(special_scaled_modified_bessel_k0)
FLB_SPECIAL_UNARY(special_scaled_modified_bessel_k1)
FLB_SPECIAL_UNARY(special_spherical_bessel_j0)
FLB_SPECIAL_UNARY(special_i0e)
FLB_SPECIAL_UNARY(special_i1)
FLB_SPECIAL_UNARY(special_i1e)
FLB_SPECIAL_UNARY(special_entr)
FLB_SPECIAL_UNARY(special_erfcx)
FLB_SPECIAL_UNARY(special_ndtr)
FLB_SPECIAL_UNARY(special_ndtri)
FLB_SPECIAL_UNARY(special_log_ndtr)
FLB_SPECIAL_UNARY(i0)

FLB_SPECIAL_BINARY(special_chebyshev_polynomial_t)
FLB_SPECIAL_BINARY(special_chebyshev_polynomial_u)
FLB_SPECIAL_BINARY(special_chebyshev_polynomial_v)
FLB_SPECIAL_BINARY(special_chebyshev_polynomial_w)
FLB_SPECIAL_BINARY(special_shifted_chebyshev_polynomial_t)
FLB_SPECIAL_BINARY(special_shifted_chebyshev_polynomial_u)
FLB_SPECIAL_BINARY(special_shifted_chebyshev_polynomial_v)
FLB_SPECIAL_BINARY(special_shifted_chebyshev_polynomial_w)
FLB_SPECIAL_BINARY(special_hermite_polynomial_h)
FLB_SPECIAL_BINARY(special_hermite_polynomial_he)
FLB_SPECIAL_BINARY(special_laguerre_polynomial_l)
FLB_SPECIAL_BINARY(special_legendre_polynomial_p)
FLB_SPECIAL_BINARY(special_xlog1py)
FLB_SPECIAL_BINARY(special_zeta)
FLB_SPECIAL_BINARY(xlogy)

#undef FLB_SPECIAL_UNARY
#undef FLB_SPECIAL_BINARY

// The incomplete gamma functions take floating-point inputs only (PyTorch's
// igamma has no integer kernels).
Tensor igamma(const Tensor& input, const Tensor& other, const OutArg& out) {
  return elementwise(handle<kernels::igamma>(), {"igamma", Promote::Default, kFloatTypes},
                     {input, other}, {}, out);
}
Tensor igammac(const Tensor& input, const Tensor& other, const OutArg& out) {
  return elementwise(handle<kernels::igammac>(), {"igammac", Promote::Default, kFloatTypes},
                     {input, other}, {}, out);
}

Tensor sinc(const Tensor& input, const OutArg& out) {
  return float_elementwise<kernels::sinc>({input}, out, kFloatTypes | kComplexTypes);
}

Tensor mvlgamma(const Tensor& input, int64_t p, const OutArg& out) {
  FLB_CHECK(input->dtype() != ScalarType::Bool, "The input tensor may not be a boolean tensor.");
  FLB_CHECK(p >= 1, "p has to be greater than or equal to 1");
  // Each element sums p log-gammas (PyTorch materializes all numel * p of them); these
  // limits keep a call to seconds.
  FLB_CHECK(p <= (int64_t{1} << 20), "mvlgamma: p = ", p, " is too large (at most 2^20)");
  const double evaluations = static_cast<double>(input->numel()) * static_cast<double>(p);
  FLB_CHECK(evaluations <= static_cast<double>(int64_t{1} << 28), "mvlgamma: p = ", p, " needs ",
            evaluations, " log-gamma evaluations for ", input->numel(),
            " elements, more than 2^28");
  return elementwise(handle<kernels::mvlgamma>(), {"mvlgamma", Promote::IntToFloat, kFloatTypes},
                     {input}, {Scalar(p)}, out);
}

}  // namespace flambeau::ops
