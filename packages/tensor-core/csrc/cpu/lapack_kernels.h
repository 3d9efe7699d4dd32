// Kernel signatures of the LAPACK-backed operators (CPU kernels in
// cpu/lapack_kernels.cpp, frontends in ops/linalg_lapack.cpp).
//
// Every matrix operand is a contiguous batch of column-major matrices: a tensor
// of shape (B, cols, rows) holds B matrices of `rows` x `cols`, stored column
// after column (the frontends build them by copying a transposed view). Pivots
// (1-based, as LAPACK) and infos are int32, one info per batch element.
#pragma once
#include "core/tensor.h"

namespace flambeau::lapack {

// LU with partial pivoting, in place: a -> packed L\U.
// GetrfKernel: declared in kernels/table.yaml.
// Solves op(A) X = B from getrf's factors, B overwritten; trans is 'N', 'T' or 'C'.
// GetrsKernel: declared in kernels/table.yaml.
// Bunch-Kaufman LDL^T (LDL^H when hermitian and complex) of the lower triangle, in
// place; pivots as sytrf's (1-based, both entries of a 2x2 block negative).
// SytrfKernel: declared in kernels/table.yaml.
// Solves A X = B from sytrf's factors, B overwritten.
// SytrsKernel: declared in kernels/table.yaml.
// Cholesky in place (the other triangle is left as it was).
// PotrfKernel: declared in kernels/table.yaml.
// Householder QR: a -> R in its upper triangle; q (B, q_cols, rows) gets the
// first q_cols columns of Q (nothing when q is empty).
// QrKernel: declared in kernels/table.yaml.
// SVD by divide and conquer (a destroyed): jobz 'N' (values only), 'S' (thin)
// or 'A' (full); u (B, ucols, rows), vh (B, cols, vh_rows), s real (B, k).
// SvdKernel: declared in kernels/table.yaml.
// Symmetric/Hermitian eigendecomposition: w real ascending; a -> eigenvectors
// when compute_v.
// EighKernel: declared in kernels/table.yaml.
// General eigendecomposition (a destroyed): w complex (B, n); v complex
// (B, n, n) right eigenvectors, or empty for values only.
// EigKernel: declared in kernels/table.yaml.
// Least squares by SVD (gelsd): b (B, nrhs, max(rows, cols)) -> solution in its
// first cols rows; s real (B, min(rows, cols)); rank int64 (B).
// GelsdKernel: declared in kernels/table.yaml.
// Triangular solve with BLAS trsm on row-major batches: a (B, n, n), b (B, r, c)
// overwritten with op(a)^-1 b (left) or b op(a)^-1 (right).
// TrsmKernel: declared in kernels/table.yaml.

}  // namespace flambeau::lapack
