// The fused multi-tensor kernel behind the _foreach_* operators: one pass over
// one contiguous tensor (and its same-shaped, same-dtype operands), no
// temporaries. The frontends (ops/foreach.cpp) call it once per list element.
#pragma once
#include "core/tensor.h"

namespace flambeau {

// out[i] = f(a[i], b[i], c[i]) with scalars s (s0) and alpha (s1).
enum class ForeachOp : int32_t {
  kAddScalar,   // a + s0
  kAddTensor,   // a + s1 * b
  kMulScalar,   // a * s0
  kMulTensor,   // a * b
  kDivScalar,   // a / s0
  kDivTensor,   // a / b
  kMaxScalar,   // maximum(a, s0), NaN propagates
  kMaxTensor,   // maximum(a, b)
  kMinScalar,   // minimum(a, s0)
  kMinTensor,   // minimum(a, b)
  kPowScalar,   // a ** s0
  kPowTensor,   // a ** b
  kRPowScalar,  // s0 ** a
  kLerpScalar,  // a + s0 * (b - a)
  kLerpTensor,  // a + c * (b - a)
  kAddcmul,     // a + s0 * b * c
  kAddcdiv,     // a + s0 * b / c
  kSqrt,
  kNeg,
  kAbs,
  kExp,
  kSign,
  kReciprocal,
};

// Operands are contiguous, of out's dtype (float32 or float64) and numel; b, c
// may be null when the operation does not read them. out may alias a.
// ForeachKernel: declared in kernels/table.yaml.

}  // namespace flambeau
