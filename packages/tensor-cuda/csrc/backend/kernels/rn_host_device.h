// Double products and sums rounded one at a time on both sides of a
// __host__ __device__ header: on the device through __dmul_rn/__dadd_rn (nvcc
// would otherwise contract a * b + c into a fused multiply-add, whose single
// rounding differs from the CPU kernels'), on the host plain operators (g++ on
// x86-64 does not contract without -mfma). For the samplers and windows that
// reproduce the CPU's bits (random_extra_sampling.h, window_math.h).
#pragma once

#include "backend/kernels/strided_index.h"  // FLB_HD

namespace flambeau::cuda::kernels {

FLB_HD inline double hd_mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

FLB_HD inline double hd_add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

FLB_HD inline double hd_sub_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

}  // namespace flambeau::cuda::kernels
