// Checks the pooling kernels' window arithmetic (csrc/backend/kernels/pool_math.h,
// __host__ __device__ code) on the host against brute-force walks of the CPU
// kernel's windows:
// - tap_range keeps exactly the max-pool taps inside the input;
// - avg_outputs_of lists exactly the outputs whose avg_pool window (clipped, the
//   end stopping at in + pad) holds an input position, so the backward's gather
//   visits what the CPU's scatter adds, in the same order;
// - adaptive_outputs_of does the same for adaptive windows, also when out > in.
// Prints "ok <cases>" or the first failure.
#include <cstdio>

#include "backend/kernels/pool_math.h"

using namespace flambeau::cuda::kernels;

namespace {

int cases = 0;

bool fail(const char* what, long long a, long long b, long long c) {
  std::printf("FAIL %s: %lld %lld %lld\n", what, a, b, c);
  return false;
}

bool check_taps() {
  for (int64_t in = 1; in <= 9; ++in)
    for (int64_t kernel = 1; kernel <= 5; ++kernel)
      for (int64_t dilation = 1; dilation <= 3; ++dilation)
        for (int64_t start = -7; start <= 10; ++start) {
          int64_t lo, hi;
          tap_range(start, dilation, kernel, in, &lo, &hi);
          for (int64_t k = 0; k < kernel; ++k) {
            const int64_t at = start + k * dilation;
            const bool inside = at >= 0 && at < in;
            if (inside != (k >= lo && k < hi)) return fail("tap_range", in, start, k);
            ++cases;
          }
        }
  return true;
}

bool check_avg() {
  for (int64_t in = 1; in <= 9; ++in)
    for (int64_t kernel = 1; kernel <= 4; ++kernel)
      for (int64_t stride = 1; stride <= 3; ++stride)
        for (int64_t pad = 0; pad <= kernel / 2; ++pad) {
          // ceil_mode may add an output whose window starts in the padding.
          const int64_t out = (in + 2 * pad - kernel + stride - 1) / stride + 1;
          for (int64_t i = 0; i < in; ++i) {
            int64_t lo, hi;
            avg_outputs_of(i, stride, pad, kernel, out, &lo, &hi);
            for (int64_t o = 0; o < out; ++o) {
              const AvgWindow w = avg_window(o, stride, pad, kernel, in);
              const bool holds = i >= w.s && i < w.e;
              if (holds != (o >= lo && o < hi)) return fail("avg_outputs_of", in, i, o);
              ++cases;
            }
          }
        }
  // The window itself: clipped to [0, in), padded size up to in + pad.
  const AvgWindow w = avg_window(0, 2, 1, 3, 4);
  if (w.s != 0 || w.e != 2 || w.padded != 3) return fail("avg_window", w.s, w.e, w.padded);
  return true;
}

bool check_adaptive() {
  for (int64_t in = 1; in <= 12; ++in)
    for (int64_t out = 1; out <= 12; ++out)
      for (int64_t i = 0; i < in; ++i) {
        int64_t lo, hi;
        adaptive_outputs_of(i, in, out, &lo, &hi);
        for (int64_t o = 0; o < out; ++o) {
          const bool holds = i >= adaptive_start(o, in, out) && i < adaptive_end(o, in, out);
          if (holds != (o >= lo && o < hi)) return fail("adaptive_outputs_of", in, out, i);
          ++cases;
        }
      }
  return true;
}

}  // namespace

int main() {
  if (floor_div(-3, 2) != -2 || floor_div(3, 2) != 1 || floor_div(-4, 2) != -2)
    return fail("floor_div", floor_div(-3, 2), floor_div(3, 2), floor_div(-4, 2)) ? 0 : 1;
  if (!check_taps() || !check_avg() || !check_adaptive()) return 1;
  std::printf("ok %d\n", cases);
  return 0;
}
