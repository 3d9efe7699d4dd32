// Checks shared by the FFT frontends (ops/fft_primitives.cpp, ops/fft.cpp),
// with PyTorch's messages.
#pragma once
#include "core/tensor.h"

namespace flambeau::fft {

// dims wrapped into [0, ndim): IndexError when out of range (a 0-dim tensor
// has no dim to transform), RuntimeError on repeats.
DimVector wrap_fft_dims(IntList dims, int64_t ndim, const char* op);
// A transform length must be at least 1.
void check_points(int64_t n);
// float16 and bfloat16 have no FFT on the CPU (nor a complex type here).
void check_supported(ScalarType t);

}  // namespace flambeau::fft
