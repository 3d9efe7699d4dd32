// The hot loop of float32 sums: a contiguous run folded with float lanes in
// short blocks (fast, and the block length bounds the rounding error) and the
// blocks added in double. Built for each CPU capability (cpu_capability.h).
#pragma once
#include <cstdint>

namespace flambeau {

double sum_contiguous_f32(const float* p, int64_t n);

// out[r * out_stride] += the sum of row r (n floats at p + r * ld), for r < rows.
void sum_rows_f32(const float* p, int64_t rows, int64_t ld, int64_t n, double* out,
                  int64_t out_stride);

// out[j] += the sum over r < rows of p[r * ld + j], for j < n: a sum over the outer
// dim of a matrix whose rows are contiguous.
void sum_columns_f32(const float* p, int64_t rows, int64_t ld, int64_t n, double* out);

// Marks the plain sum of float32 into double, so reduce_run can use the loop above.
struct SumF32 {
  double operator()(double acc, float v) const { return acc + static_cast<double>(v); }
};

}  // namespace flambeau
