// Registration of the elementwise math group: activations and their backwards,
// logit (activation_ops.cu), bitwise operators (bitwise_ops.cu), binary and unary
// math (math_ops.cu) and the special functions (special_ops.cu), each under the
// kernel table's name for the dtypes its CPU kernel takes (the dtype of the call's
// first tensor). register_kernels() calls register_elementwise_math().
#include <cstdint>

#include "backend/kernels/kernel_registry.h"
#include "backend/kernels/kernels.h"

namespace flambeau::cuda::kernels {

namespace {

constexpr AllOps<ActivationOp, ActivationOp::kLogit> kActivation;
constexpr AllOps<BitwiseOp, BitwiseOp::kRightShift> kBitwise;
constexpr AllOps<MathOp, MathOp::kIsreal> kMath;
constexpr AllOps<SpecialOp, SpecialOp::kLegendreP> kSpecial;

#define FLB_ACT(NAME, OP, SET) {NAME, activation, kActivation[ActivationOp::OP], SET}
#define FLB_BIT(NAME, OP, SET) {NAME, bitwise, kBitwise[BitwiseOp::OP], SET}
#define FLB_MATH(NAME, OP, SET) {NAME, math, kMath[MathOp::OP], SET}
#define FLB_SPECIAL(NAME, OP) {NAME, special_function, kSpecial[SpecialOp::OP], kFloat}

const Registration kEntries[] = {
    FLB_ACT("elu", kElu, kFloat),
    FLB_ACT("elu_backward", kEluBackward, kFloat),
    FLB_ACT("gelu", kGelu, kFloat),
    FLB_ACT("gelu_backward", kGeluBackward, kFloat),
    FLB_ACT("hardshrink", kHardshrink, kFloat),
    FLB_ACT("hardshrink_backward", kHardshrinkBackward, kFloat),
    FLB_ACT("hardsigmoid", kHardsigmoid, kFloat),
    FLB_ACT("hardsigmoid_backward", kHardsigmoidBackward, kFloat),
    FLB_ACT("hardswish", kHardswish, kFloat),
    FLB_ACT("hardswish_backward", kHardswishBackward, kFloat),
    FLB_ACT("hardtanh", kHardtanh, kFloat),
    FLB_ACT("hardtanh_backward", kHardtanhBackward, kFloat),
    FLB_ACT("leaky_relu", kLeakyRelu, kFloat),
    FLB_ACT("leaky_relu_backward", kLeakyReluBackward, kFloat),
    FLB_ACT("log_sigmoid", kLogSigmoid, kFloat),
    FLB_ACT("log_sigmoid_backward", kLogSigmoidBackward, kFloat),
    FLB_ACT("mish", kMish, kFloat),
    FLB_ACT("mish_backward", kMishBackward, kFloat),
    FLB_ACT("silu", kSilu, kFloat),
    FLB_ACT("silu_backward", kSiluBackward, kFloat),
    FLB_ACT("softplus", kSoftplus, kFloat),
    FLB_ACT("softplus_backward", kSoftplusBackward, kFloat),
    FLB_ACT("softshrink", kSoftshrink, kFloat),
    FLB_ACT("softshrink_backward", kSoftshrinkBackward, kFloat),
    FLB_ACT("threshold", kThreshold, kNumeric),
    FLB_ACT("threshold_backward", kThresholdBackward, kNumeric),
    FLB_ACT("logit", kLogit, kFloat),
    FLB_BIT("bitwise_and", kAnd, kIntegerBool),
    FLB_BIT("bitwise_or", kOr, kIntegerBool),
    FLB_BIT("bitwise_xor", kXor, kIntegerBool),
    FLB_BIT("bitwise_not", kNot, kIntegerBool),
    FLB_BIT("bitwise_left_shift", kLeftShift, kInteger),
    FLB_BIT("bitwise_right_shift", kRightShift, kInteger),
    FLB_MATH("atan2", kAtan2, kFloat),
    FLB_MATH("copysign", kCopysign, kFloat),
    FLB_MATH("hypot", kHypot, kFloat),
    FLB_MATH("logaddexp", kLogaddexp, kFloat),
    FLB_MATH("logaddexp2", kLogaddexp2, kFloat),
    FLB_MATH("xlogy", kXlogy, kFloat),
    FLB_MATH("special_xlog1py", kXlog1py, kFloat),
    FLB_MATH("ldexp", kLdexp, kFloat),
    FLB_MATH("nextafter", kNextafter, kFloat),
    FLB_MATH("fmod", kFmod, kNumeric),
    FLB_MATH("remainder", kRemainder, kNumeric),
    FLB_MATH("gcd", kGcd, kInteger),
    FLB_MATH("lcm", kLcm, kInteger),
    FLB_MATH("heaviside", kHeaviside, kReal),
    FLB_MATH("angle", kAngle, kFloat),
    FLB_MATH("conj_physical", kConjPhysical, kReal),
    FLB_MATH("sgn", kSgn, kReal),
    FLB_MATH("deg2rad", kDeg2rad, kFloat),
    FLB_MATH("rad2deg", kRad2deg, kFloat),
    FLB_MATH("sinc", kSinc, kFloat),
    FLB_MATH("nan_to_num", kNanToNum, kReal),
    FLB_MATH("signbit", kSignbit, kBool),  // out bool, any real input
    FLB_MATH("isreal", kIsreal, kBool),
    {"frexp", frexp_kernel, nullptr, kFloat},
    FLB_SPECIAL("lgamma", kLgamma),
    FLB_SPECIAL("digamma", kDigamma),
    FLB_SPECIAL("erfinv", kErfinv),
    FLB_SPECIAL("mvlgamma", kMvlgamma),
    FLB_SPECIAL("polygamma", kPolygamma),
    FLB_SPECIAL("special_entr", kEntr),
    FLB_SPECIAL("special_erfcx", kErfcx),
    FLB_SPECIAL("special_ndtr", kNdtr),
    FLB_SPECIAL("special_ndtri", kNdtri),
    FLB_SPECIAL("special_log_ndtr", kLogNdtr),
    FLB_SPECIAL("special_spherical_bessel_j0", kSphericalBesselJ0),
    FLB_SPECIAL("i0", kI0),
    FLB_SPECIAL("special_modified_bessel_i0", kI0),
    FLB_SPECIAL("special_i0e", kI0e),
    FLB_SPECIAL("special_i1", kI1),
    FLB_SPECIAL("special_modified_bessel_i1", kI1),
    FLB_SPECIAL("special_i1e", kI1e),
    FLB_SPECIAL("special_bessel_j0", kBesselJ0),
    FLB_SPECIAL("special_bessel_j1", kBesselJ1),
    FLB_SPECIAL("special_bessel_y0", kBesselY0),
    FLB_SPECIAL("special_bessel_y1", kBesselY1),
    FLB_SPECIAL("special_modified_bessel_k0", kModifiedBesselK0),
    FLB_SPECIAL("special_modified_bessel_k1", kModifiedBesselK1),
    FLB_SPECIAL("special_scaled_modified_bessel_k0", kScaledModifiedBesselK0),
    FLB_SPECIAL("special_scaled_modified_bessel_k1", kScaledModifiedBesselK1),
    FLB_SPECIAL("special_airy_ai", kAiryAi),
    FLB_SPECIAL("igamma", kIgamma),
    FLB_SPECIAL("igammac", kIgammac),
    FLB_SPECIAL("special_zeta", kZeta),
    FLB_SPECIAL("special_chebyshev_polynomial_t", kChebyshevT),
    FLB_SPECIAL("special_chebyshev_polynomial_u", kChebyshevU),
    FLB_SPECIAL("special_chebyshev_polynomial_v", kChebyshevV),
    FLB_SPECIAL("special_chebyshev_polynomial_w", kChebyshevW),
    FLB_SPECIAL("special_shifted_chebyshev_polynomial_t", kShiftedChebyshevT),
    FLB_SPECIAL("special_shifted_chebyshev_polynomial_u", kShiftedChebyshevU),
    FLB_SPECIAL("special_shifted_chebyshev_polynomial_v", kShiftedChebyshevV),
    FLB_SPECIAL("special_shifted_chebyshev_polynomial_w", kShiftedChebyshevW),
    FLB_SPECIAL("special_hermite_polynomial_h", kHermiteH),
    FLB_SPECIAL("special_hermite_polynomial_he", kHermiteHe),
    FLB_SPECIAL("special_laguerre_polynomial_l", kLaguerreL),
    FLB_SPECIAL("special_legendre_polynomial_p", kLegendreP),
};

#undef FLB_ACT
#undef FLB_BIT
#undef FLB_MATH
#undef FLB_SPECIAL

}  // namespace

flb_status register_elementwise_math(const flb_core_api* core, int32_t type) {
  return register_table(core, type, kEntries);
}

}  // namespace flambeau::cuda::kernels
