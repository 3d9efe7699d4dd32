// How bmm hands row-major products to column-major BLAS. Plain C++, so the tests
// check it with g++ (tests/host_kernels/).
//
// out (B, M, N) = a (B, M, K) @ b (B, K, N), row-major out, is in column-major
// terms out^T (N x M) = b^T (N x K) @ a^T (K x M): one gemm with m = N, n = M,
// k = K, BLAS's first operand b and its second a. A row-major operand (rows x
// cols, column stride 1) is the column-major cols x rows matrix with leading
// dimension its row stride (op N); a column-major one (row stride 1) is the
// transpose of that (op T) with leading dimension its column stride.
#pragma once
#include <cstdint>

namespace flambeau::cuda::kernels {

struct MatrixLayout {
  bool ok = false;          // false: neither layout; the operand must be packed first
  bool transposed = false;  // column-major (BLAS op T)
  int64_t ld = 0;           // leading dimension
};

// The layout of a (rows x cols) matrix with element strides rs (rows) and cs (cols).
inline MatrixLayout matrix_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  const int64_t min_row_ld = cols > 1 ? cols : 1, min_col_ld = rows > 1 ? rows : 1;
  if ((cs == 1 || cols == 1) && rs >= min_row_ld) return {true, false, rs};
  if ((rs == 1 || rows == 1) && cs >= min_col_ld) return {true, true, cs};
  // A single row or column: any leading dimension that BLAS accepts will do.
  if (rows == 1 && cols == 1) return {true, false, 1};
  return {};
}

// The arguments of one strided-batched column-major gemm computing out = a @ b.
struct GemmArgs {
  bool transa = false, transb = false;  // BLAS's operands: b first, a second
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;                 // of b, a and out
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // batch strides of b, a and out
  int64_t batch = 0;
};

// For out (batch, M, N) with row stride out_rs (column stride 1) and batch stride
// out_bs, a (batch, M, K) of layout la and batch stride a_bs, b (batch, K, N) of
// layout lb and batch stride b_bs.
inline GemmArgs gemm_args(int64_t batch, int64_t M, int64_t N, int64_t K, MatrixLayout la,
                          int64_t a_bs, MatrixLayout lb, int64_t b_bs, int64_t out_rs,
                          int64_t out_bs) {
  GemmArgs g;
  g.transa = lb.transposed;
  g.transb = la.transposed;
  g.m = N;
  g.n = M;
  g.k = K;
  // BLAS checks ld >= max(1, rows of the stored matrix) even where it reads nothing.
  auto at_least = [](int64_t ld, int64_t rows) { return ld >= rows ? ld : (rows > 1 ? rows : 1); };
  g.lda = at_least(lb.ld, lb.transposed ? K : N);
  g.ldb = at_least(la.ld, la.transposed ? M : K);
  g.ldc = at_least(out_rs, N);
  g.stride_a = b_bs;
  g.stride_b = a_bs;
  g.stride_c = out_bs;
  g.batch = batch;
  return g;
}

}  // namespace flambeau::cuda::kernels
