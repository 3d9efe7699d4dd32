// Checks bmm's mapping to column-major BLAS (csrc/backend/kernels/matrix_layout.h)
// on the host: for random shapes (empty and single rows/columns too) and operands
// that are row-major, column-major, padded or batch-broadcast, a reference
// strided-batched column-major gemm run with gemm_args gives the row-major
// product, and every leading dimension satisfies BLAS's ld >= max(1, rows).
// Operands matrix_layout refuses must be packed; the check packs them as bmm.cu
// does. Prints "ok <cases>" or the first failure.
#include <cstdio>
#include <random>
#include <vector>

#include "backend/kernels/matrix_layout.h"

using flambeau::cuda::kernels::gemm_args;
using flambeau::cuda::kernels::GemmArgs;
using flambeau::cuda::kernels::matrix_layout;
using flambeau::cuda::kernels::MatrixLayout;

namespace {

// C (m x n, column-major) = op(A) (m x k) op(B) (k x n), batched, as BLAS defines it.
void reference_gemm(const GemmArgs& g, const double* A, const double* B, double* C) {
  for (int64_t z = 0; z < g.batch; ++z)
    for (int64_t j = 0; j < g.n; ++j)
      for (int64_t i = 0; i < g.m; ++i) {
        double acc = 0;
        for (int64_t p = 0; p < g.k; ++p) {
          const double a =
              g.transa ? A[z * g.stride_a + p + i * g.lda] : A[z * g.stride_a + i + p * g.lda];
          const double b =
              g.transb ? B[z * g.stride_b + j + p * g.ldb] : B[z * g.stride_b + p + j * g.ldb];
          acc += a * b;
        }
        C[z * g.stride_c + i + j * g.ldc] = acc;
      }
}

struct Operand {
  std::vector<double> data;
  int64_t bs = 0, rs = 0, cs = 0;
  double at(int64_t z, int64_t r, int64_t c) const { return data[z * bs + r * rs + c * cs]; }
};

// A (batch, rows, cols) operand in one of several layouts.
Operand make_operand(std::mt19937& rng, int64_t batch, int64_t rows, int64_t cols) {
  Operand o;
  const int kind = static_cast<int>(rng() % 5);
  const int64_t pad = static_cast<int64_t>(rng() % 3);
  if (kind == 0 || kind == 4) {  // row-major, padded rows
    o.cs = 1;
    o.rs = cols + pad;
    o.bs = rows * o.rs;
  } else if (kind == 1) {  // column-major
    o.rs = 1;
    o.cs = rows + pad;
    o.bs = cols * o.cs;
  } else if (kind == 2) {  // neither: every other element of a row-major matrix
    o.cs = 2;
    o.rs = 2 * cols + pad;
    o.bs = rows * o.rs;
  } else {  // row-major, broadcast over the batch
    o.cs = 1;
    o.rs = cols;
    o.bs = 0;
  }
  const int64_t size = (batch - 1) * o.bs + (rows - 1) * o.rs + (cols - 1) * o.cs + 1;
  o.data.resize(static_cast<size_t>(size > 0 ? size : 1));
  for (auto& v : o.data) v = static_cast<double>(static_cast<int>(rng() % 7) - 3);
  return o;
}

Operand packed(const Operand& o, int64_t batch, int64_t rows, int64_t cols) {
  Operand p;
  p.cs = 1;
  p.rs = cols;
  p.bs = rows * cols;
  p.data.resize(static_cast<size_t>(batch * rows * cols > 0 ? batch * rows * cols : 1));
  for (int64_t z = 0; z < batch; ++z)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) p.data[z * p.bs + r * p.rs + c] = o.at(z, r, c);
  return p;
}

}  // namespace

int main() {
  std::mt19937 rng(99);
  int cases = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int64_t batch = 1 + static_cast<int64_t>(rng() % 3);
    const int64_t M = 1 + static_cast<int64_t>(rng() % 5), N = 1 + static_cast<int64_t>(rng() % 5),
                  K = 1 + static_cast<int64_t>(rng() % 5);
    Operand a = make_operand(rng, batch, M, K), b = make_operand(rng, batch, K, N);
    MatrixLayout la = matrix_layout(M, K, a.rs, a.cs), lb = matrix_layout(K, N, b.rs, b.cs);
    if (!la.ok) a = packed(a, batch, M, K), la = matrix_layout(M, K, a.rs, a.cs);
    if (!lb.ok) b = packed(b, batch, K, N), lb = matrix_layout(K, N, b.rs, b.cs);
    if (!la.ok || !lb.ok) {
      std::printf("trial %d: a packed operand is refused\n", trial);
      return 1;
    }
    const int64_t out_rs = N + static_cast<int64_t>(rng() % 2);
    const int64_t out_bs = M * out_rs;
    std::vector<double> out(static_cast<size_t>(batch * out_bs), -99);
    const GemmArgs g = gemm_args(batch, M, N, K, la, a.bs, lb, b.bs, out_rs, out_bs);
    const int64_t rows_a = g.transa ? g.k : g.m, rows_b = g.transb ? g.n : g.k;
    if (g.lda < (rows_a > 1 ? rows_a : 1) || g.ldb < (rows_b > 1 ? rows_b : 1) ||
        g.ldc < (g.m > 1 ? g.m : 1)) {
      std::printf("trial %d: a leading dimension BLAS would refuse\n", trial);
      return 1;
    }
    reference_gemm(g, b.data.data(), a.data.data(), out.data());
    for (int64_t z = 0; z < batch; ++z)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double want = 0;
          for (int64_t p = 0; p < K; ++p) want += a.at(z, i, p) * b.at(z, p, j);
          if (out[z * out_bs + i * out_rs + j] != want) {
            std::printf("trial %d (%lld, %lld, %lld): got %g, want %g\n", trial, (long long)z,
                        (long long)i, (long long)j, out[z * out_bs + i * out_rs + j], want);
            return 1;
          }
          ++cases;
        }
  }
  std::printf("ok %d\n", cases);
  return 0;
}
