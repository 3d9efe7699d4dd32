// The fused multi-tensor kernel behind the _foreach_* operators: one pass over
// one contiguous tensor (and its same-shaped, same-dtype operands), no
// temporaries. The frontends (ops/foreach.cpp) call it once per list element.
#pragma once
#include "core/tensor.h"
#include "generated/kernel_signatures.h"

namespace flambeau {

// ForeachOp (out[i] = f(a[i], b[i], c[i]) with scalars s0 and alpha s1): declared in
// kernels/table.yaml.

// Operands are contiguous, of out's dtype (float32 or float64) and numel; b, c
// may be null when the operation does not read them. out may alias a.
// ForeachKernel: declared in kernels/table.yaml.

}  // namespace flambeau
