// The kernel signature of frexp, the one elementwise operator with two outputs.
#pragma once
#include "core/tensor.h"

namespace flambeau {

// Splits every element of `input` (a float type) into `mantissa` (input's dtype,
// magnitude in [0.5, 1)) and `exponent` (int32) with input = mantissa * 2^exponent.
// All three have the same shape.
// FrexpKernel: declared in kernels/table.yaml.

}  // namespace flambeau
