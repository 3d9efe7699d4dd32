// polygamma(n, x), the n-th derivative of digamma, in double precision.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "cpu/special_math.h"
#include "cpu/special_zeta.h"

namespace flambeau::special {

// psi^(n)(x) = (-1)^(n+1) n! zeta(n+1, x) for n >= 1; digamma for n = 0. At the
// poles (0 and negative integers) and at -inf: (-1)^(n+1) inf, as SciPy.
inline double polygamma(int64_t n, double x) {
  if (n == 0) return digamma(x);
  const double inf = std::numeric_limits<double>::infinity();
  const double sign = n % 2 == 1 ? 1.0 : -1.0;
  if (std::isnan(x)) return x;
  if (x == inf) return sign * 0.0;
  if (x <= 0.0 && x == std::floor(x)) return sign * inf;  // -inf included
  return sign * std::tgamma(static_cast<double>(n) + 1.0) * zeta(static_cast<double>(n) + 1.0, x);
}

}  // namespace flambeau::special
