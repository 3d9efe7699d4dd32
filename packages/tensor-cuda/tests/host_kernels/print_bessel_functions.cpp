// Evaluates the Bessel and Airy functions of csrc/backend/kernels/bessel_functions.h (the
// CUDA kernels' __host__ __device__ code) on the host, for tests/test_bessel_functions.py
// to compare with flambeau's CPU kernels. Reads lines "<function> <x>" from stdin and
// prints one value a line ("%.17g").
#include <cstdio>
#include <cstring>

#include "backend/kernels/bessel_functions.h"

namespace sf = flambeau::cuda::kernels::special;

namespace {

struct Unary {
  const char* name;
  double (*fn)(double);
};

const Unary kUnary[] = {
    {"bessel_j0", sf::bessel_j0},
    {"bessel_j1", sf::bessel_j1},
    {"bessel_y0", sf::bessel_y0},
    {"bessel_y1", sf::bessel_y1},
    {"modified_bessel_k0", sf::modified_bessel_k0},
    {"modified_bessel_k1", sf::modified_bessel_k1},
    {"scaled_modified_bessel_k0", sf::scaled_modified_bessel_k0},
    {"scaled_modified_bessel_k1", sf::scaled_modified_bessel_k1},
    {"airy_ai", sf::airy_ai},
};

}  // namespace

int main() {
  char name[64];
  while (std::scanf("%63s", name) == 1) {
    double x = 0;
    if (std::scanf("%lf", &x) != 1) return 2;
    bool done = false;
    for (const Unary& u : kUnary) {
      if (std::strcmp(u.name, name) != 0) continue;
      std::printf("%.17g\n", u.fn(x));
      done = true;
    }
    if (!done) {
      std::printf("unknown function %s\n", name);
      return 1;
    }
  }
  return 0;
}
