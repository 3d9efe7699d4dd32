// The hot loop of float32 sums: a contiguous run folded with float lanes in
// short blocks (fast, and the block length bounds the rounding error) and the
// blocks added in double. Built for each CPU capability (cpu_capability.h).
#pragma once
#include <cstdint>

namespace flambeau {

double sum_contiguous_f32(const float* p, int64_t n);

// Marks the plain sum of float32 into double, so reduce_run can use the loop above.
struct SumF32 {
  double operator()(double acc, float v) const { return acc + static_cast<double>(v); }
};

}  // namespace flambeau
