// The special functions the CPU computes in double and rounds once
// (cpu/special_kernels.cpp, unary_float_kernels.cpp, polygamma_kernels.cpp), on the
// floating dtypes, with the CPU's algorithms (special_functions.h): lgamma, digamma,
// erfinv, mvlgamma (scalars [p]), polygamma (scalars [n]), special_entr,
// special_erfcx, special_ndtr, special_ndtri, special_log_ndtr,
// special_spherical_bessel_j0, i0 (and special_modified_bessel_i0), special_i0e,
// special_i1 (and special_modified_bessel_i1), special_i1e; and, with bessel_functions.h's
// algorithms (the CPU takes them from libstdc++), special_bessel_j0/j1/y0/y1,
// special_modified_bessel_k0/k1, special_scaled_modified_bessel_k0/k1, special_airy_ai;
// binary: igamma, igammac, special_zeta
// and the orthogonal polynomials special_{,shifted_}chebyshev_polynomial_{t,u,v,w},
// special_hermite_polynomial_{h,he}, special_laguerre_polynomial_l,
// special_legendre_polynomial_p (tensors [out, x, n]).
#include <cstdint>
#include <type_traits>

#include "backend/kernels/bessel_functions.h"
#include "backend/kernels/call_args.cuh"
#include "backend/kernels/elementwise.cuh"
#include "backend/kernels/kernels.h"
#include "backend/kernels/special_functions.h"

namespace flambeau::cuda::kernels {

namespace {

// Out of line (__noinline__): the functions are long, and each is compiled once
// rather than into every dtype's and index width's kernel.
__device__ __noinline__ double unary_special(SpecialOp op, double x, int64_t n) {
  switch (op) {
    case SpecialOp::kLgamma:
      return lgamma(x);
    case SpecialOp::kDigamma:
      return special::digamma(x);
    case SpecialOp::kErfinv:
      return special::erfinv(x);
    case SpecialOp::kMvlgamma:
      return special::mvlgamma(x, n);
    case SpecialOp::kPolygamma:
      return special::polygamma(n, x);
    case SpecialOp::kEntr:
      return special::entr(x);
    case SpecialOp::kErfcx:
      return special::erfcx(x);
    case SpecialOp::kNdtr:
      return special::ndtr(x);
    case SpecialOp::kNdtri:
      return special::ndtri(x);
    case SpecialOp::kLogNdtr:
      return special::log_ndtr(x);
    case SpecialOp::kSphericalBesselJ0:
      return special::spherical_bessel_j0(x);
    case SpecialOp::kI0:
      return special::modified_bessel_i0(x);
    case SpecialOp::kI0e:
      return special::bessel_i0e(x);
    case SpecialOp::kI1:
      return special::modified_bessel_i1(x);
    case SpecialOp::kI1e:
      return special::bessel_i1e(x);
    case SpecialOp::kBesselJ0:
      return special::bessel_j0(x);
    case SpecialOp::kBesselJ1:
      return special::bessel_j1(x);
    case SpecialOp::kBesselY0:
      return special::bessel_y0(x);
    case SpecialOp::kBesselY1:
      return special::bessel_y1(x);
    case SpecialOp::kModifiedBesselK0:
      return special::modified_bessel_k0(x);
    case SpecialOp::kModifiedBesselK1:
      return special::modified_bessel_k1(x);
    case SpecialOp::kScaledModifiedBesselK0:
      return special::scaled_modified_bessel_k0(x);
    case SpecialOp::kScaledModifiedBesselK1:
      return special::scaled_modified_bessel_k1(x);
    case SpecialOp::kAiryAi:
      return special::airy_ai(x);
    default:
      return x;
  }
}

__device__ __noinline__ double binary_special(SpecialOp op, double a, double b) {
  switch (op) {
    case SpecialOp::kIgamma:
      return special::igamma(a, b);
    case SpecialOp::kIgammac:
      return special::igammac(a, b);
    case SpecialOp::kZeta:
      return special::zeta(a, b);
    case SpecialOp::kChebyshevT:
      return special::chebyshev_polynomial_t(a, b);
    case SpecialOp::kChebyshevU:
      return special::chebyshev_polynomial_u(a, b);
    case SpecialOp::kChebyshevV:
      return special::chebyshev_polynomial_v(a, b);
    case SpecialOp::kChebyshevW:
      return special::chebyshev_polynomial_w(a, b);
    case SpecialOp::kShiftedChebyshevT:
      return special::shifted_chebyshev_polynomial_t(a, b);
    case SpecialOp::kShiftedChebyshevU:
      return special::shifted_chebyshev_polynomial_u(a, b);
    case SpecialOp::kShiftedChebyshevV:
      return special::shifted_chebyshev_polynomial_v(a, b);
    case SpecialOp::kShiftedChebyshevW:
      return special::shifted_chebyshev_polynomial_w(a, b);
    case SpecialOp::kHermiteH:
      return special::hermite_polynomial_h(a, b);
    case SpecialOp::kHermiteHe:
      return special::hermite_polynomial_he(a, b);
    case SpecialOp::kLaguerreL:
      return special::laguerre_polynomial_l(a, b);
    case SpecialOp::kLegendreP:
      return special::legendre_polynomial_p(a, b);
    default:
      return a;
  }
}

// In double whatever the element type, rounded once into A (then T).
template <class A>
struct Special {
  SpecialOp op;
  int64_t n;  // mvlgamma's p, polygamma's n
  __device__ A operator()(A x) const {
    return static_cast<A>(unary_special(op, static_cast<double>(x), n));
  }
  __device__ A operator()(A a, A b) const {
    return static_cast<A>(binary_special(op, static_cast<double>(a), static_cast<double>(b)));
  }
};

bool is_binary(SpecialOp op) { return op >= SpecialOp::kIgamma; }

}  // namespace

flb_status special_function(void* ctx, const flb_kernel_call* c) {
  const SpecialOp op = *static_cast<const SpecialOp*>(ctx);
  const bool binary = is_binary(op);
  if (c->n_tensors != (binary ? 3 : 2) || !all_dtype(c, c->tensors[0].dtype))
    return unsupported_dtypes(c);
  int64_t n = 0;
  if (op == SpecialOp::kMvlgamma || op == SpecialOp::kPolygamma) {
    if (c->n_scalars < 1) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "expected an order");
    const flb_scalar& s = c->scalars[0];
    n = s.kind == FLB_SCALAR_FLOAT ? static_cast<int64_t>(s.real) : s.i;
  }
  return with_float_dtype(c, c->tensors[0].dtype, [&](auto tag) -> flb_status {
    using T = decltype(tag);
    const Special<acc_t<T>> f{op, n};
    return binary ? launch_elementwise<T, 2>(c, f) : launch_elementwise<T, 1>(c, f);
  });
}

}  // namespace flambeau::cuda::kernels
