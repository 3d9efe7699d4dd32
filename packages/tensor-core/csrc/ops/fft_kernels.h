// Kernel signatures of the three FFT primitives (ops/fft.yaml), the only part
// of flambeau.fft a backend implements. The CPU kernels (cpu/fft_kernels.cpp)
// run NumPy's pocketfft; a CUDA plugin would run cuFFT.
//
// A kernel gets a freshly allocated contiguous `out`, the input `in` with any
// strides (float32/float64 or complex64/complex128, never empty), the
// normalization (FftNorm) and the dims to transform: non-empty, wrapped into
// [0, ndim), unique, each of size >= 1. Plugins receive the integer arguments
// in order, dims last: [normalization, forward or onesided, dims...] (c2r has
// no flag: the last dim's size is out's).
#pragma once
#include "core/tensor.h"

namespace flambeau {

// Scaling of a transform, as aten's fft_norm_mode: n is the product of the
// transformed (signal) sizes.
enum FftNorm : int64_t {
  kFftNormNone = 0,     // no scaling
  kFftNormByRootN = 1,  // by 1 / sqrt(n)
  kFftNormByN = 2,      // by 1 / n
};

// out (in's complex dtype and shape) = the DFT of in over dims, with
// exp(-2 pi i jk / n) when forward, exp(+2 pi i jk / n) otherwise.
// FftC2CKernel: declared in kernels/table.yaml.
// out = the forward DFT of the real `in` over dims; when onesided, out's last
// transformed dim holds the n // 2 + 1 non-negative frequencies, else all n.
// FftR2CKernel: declared in kernels/table.yaml.
// out (real) = the backward DFT over dims of the Hermitian signal whose last
// transformed dim `in` gives by its out.size(last) // 2 + 1 first entries.
// FftC2RKernel: declared in kernels/table.yaml.

}  // namespace flambeau
