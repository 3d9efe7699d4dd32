// The error-function family of torch.special in double precision: the scaled
// complementary error function erfcx and the standard normal distribution's
// CDF (ndtr), its logarithm (log_ndtr) and its inverse (ndtri). Built on libm's
// erf/erfc, with the continued fraction of erfc for large arguments (DLMF 7.9.2)
// and Newton's method for the inverse.
#pragma once
#include <cmath>
#include <limits>

#include "cpu/special_math.h"

namespace flambeau::special {

namespace normal_detail {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSqrtPi = 1.77245385090551602730;
constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kSqrtHalfPi = 1.25331413731550025121;  // sqrt(pi / 2)

// exp(x^2) with x^2 split into a rounded part and its rounding error (from fma),
// so the result keeps full precision for large |x|.
inline double exp_square(double x) {
  const double hi = x * x, lo = std::fma(x, x, -hi);
  return std::exp(hi) * (1.0 + lo);
}
}  // namespace normal_detail

// erfcx(x) = exp(x^2) erfc(x). Where erfc(x) would underflow (x >= 26) the
// continued fraction erfc(x) = exp(-x^2) / sqrt(pi) / (x + (1/2) / (x + 1 / (x +
// (3/2) / (x + ...)))) gives erfcx directly; it converges fast there. For x < 0,
// erfcx(x) = 2 exp(x^2) - erfcx(-x), which overflows to inf below about -26.6.
inline double erfcx(double x) {
  using namespace normal_detail;
  if (std::isnan(x)) return x;
  if (x < 0) {
    if (x < -26.7) return kInf;
    return 2.0 * exp_square(x) - erfcx(-x);
  }
  if (x < 26.0) return exp_square(x) * std::erfc(x);
  double t = x;
  for (int k = 40; k >= 1; --k) t = x + (0.5 * k) / t;
  return 1.0 / (kSqrtPi * t);
}

// The standard normal CDF, (1 + erf(x / sqrt(2))) / 2, through erfc so that the
// lower tail keeps its relative precision.
inline double ndtr(double x) {
  using namespace normal_detail;
  const double t = x * kSqrtHalf;
  return x < 0 ? 0.5 * std::erfc(-t) : 1.0 - 0.5 * std::erfc(t);
}

// log(ndtr(x)): for x < -1, log(erfcx(-x / sqrt(2)) / 2) - x^2 / 2, which stays
// finite far into the tail; otherwise log1p(-erfc(x / sqrt(2)) / 2).
inline double log_ndtr(double x) {
  using namespace normal_detail;
  if (std::isnan(x)) return x;
  if (x < -1.0) return std::log(0.5 * erfcx(-x * kSqrtHalf)) - 0.5 * x * x;
  return std::log1p(-0.5 * std::erfc(x * kSqrtHalf));
}

// The inverse of ndtr. In the centre (0.1 <= p <= 0.9) sqrt(2) erfinv(2p - 1),
// where 2p - 1 is exact enough. In the tails, where 2p - 1 would lose p's
// precision, Newton's method on log(ndtr(x)) = log(p), started from Abramowitz
// and Stegun's approximation 26.2.23 (error below 4.5e-4): the step is
// (log_ndtr(x) - log p) * ndtr(x) / phi(x), and ndtr(x) / phi(x) =
// sqrt(pi / 2) erfcx(-x / sqrt(2)) does not underflow.
inline double ndtri(double p) {
  using namespace normal_detail;
  if (std::isnan(p) || p < 0.0 || p > 1.0) return kNaN;
  if (p == 0.0) return -kInf;
  if (p == 1.0) return kInf;
  if (p >= 0.1 && p <= 0.9) return kSqrt2 * erfinv(2.0 * p - 1.0);
  // The lower tail; the upper one by symmetry (1 - p is exact for p > 0.5).
  const bool upper = p > 0.5;
  const double q = upper ? 1.0 - p : p;
  const double t = std::sqrt(-2.0 * std::log(q));
  double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) /
                       (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  const double log_q = std::log(q);
  for (int i = 0; i < 10; ++i) {
    const double step = (log_ndtr(x) - log_q) * kSqrtHalfPi * erfcx(-x * kSqrtHalf);
    x -= step;
    if (std::fabs(step) <= 1e-16 * std::fabs(x)) break;
  }
  return upper ? -x : x;
}

}  // namespace flambeau::special
