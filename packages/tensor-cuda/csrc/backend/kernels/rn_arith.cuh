// Products and sums rounded one at a time (round to nearest, never contracted
// into a fused multiply-add), for kernels that must give the CPU kernels' bits.
#pragma once

namespace flambeau::cuda::kernels {

__device__ inline float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ inline float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ inline double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ inline float sub_rn(float a, float b) { return __fsub_rn(a, b); }
__device__ inline double sub_rn(double a, double b) { return __dsub_rn(a, b); }

}  // namespace flambeau::cuda::kernels
