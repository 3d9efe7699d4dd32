// The orthogonal polynomials of torch.special, p_n(x) in double precision. The
// degree n arrives as a floating-point number and is read as PyTorch reads it:
// truncated toward zero, with p_n = 0 for a negative degree. A NaN degree or
// argument gives NaN; at x = +-inf a polynomial of degree n >= 1 is +-inf, with
// the sign of its leading term.
//
// Values come from each family's three-term recurrence (DLMF 18.9.1 with Table
// 18.9.1), or from std::hermite and std::legendre where libstdc++ covers the
// argument. Chebyshev polynomials of high degree use their closed forms in
// cos/cosh (DLMF 18.5.1-18.5.4), which cost the same for every degree.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

namespace flambeau::special {

namespace poly_detail {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
// Up to this degree Chebyshev polynomials use the recurrence (exact for small
// integer arguments), above it the closed forms.
constexpr double kChebyshevRecurrenceDegree = 64;
// Recurrences stop at this degree: where the values stay bounded (Legendre on
// [-1, 1], Laguerre for small x >= 0) a larger degree would take seconds per
// element, and such degrees give NaN. Where the values grow, they overflow long
// before it.
constexpr double kMaxRecurrenceDegree = 1 << 24;

inline bool is_odd(double n) { return std::fmod(n, 2.0) != 0.0; }

// The shared preamble: NaN, negative degrees and degree 0. Sets n to the
// truncated degree; returns true (with the value in *out) when that settles it.
inline bool trivial(double x, double& n, double* out) {
  if (std::isnan(x) || std::isnan(n)) return *out = kNaN, true;
  n = std::trunc(n);
  if (n < 0) return *out = 0.0, true;
  if (n == 0) return *out = 1.0, true;
  return false;
}

// +-inf for p_n(+-inf): the sign of lead * x^n (lead is the leading coefficient's sign).
inline double at_infinity(double x, double n, double lead) {
  return (x < 0 && is_odd(n)) ? -lead * kInf : lead * kInf;
}

// p_n(x) from p_0 = 1, p_1 and p_{k+1} = next(k, p_k, p_{k-1}), for n >= 1. A value
// that overflows before degree n leaves the result's sign unknown: NaN.
template <class Next>
double recurrence(double n, double p1, const Next& next) {
  if (n > kMaxRecurrenceDegree) return kNaN;
  double prev = 1.0, cur = p1;
  const int64_t degree = static_cast<int64_t>(n);
  for (int64_t k = 1; k < degree; ++k) {
    const double following = next(static_cast<double>(k), cur, prev);
    prev = cur;
    cur = following;
    if (!std::isfinite(cur)) return k + 1 == degree ? cur : kNaN;
  }
  return cur;
}

// The four kinds of Chebyshev polynomials share the recurrence
// p_{k+1} = 2x p_k - p_{k-1}, from p_1 = 2x - shift with shift T: x (p_1 = x),
// U: 0, V: 1, W: -1.
enum class Kind { T, U, V, W };

inline double chebyshev(Kind kind, double x, double n) {
  double value;
  if (trivial(x, n, &value)) return value;
  if (std::isinf(x)) return at_infinity(x, n, 1.0);
  if (n <= kChebyshevRecurrenceDegree) {
    const double p1 = kind == Kind::T   ? x
                      : kind == Kind::U ? 2.0 * x
                      : kind == Kind::V ? 2.0 * x - 1.0
                                        : 2.0 * x + 1.0;
    return recurrence(n, p1, [x](double, double p, double q) { return 2.0 * x * p - q; });
  }
  // Closed forms. With x = cos(t) on (-1, 1): T = cos(n t), U = sin((n+1) t) / sin(t),
  // V = cos((n+1/2) t) / cos(t/2), W = sin((n+1/2) t) / sin(t/2); for x > 1 the same
  // with cosh and sinh of t = acosh(x). Negative x > 1 in size by parity:
  // T, U: p_n(-x) = (-1)^n p_n(x); V_n(-x) = (-1)^n W_n(x) and W_n(-x) = (-1)^n V_n(x).
  const double sign = is_odd(n) ? -1.0 : 1.0;
  if (x == 1.0 || x == -1.0) {
    const double s = x < 0 ? sign : 1.0;
    switch (kind) {
      case Kind::T:
        return s;
      case Kind::U:
        return s * (n + 1.0);
      case Kind::V:
        return x > 0 ? 1.0 : sign * (2.0 * n + 1.0);
      case Kind::W:
        return x > 0 ? 2.0 * n + 1.0 : sign;
    }
  }
  if (std::fabs(x) < 1.0) {
    const double t = std::acos(x);
    switch (kind) {
      case Kind::T:
        return std::cos(n * t);
      case Kind::U:
        return std::sin((n + 1.0) * t) / std::sqrt((1.0 - x) * (1.0 + x));
      case Kind::V:
        return std::cos((n + 0.5) * t) / std::sqrt((1.0 + x) / 2.0);
      case Kind::W:
        return std::sin((n + 0.5) * t) / std::sqrt((1.0 - x) / 2.0);
    }
  }
  const double a = std::fabs(x), t = std::acosh(a);
  const double s = x < 0 ? sign : 1.0;
  // For x < -1 V and W swap (see above).
  const bool cosine_form = kind == Kind::T || (kind == Kind::V) == (x > 0);
  switch (kind) {
    case Kind::T:
      return s * std::cosh(n * t);
    case Kind::U:
      return s * std::sinh((n + 1.0) * t) / std::sinh(t);
    case Kind::V:
    case Kind::W:
      return cosine_form ? s * std::cosh((n + 0.5) * t) / std::cosh(t / 2.0)
                         : s * std::sinh((n + 0.5) * t) / std::sinh(t / 2.0);
  }
  return kNaN;
}

}  // namespace poly_detail

inline double chebyshev_polynomial_t(double x, double n) {
  return poly_detail::chebyshev(poly_detail::Kind::T, x, n);
}
inline double chebyshev_polynomial_u(double x, double n) {
  return poly_detail::chebyshev(poly_detail::Kind::U, x, n);
}
inline double chebyshev_polynomial_v(double x, double n) {
  return poly_detail::chebyshev(poly_detail::Kind::V, x, n);
}
inline double chebyshev_polynomial_w(double x, double n) {
  return poly_detail::chebyshev(poly_detail::Kind::W, x, n);
}

// Shifted Chebyshev polynomials: p*_n(x) = p_n(2x - 1), orthogonal on [0, 1].
inline double shifted_chebyshev_polynomial_t(double x, double n) {
  return chebyshev_polynomial_t(2.0 * x - 1.0, n);
}
inline double shifted_chebyshev_polynomial_u(double x, double n) {
  return chebyshev_polynomial_u(2.0 * x - 1.0, n);
}
inline double shifted_chebyshev_polynomial_v(double x, double n) {
  return chebyshev_polynomial_v(2.0 * x - 1.0, n);
}
inline double shifted_chebyshev_polynomial_w(double x, double n) {
  return chebyshev_polynomial_w(2.0 * x - 1.0, n);
}

// Physicists' Hermite polynomials: H_{k+1} = 2x H_k - 2k H_{k-1}, H_1 = 2x. Beyond
// degree 1000 every value overflows (|H_n| grows like sqrt(2^n n!)).
inline double hermite_polynomial_h(double x, double n) {
  using namespace poly_detail;
  double value;
  if (trivial(x, n, &value)) return value;
  if (std::isinf(x)) return at_infinity(x, n, 1.0);
  if (n > 1000) return kNaN;
  return std::hermite(static_cast<unsigned>(n), x);
}

// Probabilists' Hermite polynomials: He_{k+1} = x He_k - k He_{k-1}, He_1 = x.
inline double hermite_polynomial_he(double x, double n) {
  using namespace poly_detail;
  double value;
  if (trivial(x, n, &value)) return value;
  if (std::isinf(x)) return at_infinity(x, n, 1.0);
  return recurrence(n, x, [x](double k, double p, double q) { return x * p - k * q; });
}

// Laguerre polynomials: (k+1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}, L_1 = 1 - x;
// the leading term is (-x)^n / n!. (std::laguerre rejects x < 0.)
inline double laguerre_polynomial_l(double x, double n) {
  using namespace poly_detail;
  double value;
  if (trivial(x, n, &value)) return value;
  if (std::isinf(x)) return at_infinity(-x, n, 1.0);
  return recurrence(n, 1.0 - x, [x](double k, double p, double q) {
    return ((2.0 * k + 1.0 - x) * p - k * q) / (k + 1.0);
  });
}

// Legendre polynomials: std::legendre on [-1, 1]; outside it (which std::legendre
// rejects) the recurrence (k+1) P_{k+1} = (2k+1) x P_k - k P_{k-1}, P_1 = x.
inline double legendre_polynomial_p(double x, double n) {
  using namespace poly_detail;
  double value;
  if (trivial(x, n, &value)) return value;
  if (std::isinf(x)) return at_infinity(x, n, 1.0);
  if (std::fabs(x) <= 1.0) {
    if (n > kMaxRecurrenceDegree) return kNaN;
    return std::legendre(static_cast<unsigned>(n), x);
  }
  return recurrence(n, x, [x](double k, double p, double q) {
    return ((2.0 * k + 1.0) * x * p - k * q) / (k + 1.0);
  });
}

}  // namespace flambeau::special
