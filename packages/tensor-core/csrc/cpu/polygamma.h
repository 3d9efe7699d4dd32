// polygamma(n, x), the n-th derivative of digamma, in double precision.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "cpu/special_math.h"

namespace flambeau::special {

// Hurwitz zeta(s, q) = sum_{k >= 0} (q + k)^-s for an integer s >= 2 and a q
// that is not a pole (0 or a negative integer): the first terms summed until
// q + k is large, then the Euler-Maclaurin tail with Bernoulli numbers.
inline double hurwitz_zeta_int(double s, double q) {
  const double eps = std::numeric_limits<double>::epsilon();
  double sum = std::pow(q, -s), a = q, term = 0.0;
  for (int i = 0; i < 9 || a <= 9.0; ++i) {
    a += 1.0;
    term = std::pow(a, -s);
    sum += term;
    if (std::fabs(term / sum) < eps) return sum;
  }
  // Tail from a: a^(1-s) / (s-1) - a^-s / 2 (a's term is already in the sum)
  // + sum_k B_2k / (2k)! * s (s+1) ... (s+2k-2) * a^(-s-2k+1).
  static const double kBernoulliOverFactorial[] = {1.0 / 12.0,
                                                   -1.0 / 720.0,
                                                   1.0 / 30240.0,
                                                   -1.0 / 1209600.0,
                                                   1.0 / 47900160.0,
                                                   -691.0 / 1307674368000.0,
                                                   1.0 / 74724249600.0,
                                                   -3617.0 / 10670622842880000.0,
                                                   43867.0 / 5109094217170944000.0,
                                                   -174611.0 / 802857662698291200000.0,
                                                   77683.0 / 14101100039391805440000.0,
                                                   -236364091.0 / 1693824136731743669452800000.0};
  sum += term * a / (s - 1.0) - 0.5 * term;
  double rising = 1.0, power = term;  // s (s+1) ... and a^-s / a^(2k-1)
  double k = 0.0;
  for (double c : kBernoulliOverFactorial) {
    rising *= s + k;
    power /= a;
    double t = c * rising * power;
    sum += t;
    if (std::fabs(t / sum) < eps) break;
    rising *= s + k + 1.0;
    power /= a;
    k += 2.0;
  }
  return sum;
}

// psi^(n)(x) = (-1)^(n+1) n! zeta(n+1, x) for n >= 1; digamma for n = 0. At the
// poles (0 and negative integers) and at -inf: (-1)^(n+1) inf, as SciPy.
inline double polygamma(int64_t n, double x) {
  if (n == 0) return digamma(x);
  const double inf = std::numeric_limits<double>::infinity();
  const double sign = n % 2 == 1 ? 1.0 : -1.0;
  if (std::isnan(x)) return x;
  if (x == inf) return sign * 0.0;
  if (x <= 0.0 && x == std::floor(x)) return sign * inf;  // -inf included
  return sign * std::tgamma(static_cast<double>(n) + 1.0) *
         hurwitz_zeta_int(static_cast<double>(n) + 1.0, x);
}

}  // namespace flambeau::special
