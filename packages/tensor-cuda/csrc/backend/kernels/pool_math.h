// Window arithmetic of the pooling kernels (pool_ops.cu), plain C++ marked
// __host__ __device__ so the tests check it with g++ against a brute-force walk
// (tests/host_kernels/check_pool_math.cpp). Every function works along one
// spatial dim; the kernels combine three of them (D, H, W), as the CPU's
// flb_pool_geometry does.
#pragma once
#include <cstdint>

#include "backend/kernels/strided_index.h"  // FLB_HD

namespace flambeau::cuda::kernels {

FLB_HD inline int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
FLB_HD inline int64_t max_i64(int64_t a, int64_t b) { return a > b ? a : b; }

// Floor division for a possibly negative numerator and a positive denominator.
FLB_HD inline int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// The taps [lo, hi) of a max-pool window starting at `start` (taps `dilation`
// apart, `kernel` of them) that land inside [0, in): only those are read.
FLB_HD inline void tap_range(int64_t start, int64_t dilation, int64_t kernel, int64_t in,
                             int64_t* lo, int64_t* hi) {
  *lo = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  *hi = in - 1 - start < 0 ? 0 : min_i64(kernel, (in - 1 - start) / dilation + 1);
}

// avg_pool's window of output o: the clipped span [s, e) of the input and its
// size before clipping to the input (padding counted, for count_include_pad).
// The end stops at in + pad, as the CPU's (no overflow for a huge kernel).
struct AvgWindow {
  int64_t s, e, padded;
};

FLB_HD inline AvgWindow avg_window(int64_t o, int64_t stride, int64_t pad, int64_t kernel,
                                   int64_t in) {
  const int64_t s = o * stride - pad;
  const int64_t e = s + min_i64(kernel, in + pad - s);
  return {max_i64(s, 0), min_i64(e, in), e - s};
}

// The outputs [lo, hi) whose avg_pool window holds input position i (clipped to
// [0, out)); the backward gathers from these, in increasing order.
FLB_HD inline void avg_outputs_of(int64_t i, int64_t stride, int64_t pad, int64_t kernel,
                                  int64_t out, int64_t* lo, int64_t* hi) {
  // o * stride - pad <= i, and o * stride - pad + kernel > i.
  *lo = max_i64(0, floor_div(i + pad - kernel, stride) + 1);
  *hi = min_i64(out, floor_div(i + pad, stride) + 1);
  if (*hi < *lo) *hi = *lo;
}

// Adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out)).
FLB_HD inline int64_t adaptive_start(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
FLB_HD inline int64_t adaptive_end(int64_t o, int64_t in, int64_t out) {
  return ((o + 1) * in + out - 1) / out;
}

// The outputs [lo, hi) whose adaptive window holds input position i.
FLB_HD inline void adaptive_outputs_of(int64_t i, int64_t in, int64_t out, int64_t* lo,
                                       int64_t* hi) {
  // end(o) > i  <=>  o >= floor(i * out / in);  start(o) <= i  <=>  o < ceil((i + 1) * out / in).
  *lo = (i * out) / in;
  *hi = min_i64(out, ((i + 1) * out + in - 1) / in);
}

}  // namespace flambeau::cuda::kernels
