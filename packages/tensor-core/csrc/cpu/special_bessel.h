// The Bessel-type functions of torch.special, in double precision (float callers
// compute in double and round). Moderate arguments go to libstdc++'s C++17
// special math (std::cyl_bessel_j, std::cyl_neumann, std::cyl_bessel_i,
// std::cyl_bessel_k). What it does not cover is done here: negative arguments
// (by symmetry), tiny ones (leading terms of the power series), large ones
// (Hankel's asymptotic expansion, which also gives the exponentially scaled
// forms without overflow) and the Airy function. Infinities and NaN give what
// PyTorch and SciPy give.
#pragma once
#include <cmath>
#include <limits>
#include <stdexcept>

namespace flambeau::special {

namespace bessel_detail {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.14159265358979323846;
constexpr double kEulerGamma = 0.57721566490153286061;
constexpr double kLog2 = 0.69314718055994530942;
// Below this the power series' leading terms are exact in double precision.
constexpr double kTiny = 1e-8;
// From here on Hankel's expansion converges to double precision (its smallest
// term is about exp(-2x)).
constexpr double kLarge = 20.0;

// libstdc++ reports arguments its algorithms cannot handle by throwing; a kernel
// must not throw, so such a value becomes NaN. The callers below keep to the
// arguments libstdc++ handles, so this is a safety net.
template <class F>
double guarded(F f) {
  try {
    return f();
  } catch (const std::exception&) {
    return kNaN;
  }
}

// Hankel's expansion (DLMF 10.40.1, 10.40.2) of the scaled modified Bessel
// functions for large x: e^-x I_nu(x) ~ sum_k (-1)^k a_k(nu) / x^k / sqrt(2 pi x)
// and e^x K_nu(x) ~ sum_k a_k(nu) / x^k * sqrt(pi / 2x), where
// a_k(nu) = prod_{j=1..k} (4 nu^2 - (2j - 1)^2) / (k! 8^k). `sign` is -1 for I and
// +1 for K. The series diverges eventually: it stops at its smallest term.
inline double hankel_sum(double nu, double x, double sign) {
  const double mu = 4.0 * nu * nu;
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 100; ++k) {
    const double odd = 2.0 * k - 1.0;
    const double next = term * sign * (mu - odd * odd) / (8.0 * k * x);
    if (std::fabs(next) >= std::fabs(term)) break;
    term = next;
    sum += term;
    if (std::fabs(term) < 1e-17 * std::fabs(sum)) break;
  }
  return sum;
}

// e^-x I_nu(x) and e^x K_nu(x) for x >= kLarge (an infinite x gives 0).
inline double scaled_i_large(double nu, double x) {
  return hankel_sum(nu, x, -1.0) / std::sqrt(2.0 * kPi * x);
}
inline double scaled_k_large(double nu, double x) {
  return hankel_sum(nu, x, 1.0) * std::sqrt(kPi / (2.0 * x));
}

// log(x / 2) + gamma, without x / 2 underflowing for subnormal x.
inline double log_half_plus_gamma(double x) { return std::log(x) - kLog2 + kEulerGamma; }

// I_0(x) ~ 1 + x^2/4 and I_1(x) ~ x/2 (1 + x^2/8) for tiny x >= 0 (libstdc++'s series
// takes log(x / 2), -inf for subnormal x).
inline double bessel_i_tiny(double nu, double x) {
  return nu == 0 ? 1.0 + x * x / 4 : x / 2 * (1.0 + x * x / 8);
}

// I_n(x) for x >= 0 and order 0 or 1.
inline double bessel_i(double nu, double x) {
  if (std::isnan(x) || std::isinf(x)) return kNaN;  // as PyTorch and SciPy
  if (x < kTiny) return bessel_i_tiny(nu, x);
  if (x < kLarge) return guarded([&] { return std::cyl_bessel_i(nu, x); });
  const double half = std::exp(x / 2);  // e^x in two halves: I_nu overflows later than e^x
  return scaled_i_large(nu, x) * half * half;
}

// e^-x I_n(x) for x >= 0 (NaN stays NaN, 0 at inf).
inline double bessel_i_scaled(double nu, double x) {
  if (std::isnan(x)) return x;
  if (x < kTiny) return bessel_i_tiny(nu, x) * std::exp(-x);
  if (x < kLarge) return guarded([&] { return std::cyl_bessel_i(nu, x); }) * std::exp(-x);
  return scaled_i_large(nu, x);
}

// K_n(x) (scaled: e^x K_n(x)) for order 0 or 1; NaN for x < 0, inf at 0.
inline double bessel_k(double nu, double x, bool scaled) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return kInf;
  double k;
  if (x < kTiny) {
    // K_0(x) ~ -(log(x/2) + gamma), K_1(x) ~ 1/x + x/2 (log(x/2) + gamma - 1/2).
    const double l = log_half_plus_gamma(x);
    k = nu == 0 ? -l : 1.0 / x + x / 2 * (l - 0.5);
  } else if (x < kLarge) {
    k = guarded([&] { return std::cyl_bessel_k(nu, x); });
  } else {
    const double s = scaled_k_large(nu, x);
    return scaled ? s : s * std::exp(-x);
  }
  return scaled ? k * std::exp(x) : k;
}

}  // namespace bessel_detail

// Bessel functions of the first kind: J_0 is even, J_1 odd.
inline double bessel_j0(double x) {
  using namespace bessel_detail;
  x = std::fabs(x);
  if (std::isnan(x) || std::isinf(x)) return kNaN;
  if (x < kTiny) return 1.0 - x * x / 4;
  return guarded([&] { return std::cyl_bessel_j(0.0, x); });
}

inline double bessel_j1(double x) {
  using namespace bessel_detail;
  if (std::isnan(x) || std::isinf(x)) return kNaN;
  const double a = std::fabs(x);
  const double j =
      a < kTiny ? a / 2 * (1.0 - a * a / 8) : guarded([&] { return std::cyl_bessel_j(1.0, a); });
  return x < 0 ? -j : j;
}

// Bessel functions of the second kind: NaN for x < 0, -inf at 0.
inline double bessel_y0(double x) {
  using namespace bessel_detail;
  if (std::isnan(x) || x < 0 || std::isinf(x)) return kNaN;
  if (x == 0) return -kInf;
  if (x < kTiny) return 2.0 / kPi * log_half_plus_gamma(x);
  return guarded([&] { return std::cyl_neumann(0.0, x); });
}

inline double bessel_y1(double x) {
  using namespace bessel_detail;
  if (std::isnan(x) || x < 0 || std::isinf(x)) return kNaN;
  if (x == 0) return -kInf;
  // Y_1(x) ~ -2 / (pi x) + x / pi (log(x/2) + gamma - 1/2).
  if (x < kTiny) return -2.0 / (kPi * x) + x / kPi * (log_half_plus_gamma(x) - 0.5);
  return guarded([&] { return std::cyl_neumann(1.0, x); });
}

// Modified Bessel functions of the first kind: I_0 even, I_1 odd.
inline double modified_bessel_i0(double x) { return bessel_detail::bessel_i(0.0, std::fabs(x)); }

inline double modified_bessel_i1(double x) {
  const double i = bessel_detail::bessel_i(1.0, std::fabs(x));
  return x < 0 ? -i : i;
}

// Exponentially scaled: e^-|x| I_0(x) and e^-|x| I_1(x).
inline double bessel_i0e(double x) { return bessel_detail::bessel_i_scaled(0.0, std::fabs(x)); }

inline double bessel_i1e(double x) {
  const double i = bessel_detail::bessel_i_scaled(1.0, std::fabs(x));
  return x < 0 ? -i : i;
}

// Modified Bessel functions of the second kind, plain and scaled by e^x.
inline double modified_bessel_k0(double x) { return bessel_detail::bessel_k(0.0, x, false); }
inline double modified_bessel_k1(double x) { return bessel_detail::bessel_k(1.0, x, false); }
inline double scaled_modified_bessel_k0(double x) { return bessel_detail::bessel_k(0.0, x, true); }
inline double scaled_modified_bessel_k1(double x) { return bessel_detail::bessel_k(1.0, x, true); }

// Spherical Bessel function j_0(x) = sin(x) / x.
inline double spherical_bessel_j0(double x) {
  if (std::isinf(x)) return 0.0;
  if (x == 0) return 1.0;
  return std::sin(x) / x;
}

// The Airy function Ai(x). Near 0 its Maclaurin series (DLMF 9.4.1); for x > 1
// Ai(x) = sqrt(x / 3) K_{1/3}(z) / pi and for x < -1
// Ai(x) = sqrt(-x) / 2 (J_{1/3}(z) - Y_{1/3}(z) / sqrt(3)), with z = 2/3 |x|^(3/2)
// (DLMF 9.6.1, 9.6.6 rewritten with Y). Infinities give NaN, as in PyTorch and SciPy.
inline double airy_ai(double x) {
  using namespace bessel_detail;
  if (std::isnan(x) || std::isinf(x)) return kNaN;
  const double a = std::fabs(x);
  if (a <= 1.0) {
    // Ai(x) = Ai(0) f(x) + Ai'(0) g(x), f = 1 + x^3/3! + 1*4 x^6/6! + ...,
    // g = x + 2 x^4/4! + 2*5 x^7/7! + ...
    const double ai0 = 0.355028053887817239260, dai0 = -0.258819403792806798405;
    const double x3 = x * x * x;
    double f = 1.0, g = x, tf = 1.0, tg = x;
    for (int k = 0; k < 30; ++k) {
      tf *= x3 / ((3.0 * k + 2.0) * (3.0 * k + 3.0));
      tg *= x3 / ((3.0 * k + 3.0) * (3.0 * k + 4.0));
      f += tf;
      g += tg;
      if (std::fabs(tf) < 1e-17 * std::fabs(f) && std::fabs(tg) < 1e-17 * std::fabs(g) + 1e-300)
        break;
    }
    return ai0 * f + dai0 * g;
  }
  const double z = 2.0 / 3.0 * a * std::sqrt(a);
  if (x > 0) {
    const double k = z < kLarge ? guarded([&] { return std::cyl_bessel_k(1.0 / 3.0, z); })
                                : scaled_k_large(1.0 / 3.0, z) * std::exp(-z);
    return std::sqrt(x / 3.0) * k / kPi;
  }
  if (std::isinf(z)) return 0.0;  // |Ai(x)| <= |x|^(-1/4) / sqrt(pi)
  const double j = guarded([&] { return std::cyl_bessel_j(1.0 / 3.0, z); });
  const double y = guarded([&] { return std::cyl_neumann(1.0 / 3.0, z); });
  return std::sqrt(a) / 2.0 * (j - y / std::sqrt(3.0));
}

}  // namespace flambeau::special
