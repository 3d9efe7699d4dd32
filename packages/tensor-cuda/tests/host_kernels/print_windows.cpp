// Prints the window functions' points as the CUDA kernel computes them
// (csrc/backend/kernels/window_math.h, here on the host) so the test can compare
// them with the CPU's windows:
//
//   print_windows KIND N PERIODIC ALPHA BETA
//
// KIND: bartlett, blackman, hamming, hann or kaiser; one point per line, %.17g.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backend/kernels/window_math.h"

using namespace flambeau::cuda::kernels;

int main(int argc, char** argv) {
  if (argc != 6) return 2;
  const char* kind = argv[1];
  const WindowOp op = !std::strcmp(kind, "bartlett")   ? WindowOp::kBartlett
                      : !std::strcmp(kind, "blackman") ? WindowOp::kBlackman
                      : !std::strcmp(kind, "hamming")  ? WindowOp::kHamming
                      : !std::strcmp(kind, "hann")     ? WindowOp::kHann
                                                       : WindowOp::kKaiser;
  const int64_t n = std::strtoll(argv[2], nullptr, 10);
  const bool periodic = std::atoi(argv[3]) != 0;
  const WindowParams p =
      window_params(op, std::strtod(argv[4], nullptr), std::strtod(argv[5], nullptr));
  for (int64_t i = 0; i < n; ++i) std::printf("%.17g\n", window_point(p, i, n, periodic));
  return 0;
}
