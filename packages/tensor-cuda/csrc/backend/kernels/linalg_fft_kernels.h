// The linear-algebra (cuSOLVER, cuBLAS trsm; linalg_ops.cu) and FFT (cuFFT;
// fft_ops.cu) kernels, registered by register_linalg_fft (linalg_fft_registry.cpp).
// Arguments as the kernel table's C form gives them (flambeau/backend_kernels.h);
// matrices are contiguous batches of LAPACK's column-major matrices, a tensor
// (B, cols, rows) holding B matrices of rows x cols (cpu/lapack_kernels.h in the
// core). Pivots and infos are int32 device tensors, one info per matrix, with
// LAPACK's meaning.
#pragma once
#include <flambeau/backend_abi.h>

namespace flambeau::cuda::kernels {

// linalg_getrf: tensors [a, pivots (B, min(m, n)), info (B)].
flb_status linalg_getrf(void* ctx, const flb_kernel_call* call);
// linalg_getrs: tensors [lu (B, n, n), pivots (B, n), b (B, nrhs, n)], ints [trans].
flb_status linalg_getrs(void* ctx, const flb_kernel_call* call);
// linalg_potrf: tensors [a, info], ints [upper].
flb_status linalg_potrf(void* ctx, const flb_kernel_call* call);
// linalg_sytrf: tensors [a, pivots, info], ints [hermitian] (real: ignored).
flb_status linalg_sytrf(void* ctx, const flb_kernel_call* call);
// linalg_geqrf: tensors [a (B, n, m), q (B, qc, m)]: R in a's upper triangle, the
// first qc columns of Q in q (none when q is empty).
flb_status linalg_geqrf(void* ctx, const flb_kernel_call* call);
// linalg_syevd: tensors [a, w (B, n), info], ints [upper, compute_v].
flb_status linalg_syevd(void* ctx, const flb_kernel_call* call);
// linalg_gesdd: tensors [a, u (B, ucols, m), s (B, k), vh (B, n, vrows), info],
// ints [jobz ('N', 'S' or 'A')].
flb_status linalg_gesdd(void* ctx, const flb_kernel_call* call);
// linalg_trsm: tensors [a (B, n, n), b (B, r, c)] row-major, ints [left, upper, unit].
flb_status linalg_trsm(void* ctx, const flb_kernel_call* call);

// _fft_c2c: tensors [out, in], ints [normalization, forward, dims...].
flb_status fft_c2c(void* ctx, const flb_kernel_call* call);
// _fft_r2c: tensors [out, in], ints [normalization, onesided, dims...].
flb_status fft_r2c(void* ctx, const flb_kernel_call* call);
// _fft_c2r: tensors [out, in], ints [normalization, dims...].
flb_status fft_c2r(void* ctx, const flb_kernel_call* call);

}  // namespace flambeau::cuda::kernels
