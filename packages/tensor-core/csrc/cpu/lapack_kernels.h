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
using GetrfKernel = void(const Tensor& a, const Tensor& pivots, const Tensor& info);
// Solves op(A) X = B from getrf's factors, B overwritten; trans is 'N', 'T' or 'C'.
using GetrsKernel = void(const Tensor& lu, const Tensor& pivots, const Tensor& b, char trans);
// Bunch-Kaufman LDL^T (LDL^H when hermitian and complex) of the lower triangle, in
// place; pivots as sytrf's (1-based, both entries of a 2x2 block negative).
using SytrfKernel = void(const Tensor& a, const Tensor& pivots, bool hermitian, const Tensor& info);
// Solves A X = B from sytrf's factors, B overwritten.
using SytrsKernel = void(const Tensor& ld, const Tensor& pivots, const Tensor& b, bool hermitian);
// Cholesky in place (the other triangle is left as it was).
using PotrfKernel = void(const Tensor& a, bool upper, const Tensor& info);
// Householder QR: a -> R in its upper triangle; q (B, q_cols, rows) gets the
// first q_cols columns of Q (nothing when q is empty).
using QrKernel = void(const Tensor& a, const Tensor& q);
// SVD by divide and conquer (a destroyed): jobz 'N' (values only), 'S' (thin)
// or 'A' (full); u (B, ucols, rows), vh (B, cols, vh_rows), s real (B, k).
using SvdKernel = void(const Tensor& a, const Tensor& u, const Tensor& s, const Tensor& vh,
                       char jobz, const Tensor& info);
// Symmetric/Hermitian eigendecomposition: w real ascending; a -> eigenvectors
// when compute_v.
using EighKernel = void(const Tensor& a, const Tensor& w, bool upper, bool compute_v,
                        const Tensor& info);
// General eigendecomposition (a destroyed): w complex (B, n); v complex
// (B, n, n) right eigenvectors, or empty for values only.
using EigKernel = void(const Tensor& a, const Tensor& w, const Tensor& v, const Tensor& info);
// Least squares by SVD (gelsd): b (B, nrhs, max(rows, cols)) -> solution in its
// first cols rows; s real (B, min(rows, cols)); rank int64 (B).
using GelsdKernel = void(const Tensor& a, const Tensor& b, const Tensor& s, const Tensor& rank,
                         double rcond, const Tensor& info);
// Triangular solve with BLAS trsm on row-major batches: a (B, n, n), b (B, r, c)
// overwritten with op(a)^-1 b (left) or b op(a)^-1 (right).
using TrsmKernel = void(const Tensor& a, const Tensor& b, bool left, bool upper, bool unit);

}  // namespace flambeau::lapack
