// Evaluates the special functions of csrc/backend/kernels/special_functions.h (the
// CUDA kernels' __host__ __device__ code) on the host, for
// tests/test_special_functions.py to compare with flambeau's CPU kernels. Reads lines
// "<function> <a> [<b>]" from stdin and prints one value a line ("%.17g").
#include <cstdio>
#include <cstring>

#include "backend/kernels/special_functions.h"

namespace sf = flambeau::cuda::kernels::special;

namespace {

struct Unary {
  const char* name;
  double (*fn)(double);
};
struct Binary {
  const char* name;
  double (*fn)(double, double);
};

double lgamma_of(double x) { return lgamma(x); }
double mvlgamma_of(double x, double p) { return sf::mvlgamma(x, static_cast<int64_t>(p)); }
double polygamma_of(double n, double x) { return sf::polygamma(static_cast<int64_t>(n), x); }

const Unary kUnary[] = {
    {"lgamma", lgamma_of},
    {"digamma", sf::digamma},
    {"erfinv", sf::erfinv},
    {"entr", sf::entr},
    {"erfcx", sf::erfcx},
    {"ndtr", sf::ndtr},
    {"ndtri", sf::ndtri},
    {"log_ndtr", sf::log_ndtr},
    {"spherical_bessel_j0", sf::spherical_bessel_j0},
    {"i0", sf::modified_bessel_i0},
    {"i0e", sf::bessel_i0e},
    {"i1", sf::modified_bessel_i1},
    {"i1e", sf::bessel_i1e},
};
const Binary kBinary[] = {
    {"mvlgamma", mvlgamma_of},    // (x, p)
    {"polygamma", polygamma_of},  // (n, x)
    {"igamma", sf::igamma},
    {"igammac", sf::igammac},
    {"zeta", sf::zeta},
    {"chebyshev_polynomial_t", sf::chebyshev_polynomial_t},
    {"chebyshev_polynomial_u", sf::chebyshev_polynomial_u},
    {"chebyshev_polynomial_v", sf::chebyshev_polynomial_v},
    {"chebyshev_polynomial_w", sf::chebyshev_polynomial_w},
    {"shifted_chebyshev_polynomial_t", sf::shifted_chebyshev_polynomial_t},
    {"shifted_chebyshev_polynomial_u", sf::shifted_chebyshev_polynomial_u},
    {"shifted_chebyshev_polynomial_v", sf::shifted_chebyshev_polynomial_v},
    {"shifted_chebyshev_polynomial_w", sf::shifted_chebyshev_polynomial_w},
    {"hermite_polynomial_h", sf::hermite_polynomial_h},
    {"hermite_polynomial_he", sf::hermite_polynomial_he},
    {"laguerre_polynomial_l", sf::laguerre_polynomial_l},
    {"legendre_polynomial_p", sf::legendre_polynomial_p},
};

}  // namespace

int main() {
  char name[64];
  while (std::scanf("%63s", name) == 1) {
    double a = 0, b = 0;
    bool done = false;
    for (const Unary& u : kUnary) {
      if (std::strcmp(u.name, name) != 0) continue;
      if (std::scanf("%lf", &a) != 1) return 2;
      std::printf("%.17g\n", u.fn(a));
      done = true;
    }
    for (const Binary& f : kBinary) {
      if (std::strcmp(f.name, name) != 0) continue;
      if (std::scanf("%lf %lf", &a, &b) != 2) return 2;
      std::printf("%.17g\n", f.fn(a, b));
      done = true;
    }
    if (!done) {
      std::printf("unknown function %s\n", name);
      return 1;
    }
  }
  return 0;
}
