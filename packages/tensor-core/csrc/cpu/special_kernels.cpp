// CPU kernels of the special functions (torch.special and i0, igamma, igammac,
// xlogy, sinc, mvlgamma). Inputs arrive promoted to a float type; every type
// computes in double (cpu/special_*.h) and rounds once.
#include <math.h>

#include <cmath>
#include <complex>

#include "cpu/pointwise_loops.h"
#include "cpu/special_bessel.h"
#include "cpu/special_gamma.h"
#include "cpu/special_normal.h"
#include "cpu/special_polynomials.h"
#include "cpu/special_zeta.h"
#include "generated/kernels.h"

namespace flambeau {

namespace {

// out = fn(x) with fn a double -> double function of cpu/special_*.h.
template <double (*Fn)(double)>
void unary_special(const Tensor& out, Span<Tensor> in, const char* name) {
  unary_op<kFloatTypes>(out, in[0], name, [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C x) -> C { return static_cast<C>(Fn(static_cast<double>(x))); };
  });
}

// out = fn(a, b) with fn a (double, double) -> double function.
template <double (*Fn)(double, double)>
void binary_special(const Tensor& out, Span<Tensor> in, const char* name) {
  binary_op<kFloatTypes>(out, in, name, [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C a, C b) -> C {
      return static_cast<C>(Fn(static_cast<double>(a), static_cast<double>(b)));
    };
  });
}

#define FLB_SPECIAL_UNARY_KERNEL(OP, FN)                               \
  void OP##_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) { \
    unary_special<FN>(out, in, #OP);                                   \
  }                                                                    \
  FLB_REGISTER_KERNEL(OP, kCPU, OP##_kernel);
#define FLB_SPECIAL_BINARY_KERNEL(OP, FN)                              \
  void OP##_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) { \
    binary_special<FN>(out, in, #OP);                                  \
  }                                                                    \
  FLB_REGISTER_KERNEL(OP, kCPU, OP##_kernel);

double entr(double x) {
  if (std::isnan(x)) return x;
  if (x > 0) return -x * std::log(x);
  return x == 0 ? 0.0 : -std::numeric_limits<double>::infinity();
}

FLB_SPECIAL_UNARY_KERNEL(special_airy_ai, special::airy_ai)
FLB_SPECIAL_UNARY_KERNEL(special_bessel_j0, special::bessel_j0)
FLB_SPECIAL_UNARY_KERNEL(special_bessel_j1, special::bessel_j1)
FLB_SPECIAL_UNARY_KERNEL(special_bessel_y0, special::bessel_y0)
FLB_SPECIAL_UNARY_KERNEL(special_bessel_y1, special::bessel_y1)
FLB_SPECIAL_UNARY_KERNEL(special_modified_bessel_i0, special::modified_bessel_i0)
FLB_SPECIAL_UNARY_KERNEL(special_modified_bessel_i1, special::modified_bessel_i1)
FLB_SPECIAL_UNARY_KERNEL(special_modified_bessel_k0, special::modified_bessel_k0)
FLB_SPECIAL_UNARY_KERNEL(special_modified_bessel_k1, special::modified_bessel_k1)
FLB_SPECIAL_UNARY_KERNEL(special_scaled_modified_bessel_k0, special::scaled_modified_bessel_k0)
FLB_SPECIAL_UNARY_KERNEL(special_scaled_modified_bessel_k1, special::scaled_modified_bessel_k1)
FLB_SPECIAL_UNARY_KERNEL(special_spherical_bessel_j0, special::spherical_bessel_j0)
FLB_SPECIAL_UNARY_KERNEL(i0, special::modified_bessel_i0)
FLB_SPECIAL_UNARY_KERNEL(special_i0e, special::bessel_i0e)
FLB_SPECIAL_UNARY_KERNEL(special_i1, special::modified_bessel_i1)
FLB_SPECIAL_UNARY_KERNEL(special_i1e, special::bessel_i1e)
FLB_SPECIAL_UNARY_KERNEL(special_entr, entr)
FLB_SPECIAL_UNARY_KERNEL(special_erfcx, special::erfcx)
FLB_SPECIAL_UNARY_KERNEL(special_ndtr, special::ndtr)
FLB_SPECIAL_UNARY_KERNEL(special_ndtri, special::ndtri)
FLB_SPECIAL_UNARY_KERNEL(special_log_ndtr, special::log_ndtr)

FLB_SPECIAL_BINARY_KERNEL(special_zeta, special::zeta)
FLB_SPECIAL_BINARY_KERNEL(igamma, special::igamma)
FLB_SPECIAL_BINARY_KERNEL(igammac, special::igammac)
FLB_SPECIAL_BINARY_KERNEL(special_chebyshev_polynomial_t, special::chebyshev_polynomial_t)
FLB_SPECIAL_BINARY_KERNEL(special_chebyshev_polynomial_u, special::chebyshev_polynomial_u)
FLB_SPECIAL_BINARY_KERNEL(special_chebyshev_polynomial_v, special::chebyshev_polynomial_v)
FLB_SPECIAL_BINARY_KERNEL(special_chebyshev_polynomial_w, special::chebyshev_polynomial_w)
FLB_SPECIAL_BINARY_KERNEL(special_shifted_chebyshev_polynomial_t,
                          special::shifted_chebyshev_polynomial_t)
FLB_SPECIAL_BINARY_KERNEL(special_shifted_chebyshev_polynomial_u,
                          special::shifted_chebyshev_polynomial_u)
FLB_SPECIAL_BINARY_KERNEL(special_shifted_chebyshev_polynomial_v,
                          special::shifted_chebyshev_polynomial_v)
FLB_SPECIAL_BINARY_KERNEL(special_shifted_chebyshev_polynomial_w,
                          special::shifted_chebyshev_polynomial_w)
FLB_SPECIAL_BINARY_KERNEL(special_hermite_polynomial_h, special::hermite_polynomial_h)
FLB_SPECIAL_BINARY_KERNEL(special_hermite_polynomial_he, special::hermite_polynomial_he)
FLB_SPECIAL_BINARY_KERNEL(special_laguerre_polynomial_l, special::laguerre_polynomial_l)
FLB_SPECIAL_BINARY_KERNEL(special_legendre_polynomial_p, special::legendre_polynomial_p)

// x * log(y) and x * log1p(y), 0 where x == 0 unless y is NaN (as PyTorch).
template <bool OnePlus>
void xlog_kernel(const Tensor& out, Span<Tensor> in, const char* name) {
  binary_op<kFloatTypes>(out, in, name, [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C x, C y) -> C {
      if (std::isnan(y)) return y;
      if (x == 0) return C(0);
      return x * (OnePlus ? std::log1p(y) : std::log(y));
    };
  });
}
void xlogy_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  xlog_kernel<false>(out, in, "xlogy");
}
void xlog1py_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  xlog_kernel<true>(out, in, "special_xlog1py");
}
FLB_REGISTER_KERNEL(xlogy, kCPU, xlogy_kernel);
FLB_REGISTER_KERNEL(special_xlog1py, kCPU, xlog1py_kernel);

// sin(pi x) / (pi x), 1 at 0; real and complex.
void sinc_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  unary_op<kFloatTypes | kComplexTypes>(out, in[0], "sinc", [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C x) -> C {
      if (x == C(0)) return C(1);
      using R = typename real_of<C>::type;
      const C px = x * R(3.14159265358979323846);
      return std::sin(px) / px;
    };
  });
}
FLB_REGISTER_KERNEL(sinc, kCPU, sinc_kernel);

// The multivariate log-gamma function of dimension p (args[0]):
// sum_{i < p} lgamma(x - i/2) + p (p - 1) / 4 log(pi).
void mvlgamma_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar> args) {
  const int64_t p = args[0].to_int();
  unary_op<kFloatTypes>(out, in[0], "mvlgamma", [p](auto tag) {
    using C = typename decltype(tag)::type;
    return [p](C x) -> C {
      const double log_pi = 1.14472988584940017414;
      double sum = static_cast<double>(p) * static_cast<double>(p - 1) / 4.0 * log_pi;
      for (int64_t i = 0; i < p; ++i) {
        int sign;
        sum += lgamma_r(static_cast<double>(x) - static_cast<double>(i) / 2.0, &sign);
      }
      return static_cast<C>(sum);
    };
  });
}
FLB_REGISTER_KERNEL(mvlgamma, kCPU, mvlgamma_kernel);

}  // namespace

}  // namespace flambeau
