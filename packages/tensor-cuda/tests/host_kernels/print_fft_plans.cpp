// Prints the cuFFT plans an FFT primitive runs (csrc/backend/kernels/fft_plan.h,
// here on the host) as one JSON object, so that the test can carry them out with
// NumPy on dense buffers and compare with numpy.fft:
//
//   print_fft_plans KIND K SIZE...
//
// KIND: c2c, r2c or c2r; K: how many of the last dims are transformed; SIZE...: the
// buffer's sizes on the real side (c2r: the output's). Also prints the permutation
// of `ndim` dims for the transformed dims given after "perm" (fft_permutation):
//
//   print_fft_plans perm NDIM DIM...
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backend/kernels/fft_plan.h"

using namespace flambeau::cuda::kernels;

namespace {

void print_list(const int64_t* v, int n) {
  std::printf("[");
  for (int i = 0; i < n; ++i) std::printf(i ? ", %lld" : "%lld", static_cast<long long>(v[i]));
  std::printf("]");
}

const char* kind_name(FftKind k) {
  return k == FftKind::kC2C ? "c2c" : (k == FftKind::kR2C ? "r2c" : "c2r");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && !std::strcmp(argv[1], "perm")) {
    std::vector<int> dims;
    for (int i = 3; i < argc; ++i) dims.push_back(std::atoi(argv[i]));
    const std::vector<int> perm = fft_permutation(std::atoi(argv[2]), dims);
    std::printf("[");
    for (size_t i = 0; i < perm.size(); ++i) std::printf(i ? ", %d" : "%d", perm[i]);
    std::printf("]\n");
    return 0;
  }
  if (argc < 4) return 2;
  const FftKind kind = !std::strcmp(argv[1], "c2c")   ? FftKind::kC2C
                       : !std::strcmp(argv[1], "r2c") ? FftKind::kR2C
                                                      : FftKind::kC2R;
  const size_t k = std::strtoul(argv[2], nullptr, 10);
  std::vector<int64_t> sizes;
  for (int i = 3; i < argc; ++i) sizes.push_back(std::strtoll(argv[i], nullptr, 10));
  const std::vector<FftPlanStep> steps = fft_plan_steps(kind, sizes, k);
  std::printf("[");
  for (size_t i = 0; i < steps.size(); ++i) {
    const FftPlanStep& s = steps[i];
    std::printf(i ? ", {" : "{");
    std::printf("\"kind\": \"%s\", \"n\": ", kind_name(s.kind));
    print_list(s.n, s.rank);
    std::printf(", \"inembed\": ");
    print_list(s.inembed, s.rank);
    std::printf(", \"onembed\": ");
    print_list(s.onembed, s.rank);
    std::printf(
        ", \"istride\": %lld, \"idist\": %lld, \"ostride\": %lld, \"odist\": %lld, \"batch\": "
        "%lld, \"count\": %lld, \"in_step\": %lld, \"out_step\": %lld}",
        static_cast<long long>(s.istride), static_cast<long long>(s.idist),
        static_cast<long long>(s.ostride), static_cast<long long>(s.odist),
        static_cast<long long>(s.batch), static_cast<long long>(s.count),
        static_cast<long long>(s.in_step), static_cast<long long>(s.out_step));
  }
  std::printf("]\n");
  return 0;
}
