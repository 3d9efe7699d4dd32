// The LAPACK-backed kernels on cuSOLVER's dense routines (float32 and float64),
// one matrix of the batch after another on the call's stream, each with LAPACK's
// arguments and info: getrf, getrs, potrf, sytrf, geqrf with orgqr, syevd, and the
// SVD by gesvdj (cuSOLVER's Jacobi SVD takes any shape and gives thin or full
// factors; its V is transposed into vh after). linalg_trsm runs cuBLAS's batched
// trsm on the row-major operands seen as column-major transposes.
//
// cuSOLVER has no sytrs, gelsd or LAPACK-equivalent geev for these layouts, so
// linalg_sytrs, linalg_gelsd and linalg_geev are not registered (the core then
// raises NotImplementedError for cuda): README.md says so.
#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/cublas_handles.h"
#include "backend/kernels/device_buffer.h"
#include "backend/kernels/kernels.h"
#include "backend/kernels/linalg_fft_kernels.h"
#include "backend/kernels/solver_handles.h"
#include "backend/kernels/strided_index.h"
#include "backend/state.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

// The float routine for float, its double twin for double.
template <class T, class S, class D>
auto pick(S s, D d) {
  if constexpr (std::is_same_v<T, float>)
    return s;
  else
    return d;
}

// Runs f(T{}) for float32 and float64 (the call's first tensor's dtype).
template <class F>
flb_status with_solver_dtype(const flb_kernel_call* c, F&& f) {
  switch (c->tensors[0].dtype) {
    case FLB_FLOAT32:
      return f(float{});
    case FLB_FLOAT64:
      return f(double{});
    default:
      return unsupported_dtypes(c);
  }
}

flb_status invalid(const flb_kernel_call* c, const std::string& what) {
  return kernel_fail(FLB_INVALID_ARGUMENT, c->op, what);
}

// Whether the call's tensor k is a dense (row-major contiguous) tensor of `ndim`
// dims whose sizes fit cuSOLVER's 32-bit arguments.
bool dense_batch(const flb_kernel_call* c, int k, int ndim) {
  if (c->n_tensors <= k) return false;
  const flb_tensor& t = c->tensors[k];
  if (t.ndim != ndim || !dense(t)) return false;
  for (int d = 1; d < ndim; ++d)
    if (t.sizes[d] > INT_MAX) return false;
  return true;
}

int64_t ints_at(const flb_kernel_call* c, int i) { return c->n_ints > i ? c->ints[i] : 0; }

// The call's cuSOLVER handle (bound to its stream), workspaces and status checks.
class Solver {
 public:
  explicit Solver(const flb_kernel_call* c)
      : c_(c), stream_(static_cast<cudaStream_t>(c->stream)) {}
  // FLB_OK, or why the handle could not be had.
  flb_status open() {
    std::string error;
    if (!cusolver_handle(c_->device_index, stream_, &lease_, &error))
      return kernel_fail(FLB_ERROR, c_->op, error);
    return FLB_OK;
  }
  const CusolverApi& api() const { return *lease_.api; }
  cusolverDnHandle_t handle() const { return lease_.handle; }
  cudaStream_t stream() const { return stream_; }
  flb_status check(const char* call, cusolverStatus_t s) const {
    return s == CUSOLVER_STATUS_SUCCESS ? FLB_OK
                                        : kernel_fail(FLB_ERROR, c_->op, cusolver_error(call, s));
  }
  flb_status allocate(DeviceBuffer* buffer, size_t bytes) const {
    return buffer->allocate(c_->device_index, bytes, stream_, c_->op);
  }

 private:
  const flb_kernel_call* c_;
  cudaStream_t stream_;
  CusolverLease lease_;
};

#define FLB_TRY(expr)                                    \
  do {                                                   \
    if (flb_status s_ = (expr); s_ != FLB_OK) return s_; \
  } while (0)

// info[b] of a (B,) int32 tensor.
int* info_at(const flb_tensor& info, int64_t b) {
  return static_cast<int*>(info.data) + b * (info.ndim > 0 ? info.strides[0] : 0);
}

int lead(int64_t rows) { return static_cast<int>(std::max<int64_t>(rows, 1)); }

// ---- LU ----

template <class T>
flb_status getrf_typed(const flb_kernel_call* c) {
  const flb_tensor &a = c->tensors[0], &piv = c->tensors[1], &info = c->tensors[2];
  const int64_t batch = a.sizes[0], n = a.sizes[1], m = a.sizes[2], k = std::min(m, n);
  Solver s(c);
  FLB_TRY(s.open());
  T* base = static_cast<T*>(a.data);
  int lwork = 0;
  FLB_TRY(
      s.check("cusolverDnXgetrf_bufferSize",
              pick<T>(s.api().s_getrf_bufferSize, s.api().d_getrf_bufferSize)(
                  s.handle(), static_cast<int>(m), static_cast<int>(n), base, lead(m), &lwork)));
  DeviceBuffer work;
  FLB_TRY(s.allocate(&work, static_cast<size_t>(std::max(lwork, 1)) * sizeof(T)));
  for (int64_t b = 0; b < batch; ++b)
    FLB_TRY(
        s.check("cusolverDnXgetrf",
                pick<T>(s.api().s_getrf, s.api().d_getrf)(
                    s.handle(), static_cast<int>(m), static_cast<int>(n), base + b * m * n, lead(m),
                    work.get<T>(), static_cast<int*>(piv.data) + b * k, info_at(info, b))));
  return launch_status(c->op);
}

// Sets *bad when a pivot of row i (1-based) lies outside [1, n]: getrs would
// swap rows outside the matrix.
__global__ void check_pivots_kernel(const int* piv, int64_t total, int64_t n, int* bad) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += step)
    if (piv[e] < 1 || piv[e] > n) atomicOr(bad, 1);
}

template <class T>
flb_status getrs_typed(const flb_kernel_call* c) {
  const flb_tensor &lu = c->tensors[0], &piv = c->tensors[1], &rhs = c->tensors[2];
  const int64_t batch = lu.sizes[0], n = lu.sizes[1], nrhs = rhs.sizes[1];
  const int64_t trans_char = ints_at(c, 0);
  const cublasOperation_t trans = trans_char == 'N'   ? CUBLAS_OP_N
                                  : trans_char == 'T' ? CUBLAS_OP_T
                                                      : CUBLAS_OP_C;
  Solver s(c);
  // The pivots are checked first (one stream synchronization), as the CPU's
  // lu_solve does: getrs would read and write outside the matrices.
  DeviceBuffer flags;
  FLB_TRY(s.allocate(&flags, 2 * sizeof(int)));
  cudaMemsetAsync(flags.get(), 0, 2 * sizeof(int), s.stream());
  const int64_t total = batch * n;
  check_pivots_kernel<<<blocks_for(total), kThreads, 0, s.stream()>>>(
      static_cast<const int*>(piv.data), total, n, flags.get<int>());
  FLB_TRY(launch_status(c->op));
  int bad = 0;
  cudaError_t err =
      cudaMemcpyAsync(&bad, flags.get(), sizeof(int), cudaMemcpyDeviceToHost, s.stream());
  if (err == cudaSuccess) err = cudaStreamSynchronize(s.stream());
  if (err != cudaSuccess)
    return kernel_fail(FLB_ERROR, c->op, std::string("CUDA error: ") + cudaGetErrorString(err));
  if (bad != 0)
    return kernel_fail(FLB_ERROR, c->op,
                       "Pivots given to lu_solve must all be between 1 and LU.size(-2). Did you "
                       "properly pass the result of lu_factor?");
  FLB_TRY(s.open());
  const T* lu_base = static_cast<const T*>(lu.data);
  T* rhs_base = static_cast<T*>(rhs.data);
  for (int64_t b = 0; b < batch; ++b)
    FLB_TRY(s.check("cusolverDnXgetrs",
                    pick<T>(s.api().s_getrs, s.api().d_getrs)(
                        s.handle(), trans, static_cast<int>(n), static_cast<int>(nrhs),
                        lu_base + b * n * n, lead(n), static_cast<const int*>(piv.data) + b * n,
                        rhs_base + b * n * nrhs, lead(n), flags.get<int>() + 1)));
  return launch_status(c->op);
}

// ---- Cholesky and LDL^T ----

template <class T>
flb_status potrf_typed(const flb_kernel_call* c) {
  const flb_tensor &a = c->tensors[0], &info = c->tensors[1];
  const int64_t batch = a.sizes[0], n = a.sizes[1];
  const cublasFillMode_t uplo = ints_at(c, 0) ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  Solver s(c);
  FLB_TRY(s.open());
  T* base = static_cast<T*>(a.data);
  int lwork = 0;
  FLB_TRY(s.check("cusolverDnXpotrf_bufferSize",
                  pick<T>(s.api().s_potrf_bufferSize, s.api().d_potrf_bufferSize)(
                      s.handle(), uplo, static_cast<int>(n), base, lead(n), &lwork)));
  DeviceBuffer work;
  FLB_TRY(s.allocate(&work, static_cast<size_t>(std::max(lwork, 1)) * sizeof(T)));
  for (int64_t b = 0; b < batch; ++b)
    FLB_TRY(s.check("cusolverDnXpotrf",
                    pick<T>(s.api().s_potrf, s.api().d_potrf)(
                        s.handle(), uplo, static_cast<int>(n), base + b * n * n, lead(n),
                        work.get<T>(), std::max(lwork, 1), info_at(info, b))));
  return launch_status(c->op);
}

template <class T>
flb_status sytrf_typed(const flb_kernel_call* c) {
  const flb_tensor &a = c->tensors[0], &piv = c->tensors[1], &info = c->tensors[2];
  const int64_t batch = a.sizes[0], n = a.sizes[1];
  Solver s(c);
  FLB_TRY(s.open());
  T* base = static_cast<T*>(a.data);
  int lwork = 0;
  FLB_TRY(s.check("cusolverDnXsytrf_bufferSize",
                  pick<T>(s.api().s_sytrf_bufferSize, s.api().d_sytrf_bufferSize)(
                      s.handle(), static_cast<int>(n), base, lead(n), &lwork)));
  DeviceBuffer work;
  FLB_TRY(s.allocate(&work, static_cast<size_t>(std::max(lwork, 1)) * sizeof(T)));
  for (int64_t b = 0; b < batch; ++b)
    FLB_TRY(s.check("cusolverDnXsytrf",
                    pick<T>(s.api().s_sytrf, s.api().d_sytrf)(
                        s.handle(), CUBLAS_FILL_MODE_LOWER, static_cast<int>(n), base + b * n * n,
                        lead(n), static_cast<int*>(piv.data) + b * n, work.get<T>(),
                        std::max(lwork, 1), info_at(info, b))));
  return launch_status(c->op);
}

// ---- QR ----

template <class T>
flb_status geqrf_typed(const flb_kernel_call* c) {
  const flb_tensor &a = c->tensors[0], &q = c->tensors[1];
  const int64_t batch = a.sizes[0], n = a.sizes[1], m = a.sizes[2], k = std::min(m, n);
  const int64_t qc = numel(q) > 0 ? q.sizes[1] : 0;
  Solver s(c);
  FLB_TRY(s.open());
  T* base = static_cast<T*>(a.data);
  T* q_base = static_cast<T*>(q.data);
  DeviceBuffer tau, info;
  FLB_TRY(s.allocate(&tau, static_cast<size_t>(std::max<int64_t>(k, 1)) * sizeof(T)));
  FLB_TRY(s.allocate(&info, sizeof(int)));
  int lwork = 0, lwork_q = 0;
  FLB_TRY(
      s.check("cusolverDnXgeqrf_bufferSize",
              pick<T>(s.api().s_geqrf_bufferSize, s.api().d_geqrf_bufferSize)(
                  s.handle(), static_cast<int>(m), static_cast<int>(n), base, lead(m), &lwork)));
  if (qc > 0)
    FLB_TRY(s.check("cusolverDnXorgqr_bufferSize",
                    pick<T>(s.api().s_orgqr_bufferSize, s.api().d_orgqr_bufferSize)(
                        s.handle(), static_cast<int>(m), static_cast<int>(qc), static_cast<int>(k),
                        q_base, lead(m), tau.get<T>(), &lwork_q)));
  lwork = std::max({lwork, lwork_q, 1});
  DeviceBuffer work;
  FLB_TRY(s.allocate(&work, static_cast<size_t>(lwork) * sizeof(T)));
  for (int64_t b = 0; b < batch; ++b) {
    T* pa = base + b * m * n;
    FLB_TRY(s.check("cusolverDnXgeqrf",
                    pick<T>(s.api().s_geqrf, s.api().d_geqrf)(
                        s.handle(), static_cast<int>(m), static_cast<int>(n), pa, lead(m),
                        tau.get<T>(), work.get<T>(), lwork, info.get<int>())));
    if (qc == 0) continue;
    // Q from the reflectors in the first k columns (the tau buffer is reused in
    // stream order: this matrix's orgqr runs before the next one's geqrf).
    T* pq = q_base + b * m * qc;
    if (cudaMemcpyAsync(pq, pa, static_cast<size_t>(m * std::min(n, qc)) * sizeof(T),
                        cudaMemcpyDeviceToDevice, s.stream()) != cudaSuccess)
      return launch_status(c->op);
    FLB_TRY(s.check("cusolverDnXorgqr",
                    pick<T>(s.api().s_orgqr, s.api().d_orgqr)(
                        s.handle(), static_cast<int>(m), static_cast<int>(qc), static_cast<int>(k),
                        pq, lead(m), tau.get<T>(), work.get<T>(), lwork, info.get<int>())));
  }
  return launch_status(c->op);
}

// ---- symmetric eigenproblem ----

template <class T>
flb_status syevd_typed(const flb_kernel_call* c) {
  const flb_tensor &a = c->tensors[0], &w = c->tensors[1], &info = c->tensors[2];
  const int64_t batch = a.sizes[0], n = a.sizes[1];
  const cublasFillMode_t uplo = ints_at(c, 0) ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  const cusolverEigMode_t jobz =
      ints_at(c, 1) ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  Solver s(c);
  FLB_TRY(s.open());
  T* base = static_cast<T*>(a.data);
  T* w_base = static_cast<T*>(w.data);
  int lwork = 0;
  FLB_TRY(s.check("cusolverDnXsyevd_bufferSize",
                  pick<T>(s.api().s_syevd_bufferSize, s.api().d_syevd_bufferSize)(
                      s.handle(), jobz, uplo, static_cast<int>(n), base, lead(n), w_base, &lwork)));
  lwork = std::max(lwork, 1);
  DeviceBuffer work;
  FLB_TRY(s.allocate(&work, static_cast<size_t>(lwork) * sizeof(T)));
  for (int64_t b = 0; b < batch; ++b)
    FLB_TRY(s.check("cusolverDnXsyevd",
                    pick<T>(s.api().s_syevd, s.api().d_syevd)(
                        s.handle(), jobz, uplo, static_cast<int>(n), base + b * n * n, lead(n),
                        w_base + b * n, work.get<T>(), lwork, info_at(info, b))));
  return launch_status(c->op);
}

// ---- SVD ----

// gesvdj's parameters, one per cuSOLVER handle (gesvdj records its residual and
// sweeps there, so two streams never share one); created once, never destroyed.
std::mutex g_gesvdj_mutex;
std::map<cusolverDnHandle_t, gesvdjInfo_t>* g_gesvdj =
    new std::map<cusolverDnHandle_t, gesvdjInfo_t>();

flb_status gesvdj_params(const flb_kernel_call* c, const Solver& s, gesvdjInfo_t* out) {
  std::lock_guard<std::mutex> guard(g_gesvdj_mutex);
  auto found = g_gesvdj->find(s.handle());
  if (found != g_gesvdj->end()) {
    *out = found->second;
    return FLB_OK;
  }
  gesvdjInfo_t params = nullptr;
  FLB_TRY(s.check("cusolverDnCreateGesvdjInfo", s.api().create_gesvdj_info(&params)));
  g_gesvdj->emplace(s.handle(), params);
  *out = params;
  (void)c;
  return FLB_OK;
}

template <class T>
flb_status gesvd_typed(const flb_kernel_call* c) {
  const flb_tensor &a = c->tensors[0], &u = c->tensors[1], &sv = c->tensors[2], &vh = c->tensors[3],
                   &info = c->tensors[4];
  const int64_t batch = a.sizes[0], n = a.sizes[1], m = a.sizes[2], k = std::min(m, n);
  const int64_t jobz = ints_at(c, 0);
  const bool vectors = jobz != 'N';
  const int econ = jobz == 'A' ? 0 : 1;
  const int64_t ucols = vectors ? u.sizes[1] : 0, vrows = vectors ? vh.sizes[2] : 0;
  if (vectors && (!dense_batch(c, 1, 3) || !dense_batch(c, 3, 3) || u.sizes[2] != m ||
                  vh.sizes[1] != n || ucols != (econ ? k : m) || vrows != (econ ? k : n)))
    return invalid(c, "expected u (B, ucols, m) and vh (B, n, vrows) for jobz");
  Solver s(c);
  FLB_TRY(s.open());
  gesvdjInfo_t params = nullptr;
  FLB_TRY(gesvdj_params(c, s, &params));
  const cusolverEigMode_t mode = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  T* base = static_cast<T*>(a.data);
  T* s_base = static_cast<T*>(sv.data);
  // V (n x vrows, column-major, per matrix): gesvdj's; vh gets its transpose.
  DeviceBuffer v, dummy;
  FLB_TRY(s.allocate(&v, static_cast<size_t>(std::max<int64_t>(batch * n * vrows, 1)) * sizeof(T)));
  FLB_TRY(s.allocate(&dummy, sizeof(T)));
  T* u_base = vectors ? static_cast<T*>(u.data) : dummy.get<T>();
  int lwork = 0;
  FLB_TRY(s.check("cusolverDnXgesvdj_bufferSize",
                  pick<T>(s.api().s_gesvdj_bufferSize, s.api().d_gesvdj_bufferSize)(
                      s.handle(), mode, econ, static_cast<int>(m), static_cast<int>(n), base,
                      lead(m), s_base, u_base, lead(m), v.get<T>(), lead(n), &lwork, params)));
  lwork = std::max(lwork, 1);
  DeviceBuffer work;
  FLB_TRY(s.allocate(&work, static_cast<size_t>(lwork) * sizeof(T)));
  for (int64_t b = 0; b < batch; ++b)
    FLB_TRY(s.check(
        "cusolverDnXgesvdj",
        pick<T>(s.api().s_gesvdj, s.api().d_gesvdj)(
            s.handle(), mode, econ, static_cast<int>(m), static_cast<int>(n), base + b * m * n,
            lead(m), s_base + b * k, vectors ? u_base + b * m * ucols : u_base, lead(m),
            vectors ? v.get<T>() + b * n * vrows : v.get<T>(), lead(n), work.get<T>(), lwork,
            info_at(info, b), params)));
  if (!vectors) return launch_status(c->op);
  // vh[b] (vrows x n, column-major) = V[b]^T: element (j, i) of V at i * n + j goes
  // to j * vrows + i, a strided copy of the (B, n, vrows) index space.
  const int64_t sizes[3] = {batch, n, vrows};
  const int64_t dst_strides[3] = {n * vrows, vrows, 1};
  const int64_t src_strides[3] = {n * vrows, 1, n};
  flb_tensor pair[2] = {vh, vh};
  pair[0].sizes = pair[1].sizes = sizes;
  pair[0].strides = dst_strides;
  pair[1].strides = src_strides;
  pair[1].data = v.get();
  flb_kernel_call copy_call = *c;
  copy_call.n_tensors = 2;
  copy_call.tensors = pair;
  copy_call.n_scalars = 0;
  copy_call.n_ints = 0;
  return copy(nullptr, &copy_call);
}

// ---- triangular solve (cuBLAS) ----

// cuBLAS's batched trsm, resolved from the library cublas_handles.cpp opened.
struct TrsmApi {
  decltype(&cublasStrsmBatched) s = nullptr;
  decltype(&cublasDtrsmBatched) d = nullptr;
};

const TrsmApi* trsm_api(const CublasApi& api, std::string* error) {
  static std::mutex mutex;
  static TrsmApi resolved;
  static bool tried = false;
  static std::string failure;
  std::lock_guard<std::mutex> guard(mutex);
  if (!tried) {
    tried = true;
    // The library that holds the entry points cuBLAS's handles came from.
    Dl_info where{};
    void* lib = nullptr;
    if (dladdr(reinterpret_cast<void*>(api.create), &where) != 0 && where.dli_fname != nullptr)
      lib = dlopen(where.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    if (lib == nullptr) {
      failure = "cuBLAS's library could not be found again for trsm";
    } else {
      resolved.s = reinterpret_cast<decltype(resolved.s)>(dlsym(lib, "cublasStrsmBatched"));
      resolved.d = reinterpret_cast<decltype(resolved.d)>(dlsym(lib, "cublasDtrsmBatched"));
      if (resolved.s == nullptr || resolved.d == nullptr)
        failure = "cuBLAS lacks cublasStrsmBatched/cublasDtrsmBatched";
    }
  }
  if (!failure.empty()) {
    *error = failure;
    return nullptr;
  }
  return &resolved;
}

// ptrs[b] = base + b * stride, for cuBLAS's batched calls.
template <class T>
__global__ void batch_pointers_kernel(T** ptrs, T* base, int64_t stride, int64_t batch) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < batch;
       b += step)
    ptrs[b] = base + b * stride;
}

template <class T>
flb_status trsm_typed(const flb_kernel_call* c) {
  const flb_tensor &a = c->tensors[0], &rhs = c->tensors[1];
  const int64_t batch = a.sizes[0], n = a.sizes[1], rows = rhs.sizes[1], cols = rhs.sizes[2];
  const bool left = ints_at(c, 0) != 0, upper = ints_at(c, 1) != 0, unit = ints_at(c, 2) != 0;
  if (batch > INT_MAX) return invalid(c, "more than 2**31 - 1 matrices");
  auto stream = static_cast<cudaStream_t>(c->stream);
  // Row-major X (rows x cols) is the column-major cols x rows X^T and row-major A
  // the column-major A^T: A X = B is X^T A^T = B^T (A^T on the right), X A = B is
  // A^T X^T = B^T (on the left); A^T's triangle is the other one.
  const cublasSideMode_t side = left ? CUBLAS_SIDE_RIGHT : CUBLAS_SIDE_LEFT;
  const cublasFillMode_t uplo = upper ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
  const cublasDiagType_t diag = unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
  DeviceBuffer ptrs;
  FLB_TRY(
      ptrs.allocate(c->device_index, 2 * static_cast<size_t>(batch) * sizeof(T*), stream, c->op));
  T** a_ptrs = ptrs.get<T*>();
  T** b_ptrs = a_ptrs + batch;
  batch_pointers_kernel<T>
      <<<blocks_for(batch), kThreads, 0, stream>>>(a_ptrs, static_cast<T*>(a.data), n * n, batch);
  batch_pointers_kernel<T><<<blocks_for(batch), kThreads, 0, stream>>>(
      b_ptrs, static_cast<T*>(rhs.data), rows * cols, batch);
  FLB_TRY(launch_status(c->op));
  CublasLease lease;
  std::string error;
  if (!cublas_handle(c->device_index, stream, &lease, &error))
    return kernel_fail(FLB_ERROR, c->op, error);
  const TrsmApi* api = trsm_api(*lease.api, &error);
  if (api == nullptr) return kernel_fail(FLB_ERROR, c->op, error);
  const T one = 1;
  const cublasStatus_t st = pick<T>(api->s, api->d)(
      lease.handle, side, uplo, CUBLAS_OP_N, diag, static_cast<int>(cols), static_cast<int>(rows),
      &one, a_ptrs, lead(n), b_ptrs, lead(cols), static_cast<int>(batch));
  if (st != CUBLAS_STATUS_SUCCESS)
    return kernel_fail(FLB_ERROR, c->op, cublas_error(*lease.api, "cublasXtrsmBatched", st));
  return launch_status(c->op);
}

// Checks the shapes every solver kernel relies on, then runs body<T> on the device.
template <class Body>
flb_status run(const flb_kernel_call* c, int n_tensors, Body&& body) {
  if (c->n_tensors != n_tensors) return invalid(c, "wrong number of tensors");
  return with_solver_dtype(c, [&](auto tag) -> flb_status {
    runtime::DeviceGuard guard(c->device_index);
    return body(tag);
  });
}

}  // namespace

flb_status linalg_getrf(void*, const flb_kernel_call* c) {
  return run(c, 3, [&](auto tag) {
    if (!dense_batch(c, 0, 3) || !dense_batch(c, 1, 2))
      return invalid(c, "expected a dense a (B, n, m) and pivots (B, min(m, n))");
    return getrf_typed<decltype(tag)>(c);
  });
}

flb_status linalg_getrs(void*, const flb_kernel_call* c) {
  return run(c, 3, [&](auto tag) {
    if (!dense_batch(c, 0, 3) || !dense_batch(c, 1, 2) || !dense_batch(c, 2, 3) ||
        c->tensors[1].sizes[1] != c->tensors[0].sizes[1] ||
        c->tensors[2].sizes[2] != c->tensors[0].sizes[1])
      return invalid(c, "expected dense lu (B, n, n), pivots (B, n) and b (B, nrhs, n)");
    return getrs_typed<decltype(tag)>(c);
  });
}

flb_status linalg_potrf(void*, const flb_kernel_call* c) {
  return run(c, 2, [&](auto tag) {
    if (!dense_batch(c, 0, 3)) return invalid(c, "expected a dense a (B, n, n)");
    return potrf_typed<decltype(tag)>(c);
  });
}

flb_status linalg_sytrf(void*, const flb_kernel_call* c) {
  return run(c, 3, [&](auto tag) {
    if (!dense_batch(c, 0, 3) || !dense_batch(c, 1, 2))
      return invalid(c, "expected a dense a (B, n, n) and pivots (B, n)");
    return sytrf_typed<decltype(tag)>(c);
  });
}

flb_status linalg_geqrf(void*, const flb_kernel_call* c) {
  return run(c, 2, [&](auto tag) {
    if (!dense_batch(c, 0, 3) || (numel(c->tensors[1]) > 0 && !dense_batch(c, 1, 3)))
      return invalid(c, "expected a dense a (B, n, m) and q (B, qc, m)");
    return geqrf_typed<decltype(tag)>(c);
  });
}

flb_status linalg_syevd(void*, const flb_kernel_call* c) {
  return run(c, 3, [&](auto tag) {
    if (!dense_batch(c, 0, 3) || !dense_batch(c, 1, 2))
      return invalid(c, "expected a dense a (B, n, n) and w (B, n)");
    return syevd_typed<decltype(tag)>(c);
  });
}

flb_status linalg_gesdd(void*, const flb_kernel_call* c) {
  return run(c, 5, [&](auto tag) {
    if (!dense_batch(c, 0, 3) || !dense_batch(c, 2, 2))
      return invalid(c, "expected a dense a (B, n, m) and s (B, min(m, n))");
    return gesvd_typed<decltype(tag)>(c);
  });
}

flb_status linalg_trsm(void*, const flb_kernel_call* c) {
  return run(c, 2, [&](auto tag) {
    if (!dense_batch(c, 0, 3) || !dense_batch(c, 1, 3))
      return invalid(c, "expected dense row-major a (B, n, n) and b (B, r, c)");
    return trsm_typed<decltype(tag)>(c);
  });
}

}  // namespace flambeau::cuda::kernels
