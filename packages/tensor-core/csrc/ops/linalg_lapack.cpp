// Frontends of the LAPACK-backed flambeau.linalg operators: argument checks,
// copies into column-major workspaces, the kernel, LAPACK's info turned into
// PyTorch's errors, and results as (batch..., rows, cols) views.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>

#include "cpu/lapack_kernels.h"
#include "generated/kernels.h"
#include "generated/ops_bitwise.h"
#include "generated/ops_comparison.h"
#include "generated/ops_indexing.h"
#include "generated/ops_linalg.h"
#include "generated/ops_linalg_lapack.h"
#include "generated/ops_pointwise.h"
#include "generated/ops_reduction.h"
#include "generated/ops_shape.h"
#include "generated/ops_tensor.h"
#include "ops/lapack_frontend.h"
#include "ops/linalg_util.h"
#include "ops/reduce_util.h"
#include "ops/sorting_kernels.h"  // write_out, check_out_tuple: tuple out=

namespace flambeau::ops {

using linalg::batch_of;
using linalg::real_dtype;
using namespace lapack_frontend;

namespace {

using namespace flambeau::lapack;

Tensor info_shaped(const Tensor& info, IntList batch) { return reshape(info, batch); }

struct Lu {
  Tensor lu, pivots, info;  // (B, n, m) column-major, (B, k) int32, (B,) int32
};

Lu lu_factor_cm(const Tensor& a) {
  Lu f;
  f.lu = colmajor(a);
  const int64_t b = f.lu->size(0), k = std::min(a->size(-2), a->size(-1));
  f.pivots = int32_zeros({b, k}, a->device());
  f.info = int32_zeros({b}, a->device());
  if (f.lu->numel()) kernel<kernels::linalg_getrf>(a->device())(f.lu, f.pivots, f.info);
  return f;
}

std::string singular_msg(int32_t i) {
  return str_cat("The diagonal element ", i,
                 " is zero, the inversion could not be completed because the input matrix is "
                 "singular.");
}

// NaN or inf sends LAPACK's iterative drivers (gesdd, gelsd, syevd, geev) into
// loops that can last minutes. `a` is a (B, ...) column-major work copy: its
// matrices holding a non-finite value are zeroed before the driver runs, and the
// returned (B,) bool mask says which, so their results can be set to NaN after
// (PyTorch returns NaN there). A null mask when every value is finite.
Tensor zero_nonfinite_matrices(const Tensor& a) {
  if (!is_floating(a->dtype()) && !is_complex(a->dtype())) return Tensor();
  DimVector dims;
  for (int64_t d = 1; d < a->dim(); ++d) dims.push_back(d);
  Tensor bad = logical_not(all(isfinite(a), dims, false, {}), {});
  if (!*cpu(any(bad, std::nullopt, false, {}))->data_as<bool>()) return Tensor();
  DimVector shape(a->dim(), 1);
  shape[0] = a->size(0);
  copy_into(a, masked_fill(a, reshape(bad, shape), wrapped_scalar(0), {}));
  return bad;
}

// Sets to NaN the matrices of a (B, ...) result marked by `bad` (no-op when null).
void nan_where(const Tensor& t, const Tensor& bad) {
  if (!bad || t->numel() == 0) return;
  DimVector shape(t->dim(), 1);
  shape[0] = t->size(0);
  copy_into(t, masked_fill(t, reshape(bad, shape),
                           wrapped_scalar(std::numeric_limits<double>::quiet_NaN()), {}));
}

}  // namespace

// ---- determinants ----

namespace {

template <class T>
struct RealOf {
  using type = T;
};
template <class R>
struct RealOf<std::complex<R>> {
  using type = R;
};
template <class T>
using real_dtype_t = typename RealOf<T>::type;

// sign/phase and log|det| (or det itself) from LU factors, per batch element, read on
// the host (lu, pivots: the factors on the CPU).
template <class T>
void det_from_lu(const Tensor& lu_host, const Tensor& piv_host, int64_t n, T* sign,
                 real_dtype_t<T>* logabs, T* det) {
  using R = real_dtype_t<T>;
  for (int64_t b = 0; b < lu_host->size(0); ++b) {
    const T* lu = lu_host->data_as<T>() + b * n * n;
    const int32_t* piv = piv_host->data_as<int32_t>() + b * n;
    T s(1), d(1);
    R la(0);
    for (int64_t i = 0; i < n; ++i) {
      T u = lu[i * n + i];
      if (piv[i] != i + 1) s = -s, d = -d;
      d *= u;
      R mag = std::abs(u);
      la += std::log(mag);
      s = mag == R(0) ? T(0) : s * (u / mag);
    }
    if (sign) sign[b] = s;
    if (logabs) logabs[b] = la;
    if (det) det[b] = d;
  }
}

}  // namespace

Tensor linalg_det(const Tensor& A) {
  check_matrix("linalg.det", A, true);
  Lu f = lu_factor_cm(A);
  const int64_t n = A->size(-1);
  DimVector batch = batch_of(A);
  const Tensor lu = on_host(f.lu), piv = on_host(f.pivots);
  Tensor det = empty(batch, A->dtype());
  visit_dtype<dtype_bit(ScalarType::Float32) | dtype_bit(ScalarType::Float64) | kComplexTypes>(
      A->dtype(), "linalg.det", [&](auto tag) {
        using T = typename decltype(tag)::type;
        det_from_lu<T>(lu, piv, n, nullptr, nullptr, det->data_as<T>());
      });
  return copy_to(det, A->device());
}

std::tuple<Tensor, Tensor> linalg_slogdet(const Tensor& A) {
  check_matrix("linalg.slogdet", A, true);
  Lu f = lu_factor_cm(A);
  const int64_t n = A->size(-1);
  DimVector batch = batch_of(A);
  const Tensor lu = on_host(f.lu), piv = on_host(f.pivots);
  Tensor sign = empty(batch, A->dtype());
  Tensor logabs = empty(batch, real_dtype(A->dtype()));
  visit_dtype<dtype_bit(ScalarType::Float32) | dtype_bit(ScalarType::Float64) | kComplexTypes>(
      A->dtype(), "linalg.slogdet", [&](auto tag) {
        using T = typename decltype(tag)::type;
        det_from_lu<T>(lu, piv, n, sign->data_as<T>(), logabs->data_as<real_dtype_t<T>>(), nullptr);
      });
  return {copy_to(sign, A->device()), copy_to(logabs, A->device())};
}

// ---- inverse and solvers ----

std::tuple<Tensor, Tensor> linalg_inv_ex(const Tensor& A, bool check_errors) {
  check_matrix("linalg.inv_ex", A, true);
  const int64_t n = A->size(-1);
  DimVector batch = batch_of(A);
  Lu f = lu_factor_cm(A);
  Tensor rhs = zeros({f.lu->size(0), n, n}, A->dtype(), A->device(), false);
  copy_into(diagonal(rhs, 0, 1, 2), wrapped_scalar(1));
  if (rhs->numel()) kernel<kernels::linalg_getrs>(A->device())(f.lu, f.pivots, rhs, 'N');
  if (check_errors) check_info("linalg.inv_ex", f.info, !batch.empty(), singular_msg);
  return {as_matrices(rhs, batch, n, n), info_shaped(f.info, batch)};
}

Tensor linalg_inv(const Tensor& A, const OutArg& out) {
  check_matrix("linalg.inv", A, true);
  auto [inv, info] = linalg_inv_ex(A, false);
  check_info("linalg.inv", info, A->dim() > 2, singular_msg);
  return write_out(out, inv, "linalg.inv");
}

namespace {

// "3x4": the matrix part of a shape, as PyTorch's solver messages print it.
std::string matrix_shape(const Tensor& t) { return str_cat(t->size(-2), "x", t->size(-1)); }

// The factors of A's own batch seen with the batch dims `batch` (A's broadcast
// against B's): a copy only when they differ.
Lu expand_lu(const Lu& f, IntList batch_a, IntList batch, int64_t n, const char* op) {
  if (batch_a == batch) return f;
  Lu e;
  e.lu = colmajor(expand_batch(as_matrices(f.lu, batch_a, n, n), batch, op));
  Tensor piv = expand_to(reshape(f.pivots, with(batch_a, {n})), with(batch, {n}), op);
  e.pivots = reshape(contiguous(piv), {numel_of(batch), n});
  return e;
}

// A X = B (left) or X A = B for square A, B a matrix or a (batch of) vector(s): the
// solution and LAPACK's info for each matrix of A's own batch. `api` names the
// function in the singular-matrix error raised when check_errors.
std::tuple<Tensor, Tensor> solve_impl(const Tensor& A, const Tensor& B, bool left,
                                      bool check_errors, const char* api) {
  const char* op = "linalg.solve";
  check_matrix(op, A, true);
  check_same_dtype(op, A, B);
  const int64_t n = A->size(-1);
  // B is a (batch of) vector(s) when 1-D or shaped like A without its last dim.
  const bool vector = B->dim() == 1 || (B->dim() == A->dim() - 1 &&
                                        B->sizes() == IntList(A->sizes().data(), A->dim() - 1));
  const Tensor Bm = vector ? unsqueeze(B, -1) : B;
  FLB_CHECK(Bm->dim() >= 2, op, ": The input tensor B must have at least 2 dimensions.");
  FLB_CHECK(!vector || left || n != 1, op,
            ": Vector broadcasting of the left hand side is not supported for left=False. In "
            "this case linalg.solve is equivalent to B / A.squeeze(-1)");
  FLB_CHECK((left ? Bm->size(-2) : Bm->size(-1)) == n, op,
            ": Incompatible shapes of A and B for the equation ", left ? "AX = B" : "XA = B", " (",
            matrix_shape(A), " and ", matrix_shape(Bm), ")");
  DimVector batch_a = batch_of(A), batch = broadcast_batch(A, Bm, op);
  Lu f = lu_factor_cm(A);
  if (check_errors)
    check_info(api, f.info, A->dim() > 2, [](int32_t) {
      return std::string("The solver failed because the input matrix is singular.");
    });
  // X A = B  <=>  A^T X^T = B^T: the same factors, solved transposed.
  Tensor rhs_m = left ? Bm : transpose(Bm, -2, -1);
  const int64_t k = rhs_m->size(-1);
  Tensor rhs = colmajor(expand_batch(rhs_m, batch, op));
  if (rhs->numel() && n > 0) {
    Lu e = expand_lu(f, batch_a, batch, n, op);
    kernel<kernels::linalg_getrs>(A->device())(e.lu, e.pivots, rhs, left ? 'N' : 'T');
  }
  Tensor x = as_matrices(rhs, batch, n, k);
  if (!left) x = transpose(x, -2, -1);
  if (vector) x = squeeze(x, DimVector{-1});
  return {x, info_shaped(f.info, batch_a)};
}

}  // namespace

Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left, const OutArg& out) {
  return write_out(out, std::get<0>(solve_impl(A, B, left, true, "torch.linalg.solve")),
                   "linalg.solve");
}

std::tuple<Tensor, Tensor> linalg_solve_ex(const Tensor& A, const Tensor& B, bool left,
                                           bool check_errors, const std::vector<Tensor>& out) {
  const char* op = "linalg.solve_ex";
  check_out_tuple(out, 2, op);
  auto [x, info] = solve_impl(A, B, left, check_errors, "torch.linalg.solve_ex");
  return {write_out(out, 0, x, op), write_out(out, 1, info, op)};
}

Tensor linalg_solve_triangular(const Tensor& input, const Tensor& B, bool upper, bool left,
                               bool unitriangular, const OutArg& out) {
  const char* op = "linalg.solve_triangular";
  check_matrix(op, input, true);
  check_same_dtype(op, input, B);
  FLB_CHECK(B->dim() >= 2, op, ": The input tensor B must have at least 2 dimensions.");
  const int64_t n = input->size(-1);
  FLB_CHECK((left ? B->size(-2) : B->size(-1)) == n, op, ": Incompatible shapes of A and B for ",
            "the equation ", left ? "AX = B" : "XA = B", " (", shape_str(input->sizes()), " and ",
            shape_str(B->sizes()), ")");
  DimVector batch = broadcast_batch(input, B, op);
  const int64_t bn = numel_of(batch), r = B->size(-2), c = B->size(-1);
  Tensor a = reshape(contiguous(expand_batch(input, batch, op)), {bn, n, n});
  Tensor x = empty(with(batch, {r, c}), B->dtype(), B->device());
  copy_into(x, expand_batch(B, batch, op));
  if (x->numel() && n > 0)
    kernel<kernels::linalg_trsm>(input->device())(a, reshape(x, {bn, r, c}), left, upper,
                                                  unitriangular);
  return write_out(out, x, op);
}

std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_lstsq(const Tensor& input, const Tensor& b,
                                                        std::optional<double> rcond,
                                                        const std::optional<std::string>& driver) {
  const char* op = "torch.linalg.lstsq";
  check_matrix(op, input, false);
  check_same_dtype(op, input, b);
  // PyTorch's CPU default is gelsy: no singular values, no residuals. Every driver here
  // runs the SVD-based solver (same minimum-norm solution); the driver picks the fields.
  std::string drv = driver.value_or("gelsy");
  FLB_CHECK(drv == "gelsd" || drv == "gelss" || drv == "gelsy" || drv == "gels", op,
            ": parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  FLB_CHECK(input->dim() >= b->dim() && input->dim() - b->dim() <= 1, op,
            ": input.dim() must be greater or equal to other.dim() and ",
            "(input.dim() - other.dim()) <= 1");
  const bool vector = b->dim() == input->dim() - 1;
  Tensor B = vector ? unsqueeze(b, -1) : b;
  const int64_t m = input->size(-2), n = input->size(-1), k = B->size(-1);
  FLB_CHECK(B->size(-2) == m, op, ": input.size(-2) should match other.size(-2)");
  DimVector batch = broadcast_batch(input, B, op);
  const int64_t bn = numel_of(batch), mx = std::max(m, n), mn = std::min(m, n);
  Tensor a = colmajor(expand_batch(input, batch, op));
  Tensor rhs = zeros({bn, k, mx}, input->dtype(), input->device(), false);
  copy_into(
      narrow(make_view(rhs, with(batch, {k, mx}), contiguous_strides(with(batch, {k, mx})), 0), -1,
             0, m),
      transpose(expand_batch(B, batch, op), -2, -1));
  ScalarType rt = real_dtype(input->dtype());
  Tensor s = empty({bn, mn}, rt, input->device());
  Tensor rank = zeros({bn}, ScalarType::Int64, input->device(), false);
  Tensor info = int32_zeros({bn}, input->device());
  double eps = rt == ScalarType::Float32 ? std::numeric_limits<float>::epsilon()
                                         : std::numeric_limits<double>::epsilon();
  double rc = rcond.value_or(eps * static_cast<double>(mx));
  Tensor bad = zero_nonfinite_matrices(a);
  if (bn > 0 && mn > 0 && k > 0)
    kernel<kernels::linalg_gelsd>(input->device())(a, rhs, s, rank, rc, info);
  nan_where(rhs, bad);
  nan_where(s, bad);
  check_info(op, info, !batch.empty(), [](int32_t i) {
    return str_cat("The least squares solution could not be computed because the SVD failed to ",
                   "converge (error code: ", i, ").");
  });
  Tensor full = as_matrices(rhs, batch, mx, k);
  Tensor solution = narrow(full, -2, 0, n);
  // Residuals when m > n and every matrix has full rank, except from gelsy (as PyTorch).
  bool full_rank = m > n && drv != "gelsy";
  const Tensor rank_host = full_rank ? on_host(rank) : rank;
  for (int64_t i = 0; i < bn && full_rank; ++i) full_rank = rank_host->data_as<int64_t>()[i] == n;
  Tensor residuals = empty({0}, rt, input->device());
  if (full_rank && bn > 0) {
    Tensor tail = abs(narrow(full, -2, n, m - n), {});
    residuals = sum(mul(tail, tail, {}), DimVector{-2}, false, std::nullopt, {});
  }
  if (vector) solution = squeeze(solution, DimVector{-1});  // residuals keep their (1,)
  Tensor rank_out =
      drv == "gels" ? empty({0}, ScalarType::Int64, input->device()) : reshape(rank, batch);
  Tensor sv = (drv == "gelsd" || drv == "gelss") ? reshape(s, with(batch, {mn}))
                                                 : empty({0}, rt, input->device());
  return {contiguous(solution), residuals, rank_out, sv};
}

// ---- Cholesky ----

std::tuple<Tensor, Tensor> linalg_cholesky_ex(const Tensor& input, bool upper, bool check_errors) {
  const char* op = "linalg.cholesky_ex";
  check_matrix(op, input, true);
  const int64_t n = input->size(-1);
  DimVector batch = batch_of(input);
  Tensor a = colmajor(input);
  Tensor info = int32_zeros({a->size(0)}, input->device());
  if (a->numel()) kernel<kernels::linalg_potrf>(input->device())(a, upper, info);
  Tensor m = as_matrices(a, batch, n, n);
  Tensor L = upper ? triu(m, 0, {}) : tril(m, 0, {});
  if (check_errors)
    check_info(op, info, !batch.empty(), [](int32_t i) {
      return str_cat("The factorization could not be completed because the input is not ",
                     "positive-definite (the leading minor of order ", i,
                     " is not positive-definite).");
    });
  return {L, info_shaped(info, batch)};
}

// X with A X = B from A's Cholesky factor: two triangular solves (LAPACK's potrs), batch
// dims broadcast. Only the factor's triangle is read; its gradient is PyTorch's, dense.
Tensor cholesky_solve(const Tensor& input, const Tensor& input2, bool upper, const OutArg& out) {
  const char* op = "cholesky_solve";
  FLB_CHECK(input->dim() >= 2, op, ": b should have at least 2 dimensions, but has ", input->dim(),
            " dimensions instead");
  FLB_CHECK(input2->dim() >= 2, op, ": u should have at least 2 dimensions, but has ",
            input2->dim(), " dimensions instead");
  check_matrix(op, input2, true);
  Tensor adjoint = linalg::adjoint(input2);
  // A = L L^H: L Y = B, then L^H X = Y; A = U^H U: U^H Y = B, then U X = Y.
  Tensor y = linalg_solve_triangular(upper ? adjoint : input2, input, false, true, false, {});
  Tensor x = linalg_solve_triangular(upper ? input2 : adjoint, y, true, true, false, {});
  return write_out(out, x, op);
}

Tensor linalg_cholesky(const Tensor& input, bool upper, const OutArg& out) {
  check_matrix("linalg.cholesky", input, true);
  auto [L, info] = linalg_cholesky_ex(input, upper, false);
  check_info("linalg.cholesky", info, input->dim() > 2, [](int32_t i) {
    return str_cat("The factorization could not be completed because the input is not ",
                   "positive-definite (the leading minor of order ", i,
                   " is not positive-definite).");
  });
  return write_out(out, L, "linalg.cholesky");
}

// ---- QR ----

std::tuple<Tensor, Tensor> linalg_qr(const Tensor& A, const std::string& mode) {
  const char* op = "linalg.qr";
  check_matrix(op, A, false);
  FLB_CHECK(mode == "reduced" || mode == "complete" || mode == "r", op,
            ": qr received unrecognized mode '", mode,
            "' but expected one of 'reduced' (default), 'r', or 'complete'");
  const int64_t m = A->size(-2), n = A->size(-1), k = std::min(m, n);
  DimVector batch = batch_of(A);
  const int64_t qc = mode == "reduced" ? k : (mode == "complete" ? m : 0);
  Tensor a = colmajor(A);
  Tensor q = zeros({a->size(0), qc, m}, A->dtype(), A->device(), false);
  if (a->numel() && k > 0) kernel<kernels::linalg_geqrf>(A->device())(a, q);
  if (mode == "complete" && k == 0 && q->numel())  // nothing to factor: Q = I
    copy_into(diagonal(q, 0, 1, 2), wrapped_scalar(1));
  Tensor r = triu(as_matrices(a, batch, m, n), 0, {});
  if (mode != "complete") r = narrow(r, -2, 0, k);
  Tensor Q = mode == "r" ? empty({0}, A->dtype(), A->device()) : as_matrices(q, batch, m, qc);
  return {Q, contiguous(r)};
}

// ---- SVD ----

namespace {

struct Svd {
  Tensor U, S, Vh;
};

Svd svd_impl(const char* op, const Tensor& A, bool full_matrices, bool compute_uv) {
  check_matrix(op, A, false);
  const int64_t m = A->size(-2), n = A->size(-1), k = std::min(m, n);
  DimVector batch = batch_of(A);
  const int64_t ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  Tensor a = colmajor(A);
  const int64_t bn = a->size(0);
  ScalarType rt = real_dtype(A->dtype());
  Tensor s = empty({bn, k}, rt, A->device());
  Tensor u =
      compute_uv ? zeros({bn, ucols, m}, A->dtype(), A->device(), false) : empty({0}, A->dtype());
  Tensor vh =
      compute_uv ? zeros({bn, n, vrows}, A->dtype(), A->device(), false) : empty({0}, A->dtype());
  Tensor info = int32_zeros({bn}, A->device());
  if (bn > 0 && k > 0) {
    char jobz = !compute_uv ? 'N' : (full_matrices ? 'A' : 'S');
    Tensor bad = zero_nonfinite_matrices(a);
    kernel<kernels::linalg_gesdd>(A->device())(a, u, s, vh, jobz, info);
    for (const Tensor& t : {s, u, vh}) nan_where(t, bad);
  } else if (compute_uv) {  // empty matrices: the full factors are identities
    if (u->numel()) copy_into(diagonal(u, 0, 1, 2), wrapped_scalar(1));
    if (vh->numel()) copy_into(diagonal(vh, 0, 1, 2), wrapped_scalar(1));
  }
  check_info(op, info, !batch.empty(), [](int32_t i) {
    return str_cat("The algorithm failed to converge because the input matrix is ill-conditioned ",
                   "or has too many repeated singular values (error code: ", i, ").");
  });
  Svd r;
  r.S = reshape(s, with(batch, {k}));
  if (compute_uv) {
    r.U = as_matrices(u, batch, m, ucols);
    r.Vh = as_matrices(vh, batch, vrows, n);
  }
  return r;
}

void check_driver(const char* op, const std::optional<std::string>& driver) {
  FLB_CHECK(!driver.has_value(), op,
            ": keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.");
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A, bool full_matrices,
                                              const std::optional<std::string>& driver) {
  check_driver("linalg.svd", driver);
  Svd r = svd_impl("linalg.svd", A, full_matrices, true);
  return {r.U, r.S, r.Vh};
}

Tensor linalg_svdvals(const Tensor& A, const std::optional<std::string>& driver) {
  check_driver("linalg.svdvals", driver);
  return svd_impl("linalg.svdvals", A, false, false).S;
}

// ---- eigenproblems ----

namespace {

std::tuple<Tensor, Tensor> eigh_impl(const char* op, const Tensor& A, const std::string& uplo,
                                     bool compute_v) {
  check_matrix(op, A, true);
  FLB_CHECK(uplo == "L" || uplo == "U" || uplo == "l" || uplo == "u", op,
            ": Expected UPLO argument to be 'L' or 'U', but got ", uplo);
  const int64_t n = A->size(-1);
  DimVector batch = batch_of(A);
  Tensor a = colmajor(A);
  Tensor w = empty({a->size(0), n}, real_dtype(A->dtype()), A->device());
  Tensor info = int32_zeros({a->size(0)}, A->device());
  if (a->numel()) {
    Tensor bad = zero_nonfinite_matrices(a);
    kernel<kernels::linalg_syevd>(A->device())(a, w, uplo == "U" || uplo == "u", compute_v, info);
    nan_where(w, bad);
    nan_where(a, bad);
  }
  check_info(op, info, !batch.empty(), [](int32_t i) {
    return str_cat("The algorithm failed to converge because the input matrix is ill-conditioned ",
                   "or has too many repeated eigenvalues (error code: ", i, ").");
  });
  return {reshape(w, with(batch, {n})), compute_v ? as_matrices(a, batch, n, n) : Tensor()};
}

ScalarType complex_of(ScalarType t) {
  return t == ScalarType::Float32 || t == ScalarType::Complex64 ? ScalarType::Complex64
                                                                : ScalarType::Complex128;
}

std::tuple<Tensor, Tensor> eig_impl(const char* op, const Tensor& A, bool compute_v) {
  check_matrix(op, A, true);
  const int64_t n = A->size(-1);
  DimVector batch = batch_of(A);
  Tensor a = colmajor(A);
  ScalarType ct = complex_of(A->dtype());
  Tensor w = empty({a->size(0), n}, ct, A->device());
  Tensor v = compute_v ? empty({a->size(0), n, n}, ct, A->device()) : empty({0}, ct);
  Tensor info = int32_zeros({a->size(0)}, A->device());
  FLB_CHECK(!a->numel() || !zero_nonfinite_matrices(a), "torch.", op,
            ": input tensor should not contain infs or NaNs.");
  if (a->numel()) kernel<kernels::linalg_geev>(A->device())(a, w, v, info);
  check_info(op, info, !batch.empty(), [](int32_t i) {
    return str_cat("The algorithm failed to converge because the input matrix is ill-conditioned ",
                   "or has too many repeated eigenvalues (error code: ", i, ").");
  });
  return {reshape(w, with(batch, {n})), compute_v ? as_matrices(v, batch, n, n) : Tensor()};
}

}  // namespace

std::tuple<Tensor, Tensor> linalg_eigh(const Tensor& A, const std::string& UPLO) {
  return eigh_impl("linalg.eigh", A, UPLO, true);
}

Tensor linalg_eigvalsh(const Tensor& A, const std::string& UPLO) {
  return std::get<0>(eigh_impl("linalg.eigvalsh", A, UPLO, false));
}

std::tuple<Tensor, Tensor> linalg_eig(const Tensor& A) { return eig_impl("linalg.eig", A, true); }

Tensor linalg_eigvals(const Tensor& A) { return std::get<0>(eig_impl("linalg.eigvals", A, false)); }

// ---- pseudo-inverse, rank, powers ----

namespace {

// The cutoff max(atol, rtol * largest) for singular values s (..., k), keepdim.
Tensor tolerance(const Tensor& s, std::optional<double> atol, std::optional<double> rtol, int64_t m,
                 int64_t n) {
  double eps = s->dtype() == ScalarType::Float32 ? std::numeric_limits<float>::epsilon()
                                                 : std::numeric_limits<double>::epsilon();
  // PyTorch: rtol defaults to eps * max(m, n), or to 0 when only atol (> 0) is given.
  double r = rtol ? *rtol : ((atol && *atol > 0) ? 0.0 : eps * static_cast<double>(std::max(m, n)));
  DimVector one(s->sizes());
  one[one.size() - 1] = 1;
  Tensor largest =
      s->size(-1) ? amax(s, DimVector{-1}, true, {}) : zeros(one, s->dtype(), s->device(), false);
  Tensor tol = mul(largest, wrapped_scalar(r), {});
  if (atol)
    tol = maximum(
        tol, full_like(tol, *atol, std::nullopt, std::nullopt, false, MemoryFormat::Contiguous),
        {});
  return tol;
}

}  // namespace

Tensor linalg_pinv(const Tensor& A, std::optional<double> atol, std::optional<double> rtol,
                   bool hermitian) {
  const char* op = "linalg.pinv";
  check_matrix(op, A, hermitian);
  const int64_t m = A->size(-2), n = A->size(-1);
  if (hermitian) {  // A = V diag(w) V^H
    auto [w, V] = eigh_impl(op, A, "L", true);
    Tensor aw = abs(w, {});
    Tensor keep = gt(aw, tolerance(aw, atol, rtol, m, n), {});
    Tensor winv =
        where(keep, reciprocal(w, {}),
              zeros_like(w, std::nullopt, std::nullopt, false, MemoryFormat::Contiguous), {});
    return matmul(mul(V, unsqueeze(to_dtype(winv, A->dtype()), -2), {}), linalg::adjoint(V), {});
  }
  Svd r = svd_impl(op, A, false, true);
  Tensor keep = gt(r.S, tolerance(r.S, atol, rtol, m, n), {});
  Tensor sinv =
      where(keep, reciprocal(r.S, {}),
            zeros_like(r.S, std::nullopt, std::nullopt, false, MemoryFormat::Contiguous), {});
  // pinv = V diag(1/s) U^H
  return matmul(mul(linalg::adjoint(r.Vh), unsqueeze(to_dtype(sinv, A->dtype()), -2), {}),
                linalg::adjoint(r.U), {});
}

Tensor linalg_matrix_rank(const Tensor& A, std::optional<double> atol, std::optional<double> rtol,
                          bool hermitian) {
  const char* op = "linalg.matrix_rank";
  check_matrix(op, A, hermitian);
  Tensor s = hermitian ? abs(std::get<0>(eigh_impl(op, A, "L", false)), {})
                       : svd_impl(op, A, false, false).S;
  Tensor keep = gt(s, tolerance(s, atol, rtol, A->size(-2), A->size(-1)), {});
  return sum(keep, DimVector{-1}, false, ScalarType::Int64, {});
}

Tensor matrix_power(const Tensor& input, int64_t n) {
  const char* op = "linalg.matrix_power";
  FLB_CHECK(input->dim() >= 2 && input->size(-1) == input->size(-2), op,
            ": A must be batches of square matrices, but they are ",
            input->dim() >= 2 ? input->size(-2) : 0, " by ",
            input->dim() >= 2 ? input->size(-1) : 0, " matrices");
  if (n == 0) {
    Tensor id = eye(input->size(-1), std::nullopt, input->dtype(), input->device(), false);
    return contiguous(expand_to(id, input->sizes(), op));
  }
  Tensor base = n < 0 ? linalg_inv(input, {}) : input;
  uint64_t e = n < 0 ? static_cast<uint64_t>(-(n + 1)) + 1 : static_cast<uint64_t>(n);
  // Binary powering: base^e with about 2 log2(e) products.
  Tensor result;
  while (e) {
    if (e & 1) result = result ? matmul(result, base, {}) : contiguous_copy(base);
    e >>= 1;
    if (e) base = matmul(base, base, {});
  }
  return result;
}

Tensor linalg_matrix_power(const Tensor& A, int64_t n) { return matrix_power(A, n); }

// ---- LU ----

namespace {

std::tuple<Tensor, Tensor, Tensor> lu_factor_impl(const char* op, const Tensor& A, bool pivot,
                                                  bool check_errors, const char* api) {
  check_matrix(op, A, false);
  FLB_CHECK(pivot, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  const int64_t m = A->size(-2), n = A->size(-1);
  DimVector batch = batch_of(A);
  Lu f = lu_factor_cm(A);
  // A zero pivot is a plain RuntimeError here, not a LinAlgError (as PyTorch).
  if (check_errors)
    check_info<Error>(api, f.info, !batch.empty(), [](int32_t i) {
      return str_cat("U[", i, ",", i,
                     "] is zero and using it on lu_solve would result in a division by zero. If "
                     "you still want to perform the factorization, consider calling "
                     "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)");
    });
  return {as_matrices(f.lu, batch, m, n), reshape(f.pivots, with(batch, {std::min(m, n)})),
          info_shaped(f.info, batch)};
}

}  // namespace

std::tuple<Tensor, Tensor> linalg_lu_factor(const Tensor& A, bool pivot) {
  auto [lu, pivots, info] =
      lu_factor_impl("linalg.lu_factor", A, pivot, true, "torch.linalg.lu_factor");
  return {lu, pivots};
}

std::tuple<Tensor, Tensor, Tensor> linalg_lu_factor_ex(const Tensor& A, bool pivot,
                                                       bool check_errors,
                                                       const std::vector<Tensor>& out) {
  const char* op = "linalg.lu_factor_ex";
  check_out_tuple(out, 3, op);
  auto [lu, pivots, info] = lu_factor_impl(op, A, pivot, check_errors, "torch.linalg.lu_factor_ex");
  return {write_out(out, 0, lu, op), write_out(out, 1, pivots, op), write_out(out, 2, info, op)};
}

Tensor linalg_lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left,
                       bool adjoint) {
  const char* op = "linalg.lu_solve";
  check_matrix(op, LU, true);
  check_same_dtype(op, LU, B);
  FLB_CHECK(pivots->dtype() == ScalarType::Int32, op, ": pivots should be a Tensor of dtype int32");
  FLB_CHECK(B->dim() >= 2, op, ": The input tensor B must have at least 2 dimensions.");
  const int64_t n = LU->size(-1);
  FLB_CHECK(pivots->dim() == LU->dim() - 1 && pivots->size(-1) == n, op,
            ": Expected pivots of shape ", shape_str(IntList(LU->sizes().data(), LU->dim() - 1)),
            ", but got ", shape_str(pivots->sizes()));
  FLB_CHECK((left ? B->size(-2) : B->size(-1)) == n, op, ": Incompatible shapes of A and B for ",
            "the equation ", left ? "AX = B" : "XA = B", " (", shape_str(LU->sizes()), " and ",
            shape_str(B->sizes()), ")");
  // Right-hand forms through transposes: X A = B <=> A^T X^T = B^T and
  // X A^H = B <=> A X^H = B^H.
  Tensor rhs_m = left ? B : (adjoint ? linalg::adjoint(B) : transpose(B, -2, -1));
  char trans =
      left ? (adjoint ? (is_complex(LU->dtype()) ? 'C' : 'T') : 'N') : (adjoint ? 'N' : 'T');
  DimVector batch = broadcast_shapes(batch_of(LU), batch_of(rhs_m), op);
  Tensor lu = colmajor(expand_batch(LU, batch, op));
  Tensor piv = contiguous(expand_to(pivots, with(batch, {n}), op));
  // getrs swaps rows by these 1-based indices without checking them.
  const Tensor piv_host = on_host(piv);
  const int32_t* pv = piv_host->data_as<const int32_t>();
  const auto [lo, hi] = std::minmax_element(pv, pv + piv->numel());
  FLB_CHECK(piv->numel() == 0 || *lo >= 1,
            "Pivots given to lu_solve must all be greater or equal to 1. ",
            "Did you properly pass the result of lu_factor?");
  FLB_CHECK(piv->numel() == 0 || *hi <= n,
            "Pivots given to lu_solve must all be smaller or equal to LU.size(-2). ",
            "Did you properly pass the result of lu_factor?");
  Tensor rhs = colmajor(expand_batch(rhs_m, batch, op));
  const int64_t k = rhs_m->size(-1);
  if (rhs->numel() && n > 0)
    kernel<kernels::linalg_getrs>(LU->device())(lu, reshape(piv, {lu->size(0), n}), rhs, trans);
  Tensor x = as_matrices(rhs, batch, n, k);
  if (left) return x;
  return adjoint ? linalg::adjoint(x) : transpose(x, -2, -1);
}

std::tuple<Tensor, Tensor, Tensor> linalg_lu(const Tensor& A, bool pivot) {
  const char* op = "linalg.lu";
  check_matrix(op, A, false);
  FLB_CHECK(pivot, op, ": LU without pivoting is not implemented on the CPU");
  const int64_t m = A->size(-2), n = A->size(-1), k = std::min(m, n);
  DimVector batch = batch_of(A);
  Lu f = lu_factor_cm(A);
  Tensor lu = as_matrices(f.lu, batch, m, n);
  Tensor L =
      add(tril(narrow(lu, -1, 0, k), -1, {}), eye(m, k, A->dtype(), A->device(), false), 1, {});
  Tensor U = triu(narrow(lu, -2, 0, k), 0, {});
  // P from the row interchanges: P^T A = L U, P[perm[i], i] = 1.
  const int64_t bn = f.lu->size(0);
  Tensor P = zeros(with(batch, {m, m}), A->dtype(), std::nullopt, false);  // built on the host
  Tensor P3 = reshape(P, {bn, m, m});
  const Tensor pivots = on_host(f.pivots);
  std::vector<int64_t> perm(static_cast<size_t>(m));
  visit_dtype<dtype_bit(ScalarType::Float32) | dtype_bit(ScalarType::Float64) | kComplexTypes>(
      A->dtype(), op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (int64_t b = 0; b < bn; ++b) {
          for (int64_t i = 0; i < m; ++i) perm[i] = i;
          const int32_t* piv = pivots->data_as<int32_t>() + b * k;
          for (int64_t i = 0; i < k; ++i) std::swap(perm[i], perm[piv[i] - 1]);
          T* p = P3->data_as<T>() + b * m * m;
          for (int64_t i = 0; i < m; ++i) p[perm[i] * m + i] = T(1);
        }
      });
  return {copy_to(P, A->device()), L, U};
}

}  // namespace flambeau::ops
