// Registration of the linear-algebra and FFT group (linalg_ops.cu on cuSOLVER and
// cuBLAS, fft_ops.cu on cuFFT), each under the kernel table's name for the dtype of
// the call's first tensor. register_kernels() calls register_linalg_fft().
//
// Not registered, so that the core raises NotImplementedError for cuda: linalg_sytrs
// (cuSOLVER has sytrf but no sytrs), linalg_gelsd (cuSOLVER's least squares, gels,
// wants full rank and m >= n, and returns neither rank nor singular values) and
// linalg_geev (cusolverDnXgeev: left to a later change, with a device to test it).
// Complex matrices are not registered either: the rest of the plugin has no complex
// kernels yet (the frontends copy and fill complex work tensors on the device).
#include <cstdint>

#include "backend/kernels/kernel_registry.h"
#include "backend/kernels/kernels.h"
#include "backend/kernels/linalg_fft_kernels.h"

namespace flambeau::cuda::kernels {

namespace {

const Registration kEntries[] = {
    {"linalg_getrf", linalg_getrf, nullptr, kCompute},
    {"linalg_getrs", linalg_getrs, nullptr, kCompute},
    {"linalg_potrf", linalg_potrf, nullptr, kCompute},
    {"linalg_sytrf", linalg_sytrf, nullptr, kCompute},
    {"linalg_geqrf", linalg_geqrf, nullptr, kCompute},
    {"linalg_syevd", linalg_syevd, nullptr, kCompute},
    {"linalg_gesdd", linalg_gesdd, nullptr, kCompute},
    {"linalg_trsm", linalg_trsm, nullptr, kCompute},
    // The FFT primitives, by out's dtype: complex for c2c and r2c, real for c2r.
    {"_fft_c2c", fft_c2c, nullptr, kComplex},
    {"_fft_r2c", fft_r2c, nullptr, kComplex},
    {"_fft_c2r", fft_c2r, nullptr, kCompute},
};

}  // namespace

flb_status register_linalg_fft(const flb_core_api* core, int32_t type) {
  return register_table(core, type, kEntries);
}

}  // namespace flambeau::cuda::kernels
