#include "cpu/sum_f32.h"

#include "cpu/cpu_capability.h"

namespace flambeau {

namespace {
constexpr int kLanes = 32;
constexpr int64_t kBlock = 2048;  // elements folded in float before going to double
}  // namespace

FLB_MULTIVERSION_BODY double sum_contiguous_f32_body(const float* p, int64_t n) {
  double total = 0.0;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    float lanes[kLanes] = {};
    for (int64_t j = 0; j < kBlock; j += kLanes)
      for (int k = 0; k < kLanes; ++k) lanes[k] += p[i + j + k];
    float block = 0.0f;
    for (int k = 0; k < kLanes; ++k) block += lanes[k];
    total += static_cast<double>(block);
  }
  for (; i < n; ++i) total += static_cast<double>(p[i]);
  return total;
}

FLB_MULTIVERSION(double, sum_contiguous_f32, (const float* p, int64_t n), (p, n))

}  // namespace flambeau
