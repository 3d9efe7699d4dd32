// The Hurwitz zeta function zeta(s, q) = sum_{k >= 0} (q + k)^-s in double
// precision, for torch.special.zeta and polygamma.
#pragma once
#include <cmath>
#include <limits>

namespace flambeau::special {

// zeta(s, q) for real s > 1 and q > 0: the first terms summed until q + k is
// large enough, then the Euler-Maclaurin formula for the rest: a^(1-s) / (s-1)
// + a^-s / 2 + sum_j B_2j / (2j)! s (s+1) ... (s+2j-2) a^(1-s-2j), where a is the
// first term left out and B_2j are Bernoulli numbers.
inline double hurwitz_zeta(double s, double q) {
  const double eps = std::numeric_limits<double>::epsilon();
  // The tail's series needs a well above s / (2 pi): its terms shrink like
  // ((s + 2j) / (2 pi a))^2. A large s makes the direct terms vanish at once.
  const double start_tail = std::fmax(9.0, (s + 24.0) / 2.0);
  double sum = 0.0, a = q;
  for (int k = 0; a < start_tail && k < 1000; ++k) {
    const double term = std::pow(a, -s);
    sum += term;
    a += 1.0;
    // What is left is at most about term * a / (s - 1): stop once that is negligible
    // (or everything underflowed).
    if (term * std::fmax(1.0, a / (s - 1.0)) <= eps * sum) return sum;
  }
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
  // Powers from logs, each on its own: a^-s may underflow where a^(1-s) does not.
  const double log_a = std::log(a);
  const double power = std::exp((1.0 - s) * log_a);  // a^(1-s)
  double tail = power / (s - 1.0) + 0.5 * std::exp(-s * log_a);
  double rising = s, scaled = power / a;  // s (s+1) ... (s+2j-2) and a^(1-s-2j)
  const double inv_a2 = 1.0 / (a * a);
  for (size_t j = 0; j < sizeof(kBernoulliOverFactorial) / sizeof(double); ++j) {
    if (j > 0) rising *= (s + 2.0 * j - 1.0) * (s + 2.0 * j);
    scaled = j == 0 ? scaled / a : scaled * inv_a2;
    const double t = kBernoulliOverFactorial[j] * rising * scaled;
    tail += t;
    if (std::fabs(t) <= eps * std::fabs(sum + tail)) break;
  }
  return sum + tail;
}

// torch.special.zeta(x, q): inf at x = 1 and at the poles q = 0, -1, -2, ...;
// NaN for x < 1 and for a negative q with a non-integer x (q^-x is not real).
// zeta(x, inf) is 0, as in SciPy (PyTorch gives NaN).
// For a negative q and an integer x the terms with negative q + k are summed
// directly, or, when there are many, from the identity
// sum_{m=1..M} (f - m)^-x = (-1)^x (zeta(x, 1 - f) - zeta(x, M + 1 - f)).
inline double zeta(double x, double q) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  if (std::isnan(x) || std::isnan(q)) return nan;
  if (x == 1.0) return inf;
  if (x < 1.0) return nan;
  // The sum is 0 for x = inf and q > 1; PyTorch and SciPy give NaN there.
  if (x == inf && q > 1.0) return nan;
  if (q > 0.0) return hurwitz_zeta(x, q);
  if (q == std::floor(q)) return inf;
  if (x != std::floor(x)) return nan;
  const double m_count = -std::floor(q);  // the negative terms are f - 1, ..., f - M
  const double f = q + m_count;           // q's fractional part, in (0, 1)
  if (m_count <= 64.0) {
    double negative = 0.0;
    for (double v = q; v < 0.0; v += 1.0) negative += std::pow(v, -x);
    return hurwitz_zeta(x, f) + negative;
  }
  // For odd x and f = 1/2 the first two terms cancel exactly: add them first.
  const double sign = std::fmod(x, 2.0) == 0.0 ? 1.0 : -1.0;
  return (hurwitz_zeta(x, f) + sign * hurwitz_zeta(x, 1.0 - f)) -
         sign * hurwitz_zeta(x, m_count + 1.0 - f);
}

}  // namespace flambeau::special
