// Prints what the CUDA random kernels would write (csrc/backend/kernels/
// random_sampling.h, computed here on the host with the kernels' own element-to-
// lane mapping) so the test can compare them with the CPU's samplers:
//
//   print_random_samples KIND UNIT SEED BASE N A B
//
// KIND: uniform (A = from, B = to), normal (A = mean, B = std), random (A = from,
// B = range), bernoulli (A = p); UNIT: float64, float32, float16 or bfloat16 (the
// element type, which decides the lanes per element). One value per line, %.17g,
// in double before the rounding to the element type (float for the 16-bit floats:
// the kernels round to the compute type first, as the CPU does).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backend/kernels/random_sampling.h"

using namespace flambeau::cuda::kernels;

int main(int argc, char** argv) {
  if (argc != 8) return 2;
  const char* kind = argv[1];
  const char* unit = argv[2];
  const uint64_t seed = std::strtoull(argv[3], nullptr, 10);
  const uint64_t base = std::strtoull(argv[4], nullptr, 10);
  const int64_t n = std::strtoll(argv[5], nullptr, 10);
  const double a = std::strtod(argv[6], nullptr), b = std::strtod(argv[7], nullptr);
  const UnitKind u = !std::strcmp(unit, "float64")    ? UnitKind::kFloat64
                     : !std::strcmp(unit, "float16")  ? UnitKind::kFloat16
                     : !std::strcmp(unit, "bfloat16") ? UnitKind::kBFloat16
                                                      : UnitKind::kFloat32;
  const bool is_random = !std::strcmp(kind, "random");
  const uint64_t range = static_cast<uint64_t>(b);
  int k = 1;
  if (!std::strcmp(kind, "uniform") || !std::strcmp(kind, "normal")) k = lanes_per_uniform(u);
  if (is_random && range > (uint64_t(1) << 32)) k = 2;
  const int per = 4 / k;
  for (int64_t i = 0; i < n; ++i) {
    const PhiloxBlock blk = philox4x32(seed, base + static_cast<uint64_t>(i / per));
    const int q = static_cast<int>(i % per) * k;
    double v;
    if (!std::strcmp(kind, "uniform"))
      v = a + unit_from(blk, q, u) * (b - a);
    else if (!std::strcmp(kind, "normal"))
      v = a + b * normal_from(blk, i, k);
    else if (is_random)
      v = static_cast<double>(random_from(blk, q, k, static_cast<int64_t>(a), range));
    else
      v = bernoulli_unit(blk, q) < a ? 1.0 : 0.0;
    if (u != UnitKind::kFloat64 && !is_random) v = static_cast<float>(v);
    std::printf("%.17g\n", v);
  }
  return 0;
}
