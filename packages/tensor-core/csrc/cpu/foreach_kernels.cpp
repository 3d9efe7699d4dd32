// CPU kernel of the _foreach_* operators: one fused, vectorizable pass per
// tensor over contiguous float32/float64 data (the optimizers' hot loop).
#include <cmath>

#include "cpu/parallel.h"
#include "dispatch/dispatcher.h"
#include "ops/foreach_kernel.h"

namespace flambeau {

namespace {

template <class C>
inline C max_nan(C a, C b) {
  return a != a ? a : (b != b ? b : (a > b ? a : b));
}
template <class C>
inline C min_nan(C a, C b) {
  return a != a ? a : (b != b ? b : (a < b ? a : b));
}
template <class C>
inline C lerp_of(C a, C b, C w) {
  return w < C(0.5) ? a + w * (b - a) : b - (b - a) * (C(1) - w);
}
template <class C>
inline C sign_of(C x) {
  return x > 0 ? C(1) : (x < 0 ? C(-1) : x);  // keeps NaN and signed zero
}

// Runs f(i) over [0, n), in parallel chunks when n is large.
template <class F>
void over(int64_t n, const F& f) {
  parallel_for(0, n, kGrainSize, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) f(i);
  });
}

template <class C>
void run(ForeachOp op, const Tensor& out, const Tensor& at, const Tensor* bt, const Tensor* ct,
         double s0d, double s1d) {
  const int64_t n = out->numel();
  C* __restrict o = out->data_as<C>();
  const C* a = at->data_as<C>();
  const C* b = bt ? (*bt)->data_as<C>() : nullptr;
  const C* c = ct ? (*ct)->data_as<C>() : nullptr;
  const C s0 = static_cast<C>(s0d), s1 = static_cast<C>(s1d);
  switch (op) {
    case ForeachOp::kAddScalar:
      return over(n, [&](int64_t i) { o[i] = a[i] + s0; });
    case ForeachOp::kAddTensor:
      return over(n, [&](int64_t i) { o[i] = a[i] + s1 * b[i]; });
    case ForeachOp::kMulScalar:
      return over(n, [&](int64_t i) { o[i] = a[i] * s0; });
    case ForeachOp::kMulTensor:
      return over(n, [&](int64_t i) { o[i] = a[i] * b[i]; });
    case ForeachOp::kDivScalar:
      return over(n, [&](int64_t i) { o[i] = a[i] / s0; });
    case ForeachOp::kDivTensor:
      return over(n, [&](int64_t i) { o[i] = a[i] / b[i]; });
    case ForeachOp::kMaxScalar:
      return over(n, [&](int64_t i) { o[i] = max_nan(a[i], s0); });
    case ForeachOp::kMaxTensor:
      return over(n, [&](int64_t i) { o[i] = max_nan(a[i], b[i]); });
    case ForeachOp::kMinScalar:
      return over(n, [&](int64_t i) { o[i] = min_nan(a[i], s0); });
    case ForeachOp::kMinTensor:
      return over(n, [&](int64_t i) { o[i] = min_nan(a[i], b[i]); });
    case ForeachOp::kPowScalar:
      if (s0 == C(2)) return over(n, [&](int64_t i) { o[i] = a[i] * a[i]; });
      return over(n, [&](int64_t i) { o[i] = std::pow(a[i], s0); });
    case ForeachOp::kPowTensor:
      return over(n, [&](int64_t i) { o[i] = std::pow(a[i], b[i]); });
    case ForeachOp::kRPowScalar:
      return over(n, [&](int64_t i) { o[i] = std::pow(s0, a[i]); });
    case ForeachOp::kLerpScalar:
      return over(n, [&](int64_t i) { o[i] = lerp_of(a[i], b[i], s0); });
    case ForeachOp::kLerpTensor:
      return over(n, [&](int64_t i) { o[i] = lerp_of(a[i], b[i], c[i]); });
    case ForeachOp::kAddcmul:
      return over(n, [&](int64_t i) { o[i] = a[i] + s0 * b[i] * c[i]; });
    case ForeachOp::kAddcdiv:
      return over(n, [&](int64_t i) { o[i] = a[i] + s0 * (b[i] / c[i]); });
    case ForeachOp::kSqrt:
      return over(n, [&](int64_t i) { o[i] = std::sqrt(a[i]); });
    case ForeachOp::kNeg:
      return over(n, [&](int64_t i) { o[i] = -a[i]; });
    case ForeachOp::kAbs:
      return over(n, [&](int64_t i) { o[i] = std::abs(a[i]); });
    case ForeachOp::kExp:
      return over(n, [&](int64_t i) { o[i] = std::exp(a[i]); });
    case ForeachOp::kSign:
      return over(n, [&](int64_t i) { o[i] = sign_of(a[i]); });
    case ForeachOp::kReciprocal:
      return over(n, [&](int64_t i) { o[i] = C(1) / a[i]; });
  }
}

void foreach_kernel(ForeachOp op, const Tensor& out, const Tensor& a, const Tensor* b,
                    const Tensor* c, double s0, double s1) {
  if (out->dtype() == ScalarType::Float64)
    run<double>(op, out, a, b, c, s0, s1);
  else
    run<float>(op, out, a, b, c, s0, s1);
}

}  // namespace

FLB_REGISTER_KERNEL("_foreach", kCPU, foreach_kernel);

}  // namespace flambeau
