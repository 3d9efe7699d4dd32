// The regularized incomplete gamma functions P(a, x) (torch.igamma,
// special.gammainc) and Q(a, x) = 1 - P(a, x) (torch.igammac, special.gammaincc)
// in double precision.
//
// The smaller of P and Q is computed directly, the other as 1 minus it: P from
// its power series (DLMF 8.7.1) when x < a + 1, Q from its continued fraction
// (DLMF 8.9.2) otherwise. Both converge in O(sqrt(a)) steps near x = a, so for
// a > 1e5 and x near a, Temme's uniform asymptotic expansion (DLMF 8.12.3, 8.12.4
// with the terms c_0 and c_1) takes over; its error there is below 1e-13.
#pragma once
#include <math.h>

#include <cmath>
#include <limits>

namespace flambeau::special {

namespace gamma_detail {

constexpr double kPi = 3.14159265358979323846;
constexpr double kEps = std::numeric_limits<double>::epsilon();

// log(1 + t) - t, without the cancellation of the naive form for small t.
inline double log1pmx(double t) {
  if (std::fabs(t) > 0.25) return std::log1p(t) - t;
  double power = t, sum = 0.0;  // -t^2/2 + t^3/3 - t^4/4 + ...
  for (int k = 2; k < 60; ++k) {
    power *= -t;
    const double term = power / k;
    sum += term;
    if (std::fabs(term) <= kEps * std::fabs(sum)) break;
  }
  return sum;
}

// lgamma(a) - ((a - 1/2) log a - a + log(2 pi) / 2), from Stirling's series; a >= 10.
inline double stirling_correction(double a) {
  // B_2k / (2k (2k - 1)), k = 8 down to 1.
  static const double c[] = {-3617.0 / 122400.0, 1.0 / 156.0,  -691.0 / 360360.0, 1.0 / 1188.0,
                             -1.0 / 1680.0,      1.0 / 1260.0, -1.0 / 360.0,      1.0 / 12.0};
  const double z = 1.0 / (a * a);
  double sum = 0.0;
  for (double ck : c) sum = sum * z + ck;
  return sum / a;
}

// log(x^a e^-x / Gamma(a)), the factor both expansions share. For large a the
// naive form loses digits to cancellation; with Stirling's series it is
// a (log(x/a) - t) + log(a / 2 pi) / 2 - stirling_correction(a), t = (x - a) / a,
// where log(x/a) - t = log1pmx(t) when t is small.
inline double log_prefactor(double a, double x) {
  if (a < 10.0) {
    int sign;
    return a * std::log(x) - x - lgamma_r(a, &sign);
  }
  const double t = (x - a) / a;
  const double main = std::fabs(t) <= 0.25 ? a * log1pmx(t) : a * std::log(x / a) - (x - a);
  return main + 0.5 * std::log(a / (2.0 * kPi)) - stirling_correction(a);
}

// P(a, x) = x^a e^-x / Gamma(a + 1) * sum_k x^k / ((a+1) ... (a+k)).
inline double lower_series(double a, double x) {
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 100000; ++k) {
    term *= x / (a + k);
    sum += term;
    if (term <= kEps * sum) break;
  }
  return std::exp(log_prefactor(a, x)) * sum / a;
}

// Q(a, x) = x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) /
// (x + 5 - a - ...))), evaluated forwards by the modified Lentz method.
inline double upper_fraction(double a, double x) {
  const double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) <= kEps) break;
  }
  return std::exp(log_prefactor(a, x)) * h;
}

// Temme's expansion: with lambda = x / a, d = lambda - 1 and
// eta = sign(d) sqrt(2 (lambda - 1 - log lambda)),
// Q = erfc(eta sqrt(a/2)) / 2 + R, P = erfc(-eta sqrt(a/2)) / 2 - R, where
// R = exp(-a eta^2 / 2) / sqrt(2 pi a) (c_0 + c_1 / a),
// c_0 = 1/d - 1/eta and c_1 = 1/eta^3 - 1/d^3 - 1/d^2 - 1/(12 d). Near d = 0 those
// cancel; there their Taylor series in d are used.
inline double temme(double a, double x, bool upper) {
  const double d = (x - a) / a;
  const double eta = std::copysign(std::sqrt(-2.0 * log1pmx(d)), d);
  double c0, c1;
  if (std::fabs(d) < 0.01) {
    static const double t0[] = {-1.0 / 3.0,         1.0 / 12.0,           -23.0 / 540.0,
                                353.0 / 12960.0,    -589.0 / 30240.0,     81083.0 / 5443200.0,
                                -7783.0 / 653184.0, 514303.0 / 52254720.0};
    static const double t1[] = {-1.0 / 540.0,        -1.0 / 288.0,       23.0 / 6048.0,
                                -3733.0 / 1088640.0, 3253.0 / 1088640.0, -135719.0 / 52254720.0};
    c0 = c1 = 0.0;
    for (int k = 7; k >= 0; --k) c0 = c0 * d + t0[k];
    for (int k = 5; k >= 0; --k) c1 = c1 * d + t1[k];
  } else {
    c0 = 1.0 / d - 1.0 / eta;
    c1 = 1.0 / (eta * eta * eta) - 1.0 / (d * d * d) - 1.0 / (d * d) - 1.0 / (12.0 * d);
  }
  const double r = std::exp(-0.5 * a * eta * eta) / std::sqrt(2.0 * kPi * a) * (c0 + c1 / a);
  const double z = eta * std::sqrt(a / 2.0);
  return upper ? 0.5 * std::erfc(z) + r : 0.5 * std::erfc(-z) - r;
}

// P(a, x) (upper = false) or Q(a, x) (upper = true), with PyTorch's values at the
// edges: NaN for a < 0 or x < 0 or at a = x = 0 or a = x = inf; P(0, x) = 1 for x > 0,
// P(a, 0) = 0, P(inf, x) = 0 and P(a, inf) = 1 otherwise.
inline double incomplete_gamma(double a, double x, bool upper) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  if (std::isnan(a) || std::isnan(x) || a < 0.0 || x < 0.0) return nan;
  auto result = [upper](double p) { return upper ? 1.0 - p : p; };
  if (a == 0.0) return x > 0.0 ? result(1.0) : nan;
  if (x == 0.0) return result(0.0);
  if (a == inf) return x == inf ? nan : result(0.0);
  if (x == inf) return result(1.0);
  if (a > 1e5 && std::fabs(x - a) < 0.3 * a) return temme(a, x, upper);
  if (x < a + 1.0) {
    const double p = lower_series(a, x);
    return upper ? 1.0 - p : p;
  }
  const double q = upper_fraction(a, x);
  return upper ? q : 1.0 - q;
}

}  // namespace gamma_detail

inline double igamma(double a, double x) { return gamma_detail::incomplete_gamma(a, x, false); }
inline double igammac(double a, double x) { return gamma_detail::incomplete_gamma(a, x, true); }

}  // namespace flambeau::special
