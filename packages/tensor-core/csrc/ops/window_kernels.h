// Kernel signature of the window functions (ops/windows.yaml); the CPU
// kernels are in cpu/window_kernels.cpp, one per operator name.
#pragma once
#include "core/tensor.h"

namespace flambeau {

// Fills `out` (1-D, contiguous, floating, at least one element) with the
// window named by the operator. periodic: the first n points of the symmetric
// window of n + 1. alpha and beta: hamming's coefficients; beta: kaiser's.
// WindowKernel: declared in kernels/table.yaml.

}  // namespace flambeau
