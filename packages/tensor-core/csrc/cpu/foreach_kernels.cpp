// CPU kernel of the _foreach_* operators: one fused, vectorized pass per tensor
// over contiguous float32/float64 data (the optimizers' hot loop).
//
// The loops are built for each CPU capability (FLB_MULTIVERSION, as in vec_math.cpp).
// Everything they call is inlined from this file or a compiler builtin / libm
// function, so no wide code can leak into inline functions shared with other files.
#include <math.h>

#include "cpu/cpu_capability.h"
#include "cpu/parallel.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/foreach_kernel.h"

#define FLB_INLINE inline __attribute__((always_inline))

namespace flambeau {

namespace {

FLB_INLINE float sqrt_of(float x) { return __builtin_sqrtf(x); }
FLB_INLINE double sqrt_of(double x) { return __builtin_sqrt(x); }
FLB_INLINE float abs_of(float x) { return __builtin_fabsf(x); }
FLB_INLINE double abs_of(double x) { return __builtin_fabs(x); }
FLB_INLINE float exp_of(float x) { return ::expf(x); }
FLB_INLINE double exp_of(double x) { return ::exp(x); }
FLB_INLINE float pow_of(float x, float y) { return ::powf(x, y); }
FLB_INLINE double pow_of(double x, double y) { return ::pow(x, y); }

// NaN-propagating maximum / minimum (PyTorch's maximum, clamp_min, ...).
template <class C>
FLB_INLINE C max_nan(C a, C b) {
  return a != a ? a : (b != b ? b : (a > b ? a : b));
}
template <class C>
FLB_INLINE C min_nan(C a, C b) {
  return a != a ? a : (b != b ? b : (a < b ? a : b));
}
// lerp's two formulas (exact at both ends), then a select: branch-free, so it vectorizes.
template <class C>
FLB_INLINE C lerp_of(C a, C b, C w) {
  C d = b - a;
  C low = a + w * d, high = b - d * (C(1) - w);
  return w < C(0.5) ? low : high;
}
template <class C>
FLB_INLINE C sign_of(C x) {
  return x > 0 ? C(1) : (x < 0 ? C(-1) : x);  // keeps NaN and signed zero
}

// out[lo:hi] for one operation; out may alias a.
template <class C>
FLB_INLINE void loop(ForeachOp op, C* o, const C* a, const C* b, const C* c, C s0, C s1, int64_t lo,
                     int64_t hi) {
#define FLB_FOREACH_LOOP(expr)                     \
  for (int64_t i = lo; i < hi; ++i) o[i] = (expr); \
  return
  switch (op) {
    case ForeachOp::kAddScalar:
      FLB_FOREACH_LOOP(a[i] + s0);
    case ForeachOp::kAddTensor:
      FLB_FOREACH_LOOP(a[i] + s1 * b[i]);
    case ForeachOp::kMulScalar:
      FLB_FOREACH_LOOP(a[i] * s0);
    case ForeachOp::kMulTensor:
      FLB_FOREACH_LOOP(a[i] * b[i]);
    case ForeachOp::kDivScalar:
      FLB_FOREACH_LOOP(a[i] / s0);
    case ForeachOp::kDivTensor:
      FLB_FOREACH_LOOP(a[i] / b[i]);
    case ForeachOp::kMaxScalar:
      FLB_FOREACH_LOOP(max_nan(a[i], s0));
    case ForeachOp::kMaxTensor:
      FLB_FOREACH_LOOP(max_nan(a[i], b[i]));
    case ForeachOp::kMinScalar:
      FLB_FOREACH_LOOP(min_nan(a[i], s0));
    case ForeachOp::kMinTensor:
      FLB_FOREACH_LOOP(min_nan(a[i], b[i]));
    case ForeachOp::kPowScalar:
      if (s0 == C(2)) {
        FLB_FOREACH_LOOP(a[i] * a[i]);
      }
      FLB_FOREACH_LOOP(pow_of(a[i], s0));
    case ForeachOp::kPowTensor:
      FLB_FOREACH_LOOP(pow_of(a[i], b[i]));
    case ForeachOp::kRPowScalar:
      FLB_FOREACH_LOOP(pow_of(s0, a[i]));
    case ForeachOp::kLerpScalar:
      // The weight picks one of lerp's formulas for the whole tensor.
      if (s0 < C(0.5)) {
        FLB_FOREACH_LOOP(a[i] + s0 * (b[i] - a[i]));
      }
      FLB_FOREACH_LOOP(b[i] - (b[i] - a[i]) * (C(1) - s0));
    case ForeachOp::kLerpTensor:
      FLB_FOREACH_LOOP(lerp_of(a[i], b[i], c[i]));
    case ForeachOp::kAddcmul:
      FLB_FOREACH_LOOP(a[i] + s0 * b[i] * c[i]);
    case ForeachOp::kAddcdiv:
      FLB_FOREACH_LOOP(a[i] + s0 * (b[i] / c[i]));
    case ForeachOp::kSqrt:
      FLB_FOREACH_LOOP(sqrt_of(a[i]));
    case ForeachOp::kNeg:
      FLB_FOREACH_LOOP(-a[i]);
    case ForeachOp::kAbs:
      FLB_FOREACH_LOOP(abs_of(a[i]));
    case ForeachOp::kExp:
      FLB_FOREACH_LOOP(exp_of(a[i]));
    case ForeachOp::kSign:
      FLB_FOREACH_LOOP(sign_of(a[i]));
    case ForeachOp::kReciprocal:
      FLB_FOREACH_LOOP(C(1) / a[i]);
  }
#undef FLB_FOREACH_LOOP
}

FLB_MULTIVERSION_BODY void loop_f32_body(ForeachOp op, float* o, const float* a, const float* b,
                                         const float* c, float s0, float s1, int64_t lo,
                                         int64_t hi) {
  loop<float>(op, o, a, b, c, s0, s1, lo, hi);
}
FLB_MULTIVERSION(void, loop_f32,
                 (ForeachOp op, float* o, const float* a, const float* b, const float* c, float s0,
                  float s1, int64_t lo, int64_t hi),
                 (op, o, a, b, c, s0, s1, lo, hi))
FLB_MULTIVERSION_BODY void loop_f64_body(ForeachOp op, double* o, const double* a, const double* b,
                                         const double* c, double s0, double s1, int64_t lo,
                                         int64_t hi) {
  loop<double>(op, o, a, b, c, s0, s1, lo, hi);
}
FLB_MULTIVERSION(void, loop_f64,
                 (ForeachOp op, double* o, const double* a, const double* b, const double* c,
                  double s0, double s1, int64_t lo, int64_t hi),
                 (op, o, a, b, c, s0, s1, lo, hi))

template <class C, class Loop>
void run(const Loop& body, ForeachOp op, const Tensor& out, const Tensor& at, const Tensor* bt,
         const Tensor* ct, double s0, double s1) {
  C* o = out->data_as<C>();
  const C* a = at->data_as<C>();
  const C* b = bt ? (*bt)->data_as<C>() : nullptr;
  const C* c = ct ? (*ct)->data_as<C>() : nullptr;
  parallel_for(0, out->numel(), kGrainSize, [&](int64_t lo, int64_t hi) {
    body(op, o, a, b, c, static_cast<C>(s0), static_cast<C>(s1), lo, hi);
  });
}

void foreach_kernel(ForeachOp op, const Tensor& out, const Tensor& a, const Tensor* b,
                    const Tensor* c, double s0, double s1) {
  if (out->dtype() == ScalarType::Float64)
    run<double>(loop_f64, op, out, a, b, c, s0, s1);
  else
    run<float>(loop_f32, op, out, a, b, c, s0, s1);
}

}  // namespace

FLB_REGISTER_KERNEL(_foreach, kCPU, foreach_kernel);

}  // namespace flambeau
