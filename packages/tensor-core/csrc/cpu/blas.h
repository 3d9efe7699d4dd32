// OpenBLAS (from the scipy-openblas32 wheel) as the CPU GEMM.
#pragma once

namespace flambeau {

// Keeps OpenBLAS's thread pool the size of ours.
void blas_set_num_threads(int n);

}  // namespace flambeau
