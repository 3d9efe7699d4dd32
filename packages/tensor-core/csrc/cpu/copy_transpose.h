// Cache-blocked same-dtype copy for transposing layouts (x.t().contiguous(), a
// batched transpose of the last two dims, ...): the output's innermost dim is
// strided in the source while another dim is contiguous there. A plain walk
// touches a new source cache line per element; tiles keep both sides in L1.
#pragma once
#include <cstddef>

#include "cpu/tensor_iterator.h"

namespace flambeau {

// Copies operand 1 into operand 0 of `it` (same dtype, `itemsize` bytes) when the
// layout is a transpose, in parallel over tiles. False (nothing written) otherwise.
bool blocked_transpose_copy(const TensorIterator& it, size_t itemsize);

}  // namespace flambeau
