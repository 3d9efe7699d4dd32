// Scaled dot-product attention over structs [flb_attention_problem] (float32 and
// float64), as the CPU's (cpu/nn_attention_kernels.cpp) computes it:
//   _scaled_dot_product_attention_forward:  tensors [q, k, v, mask?, out, logsumexp]
//   _scaled_dot_product_attention_backward: tensors [q, k, v, mask?, grad_out, out,
//                                           logsumexp, grad_q, grad_k, grad_v]
// For a chunk of problems at a time: the scores scale * q k^T (cuBLAS), one block
// per query row for the mask, the causal triangle, the softmax (log-sum-exp kept)
// and dropout (the CPU's Philox lanes, so the same elements drop), then the
// weights times v (cuBLAS). The backward recomputes the weights from the
// log-sum-exp, as the CPU does. Problems whose operands are equally spaced (every
// offset table an arithmetic progression) share one strided batched GEMM; others
// take one GEMM each. Fixed orders throughout: deterministic.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cuda/std/limits>
#include <utility>
#include <vector>

#include "backend/kernels/call_args.cuh"
#include "backend/kernels/device_buffer.h"
#include "backend/kernels/gemm_rows.cuh"
#include "backend/kernels/kernels.h"
#include "backend/kernels/random_sampling.h"
#include "backend/kernels/reduce_plan.h"
#include "runtime/cuda_error.h"

namespace flambeau::cuda::kernels {

namespace {

// At most this many bytes of score matrices at a time (at least one problem's).
constexpr int64_t kScoreBytes = int64_t(256) << 20;

// What the row kernels read of the problem.
template <class T>
struct RowArgs {
  int64_t first;  // the chunk's first problem
  int64_t L, S, Ev;
  const char* mask;         // null: none
  bool mask_bool;           // bool (true takes part) or T (added)
  const int64_t* mask_off;  // device copy, one per problem
  int64_t mask_row, mask_col;
  bool causal;
  double dropout_p;
  uint64_t seed, offset;
};

// Block-wide max and sum over a power-of-two block (every thread gets the result).
template <class A>
__device__ A block_max(A* partial, A mine) {
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half && partial[threadIdx.x + half] > partial[threadIdx.x])
      partial[threadIdx.x] = partial[threadIdx.x + half];
    __syncthreads();
  }
  const A r = partial[0];
  __syncthreads();
  return r;
}
template <class A>
__device__ A block_sum(A* partial, A mine) {
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  const A r = partial[0];
  __syncthreads();
  return r;
}

// Score j of row l of problem i after the mask and the causal triangle.
template <class T>
__device__ inline T masked_score(const RowArgs<T>& a, int64_t i, int64_t l, int64_t j, T s) {
  constexpr T kNegInf = -::cuda::std::numeric_limits<T>::infinity();
  if (a.mask != nullptr) {
    const int64_t at = a.mask_off[i] + l * a.mask_row + j * a.mask_col;
    if (a.mask_bool) {
      if (!reinterpret_cast<const bool*>(a.mask)[at]) s = kNegInf;
    } else {
      s += reinterpret_cast<const T*>(a.mask)[at];
    }
  }
  if (a.causal && j > l) s = kNegInf;
  return s;
}

// Dropout's factor for element (i, l, j): 1 / (1 - p) when lane (i * L + l) * S + j
// of the Philox stream (seed, offset) is below 1 - p, else 0.
template <class T>
__device__ inline T dropout_factor(const RowArgs<T>& a, int64_t i, int64_t l, int64_t j) {
  const uint64_t lane = static_cast<uint64_t>((i * a.L + l) * a.S + j);
  const uint32_t bits = philox4x32(a.seed, a.offset + lane / 4).w[lane % 4];
  const double factor = a.dropout_p < 1 ? 1 / (1 - a.dropout_p) : 0;
  return static_cast<double>(bits) * 0x1.0p-32 < 1 - a.dropout_p ? T(factor) : T(0);
}

// Scores (rows of S) into attention weights in place; lse[i * L + l].
template <class T>
__global__ void softmax_rows_kernel(T* scores, T* lse, RowArgs<T> a, int64_t rows) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* partial = reinterpret_cast<T*>(shared_bytes);
  constexpr T kNegInf = -::cuda::std::numeric_limits<T>::infinity();
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t l = r % a.L, i = a.first + r / a.L;
    T* row = scores + r * a.S;
    T mx = kNegInf;
    for (int64_t j = threadIdx.x; j < a.S; j += blockDim.x) {
      const T s = masked_score(a, i, l, j, row[j]);
      row[j] = s;
      mx = s > mx ? s : mx;
    }
    mx = block_max(partial, mx);
    if (mx == kNegInf) {  // fully masked: weights 0, as PyTorch
      for (int64_t j = threadIdx.x; j < a.S; j += blockDim.x) row[j] = T(0);
      if (threadIdx.x == 0) lse[i * a.L + l] = mx;
      continue;
    }
    T sum = 0;
    for (int64_t j = threadIdx.x; j < a.S; j += blockDim.x) {
      const T e = exp(row[j] - mx);
      row[j] = e;
      sum += e;
    }
    sum = block_sum(partial, sum);
    if (threadIdx.x == 0) lse[i * a.L + l] = mx + log(sum);
    const T inv = T(1) / sum;
    for (int64_t j = threadIdx.x; j < a.S; j += blockDim.x)
      row[j] *= a.dropout_p > 0 ? inv * dropout_factor(a, i, l, j) : inv;
  }
}

// The backward's rows: w = exp(score - lse) and ds = w * (dw - D) (with dropout,
// ds = w * (dw * f - D) and w *= f), D = grad_out . out of the row.
template <class T>
__global__ void backward_rows_kernel(T* w, T* ds, const T* lse, const T* go, const T* out,
                                     RowArgs<T> a, int64_t rows) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  T* partial = reinterpret_cast<T*>(shared_bytes);
  constexpr T kNegInf = -::cuda::std::numeric_limits<T>::infinity();
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t l = r % a.L, i = a.first + r / a.L;
    T* wr = w + r * a.S;
    T* dr = ds + r * a.S;
    const T m = lse[i * a.L + l];
    if (m == kNegInf) {  // fully masked row: no gradient
      for (int64_t j = threadIdx.x; j < a.S; j += blockDim.x) wr[j] = dr[j] = T(0);
      continue;
    }
    const T* gor = go + (i * a.L + l) * a.Ev;
    const T* outr = out + (i * a.L + l) * a.Ev;
    T d = 0;
    for (int64_t c = threadIdx.x; c < a.Ev; c += blockDim.x) d += gor[c] * outr[c];
    d = block_sum(partial, d);
    for (int64_t j = threadIdx.x; j < a.S; j += blockDim.x) {
      const T e = exp(masked_score(a, i, l, j, wr[j]) - m);
      if (a.dropout_p > 0) {
        const T f = dropout_factor(a, i, l, j);
        dr[j] = e * (dr[j] * f - d);
        wr[j] = e * f;
      } else {
        dr[j] = e * (dr[j] - d);
        wr[j] = e;
      }
    }
  }
}

// An operand addressed per problem: base + off[i] (host table), or base + (i -
// origin) * stride (a buffer holding the chunk that starts at problem origin).
template <class T>
struct Operand {
  const T* base;
  const int64_t* off;  // null: (i - origin) * stride
  int64_t stride;
  int64_t origin = 0;
  int64_t at(int64_t i) const { return off ? off[i] : (i - origin) * stride; }
};

// Problems [i0, i0 + n) of c = alpha op(a) op(b) + beta c: one strided batched GEMM
// when every operand is equally spaced over them, else one GEMM per problem.
template <class T>
flb_status gemm_problems(const flb_kernel_call* call, RowGemm g, T alpha, Operand<T> a,
                         Operand<T> b, T beta, T* c, int64_t c_stride, int64_t i0, int64_t n) {
  if (g.k == 0) return FLB_OK;  // the outputs were zeroed
  auto spacing = [&](const Operand<T>& o, int64_t* stride) {
    *stride = n > 1 ? o.at(i0 + 1) - o.at(i0) : 0;
    for (int64_t i = i0 + 1; i < i0 + n; ++i)
      if (o.at(i) - o.at(i - 1) != *stride) return false;
    return true;
  };
  int64_t sa, sb;
  if (spacing(a, &sa) && spacing(b, &sb) && sa >= 0 && sb >= 0) {
    g.batch = n;
    g.stride_a = sa;
    g.stride_b = sb;
    g.stride_c = c_stride;
    return row_gemm<T>(call, g, alpha, a.base + a.at(i0), b.base + b.at(i0), beta, c);
  }
  g.batch = 1;
  for (int64_t i = i0; i < i0 + n; ++i)
    if (flb_status s = row_gemm<T>(call, g, alpha, a.base + a.at(i), b.base + b.at(i), beta,
                                   c + (i - i0) * c_stride);
        s != FLB_OK)
      return s;
  return FLB_OK;
}

unsigned row_blocks(int64_t rows) {
  const int64_t cap = 65535LL * 32;
  return static_cast<unsigned>(rows < cap ? rows : cap);
}

flb_status zero(const flb_kernel_call* c, void* p, int64_t bytes) {
  if (bytes <= 0) return FLB_OK;
  if (cudaMemsetAsync(p, 0, static_cast<size_t>(bytes), static_cast<cudaStream_t>(c->stream)) !=
      cudaSuccess)
    return launch_status(c->op);
  return FLB_OK;
}

template <class T>
flb_status attention(const flb_kernel_call* c, const flb_attention_problem& p, bool backward) {
  const int64_t count = p.count, L = p.L, S = p.S, E = p.E, Ev = p.Ev;
  auto stream = static_cast<cudaStream_t>(c->stream);
  auto tensor = [&](int32_t k) -> const flb_tensor* {
    return k >= 0 && k < c->n_tensors && present(c, k) ? &c->tensors[k] : nullptr;
  };
  const flb_tensor *tq = tensor(p.q), *tk = tensor(p.k), *tv = tensor(p.v), *tm = tensor(p.mask);
  if (!tq || !tk || !tv || p.n_q_off < count || p.n_k_off < count || p.n_v_off < count ||
      (tm && p.n_mask_off < count))
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing q, k, v or offset tables");
  const int base = 4;  // the kernel's own tensors follow q, k, v, mask
  if (c->n_tensors < base + (backward ? 6 : 2))
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors");
  const int32_t dtype = c->tensors[base].dtype;
  for (const flb_tensor* t : {tq, tk, tv})
    if (t->dtype != dtype) return unsupported_dtypes(c);
  if (tm && tm->dtype != dtype && tm->dtype != FLB_BOOL) return unsupported_dtypes(c);
  for (int k = base; k < c->n_tensors; ++k)
    if (c->tensors[k].dtype != dtype || !dense(c->tensors[k])) return unsupported_dtypes(c);
  T* out_like[6] = {};
  for (int k = base; k < c->n_tensors && k < base + 6; ++k)
    out_like[k - base] = static_cast<T*>(c->tensors[k].data);
  runtime::DeviceGuard guard(c->device_index);
  // Forward: out, lse; backward: grad_out, out, lse, grad_q, grad_k, grad_v.
  T *out = nullptr, *lse = nullptr, *gq = nullptr, *gk = nullptr, *gv = nullptr;
  const T *go = nullptr, *o = nullptr, *lse_in = nullptr;
  if (!backward) {
    out = out_like[0];
    lse = out_like[1];
    if (flb_status s = zero(c, out, count * L * Ev * int64_t(sizeof(T))); s != FLB_OK) return s;
  } else {
    go = out_like[0];
    o = out_like[1];
    lse_in = out_like[2];
    gq = out_like[3];
    gk = out_like[4];
    gv = out_like[5];
    for (auto [ptr, n] :
         {std::pair<T*, int64_t>{gq, count * L * E}, {gk, count * S * E}, {gv, count * S * Ev}})
      if (flb_status s = zero(c, ptr, n * int64_t(sizeof(T))); s != FLB_OK) return s;
  }
  if (count == 0 || L == 0) return FLB_OK;
  if (S == 0) {  // no keys: every row is fully masked
    if (!backward) {
      std::vector<T> inf(static_cast<size_t>(count * L),
                         -::cuda::std::numeric_limits<T>::infinity());
      if (cudaMemcpyAsync(lse, inf.data(), inf.size() * sizeof(T), cudaMemcpyHostToDevice,
                          stream) != cudaSuccess)
        return launch_status(c->op);
    }
    return FLB_OK;
  }
  DeviceBuffer mask_off;
  if (tm) {
    const size_t bytes = static_cast<size_t>(count) * 8;
    if (flb_status s = mask_off.allocate(c->device_index, bytes, stream, c->op); s != FLB_OK)
      return s;
    if (cudaMemcpyAsync(mask_off.get(), p.mask_off, bytes, cudaMemcpyHostToDevice, stream) !=
        cudaSuccess)
      return launch_status(c->op);
  }
  const int64_t per_problem = L * S * int64_t(sizeof(T)) * (backward ? 2 : 1);
  int64_t chunk = kScoreBytes / per_problem;
  if (chunk < 1) chunk = 1;
  if (chunk > count) chunk = count;
  DeviceBuffer scores, dscores;
  if (flb_status s =
          scores.allocate(c->device_index, size_t(chunk * L * S) * sizeof(T), stream, c->op);
      s != FLB_OK)
    return s;
  if (backward) {
    if (flb_status s =
            dscores.allocate(c->device_index, size_t(chunk * L * S) * sizeof(T), stream, c->op);
        s != FLB_OK)
      return s;
  }
  const Operand<T> q{static_cast<const T*>(tq->data), p.q_off, 0};
  const Operand<T> k{static_cast<const T*>(tk->data), p.k_off, 0};
  const Operand<T> v{static_cast<const T*>(tv->data), p.v_off, 0};
  RowArgs<T> ra{};
  ra.L = L;
  ra.S = S;
  ra.Ev = Ev;
  ra.mask = tm ? static_cast<const char*>(tm->data) : nullptr;
  ra.mask_bool = tm && tm->dtype == FLB_BOOL;
  ra.mask_off = tm ? mask_off.get<int64_t>() : nullptr;
  ra.mask_row = p.mask_row;
  ra.mask_col = p.mask_col;
  ra.causal = p.causal != 0;
  ra.dropout_p = p.dropout_p;
  ra.seed = p.seed;
  ra.offset = p.offset;
  const unsigned threads = reduce_threads_for(S > Ev ? S : Ev);
  const T scale = static_cast<T>(p.scale);
  for (int64_t i0 = 0; i0 < count; i0 += chunk) {
    const int64_t n = chunk < count - i0 ? chunk : count - i0, rows = n * L;
    ra.first = i0;
    T* sc = scores.get<T>();
    // scores (L x S) = scale * q (L x E) @ k^T
    RowGemm gs;
    gs.trans_b = true;
    gs.m = L;
    gs.n = S;
    gs.k = E;
    gs.lda = p.q_ld;
    gs.ldb = p.k_ld;
    gs.ldc = S;
    if (E == 0) {
      if (flb_status s = zero(c, sc, rows * S * int64_t(sizeof(T))); s != FLB_OK) return s;
    } else if (flb_status s = gemm_problems<T>(c, gs, scale, q, k, T(0), sc, L * S, i0, n);
               s != FLB_OK) {
      return s;
    }
    if (!backward) {
      softmax_rows_kernel<T>
          <<<row_blocks(rows), threads, threads * sizeof(T), stream>>>(sc, lse, ra, rows);
      if (flb_status s = launch_status(c->op); s != FLB_OK) return s;
      // out (L x Ev) = weights (L x S) @ v (S x Ev)
      RowGemm gw;
      gw.m = L;
      gw.n = Ev;
      gw.k = S;
      gw.lda = S;
      gw.ldb = p.v_ld;
      gw.ldc = Ev;
      const Operand<T> w{sc, nullptr, L * S, i0};
      if (flb_status s =
              gemm_problems<T>(c, gw, T(1), w, v, T(0), out + i0 * L * Ev, L * Ev, i0, n);
          s != FLB_OK)
        return s;
      continue;
    }
    T* ds = dscores.get<T>();
    // dw (L x S) = grad_out (L x Ev) @ v^T
    RowGemm gd;
    gd.trans_b = true;
    gd.m = L;
    gd.n = S;
    gd.k = Ev;
    gd.lda = Ev;
    gd.ldb = p.v_ld;
    gd.ldc = S;
    const Operand<T> go_op{go, nullptr, L * Ev};
    if (Ev == 0) {
      if (flb_status s = zero(c, ds, rows * S * int64_t(sizeof(T))); s != FLB_OK) return s;
    } else if (flb_status s = gemm_problems<T>(c, gd, T(1), go_op, v, T(0), ds, L * S, i0, n);
               s != FLB_OK) {
      return s;
    }
    backward_rows_kernel<T><<<row_blocks(rows), threads, threads * sizeof(T), stream>>>(
        sc, ds, lse_in, go, o, ra, rows);
    if (flb_status s = launch_status(c->op); s != FLB_OK) return s;
    const Operand<T> w_op{sc, nullptr, L * S, i0};
    const Operand<T> ds_op{ds, nullptr, L * S, i0};
    // grad_v (S x Ev) = w^T (S x L) @ grad_out (L x Ev)
    RowGemm g1;
    g1.trans_a = true;
    g1.m = S;
    g1.n = Ev;
    g1.k = L;
    g1.lda = S;
    g1.ldb = Ev;
    g1.ldc = Ev;
    if (flb_status s =
            gemm_problems<T>(c, g1, T(1), w_op, go_op, T(0), gv + i0 * S * Ev, S * Ev, i0, n);
        s != FLB_OK)
      return s;
    // grad_q (L x E) = scale * ds (L x S) @ k (S x E)
    RowGemm g2;
    g2.m = L;
    g2.n = E;
    g2.k = S;
    g2.lda = S;
    g2.ldb = p.k_ld;
    g2.ldc = E;
    if (flb_status s =
            gemm_problems<T>(c, g2, scale, ds_op, k, T(0), gq + i0 * L * E, L * E, i0, n);
        s != FLB_OK)
      return s;
    // grad_k (S x E) = scale * ds^T (S x L) @ q (L x E)
    RowGemm g3;
    g3.trans_a = true;
    g3.m = S;
    g3.n = E;
    g3.k = L;
    g3.lda = S;
    g3.ldb = p.q_ld;
    g3.ldc = E;
    if (flb_status s =
            gemm_problems<T>(c, g3, scale, ds_op, q, T(0), gk + i0 * S * E, S * E, i0, n);
        s != FLB_OK)
      return s;
  }
  return FLB_OK;
}

flb_status run_attention(const flb_kernel_call* c, bool backward) {
  if (c->n_structs < 1 || c->structs == nullptr)
    return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing the attention problem");
  const auto& p = *static_cast<const flb_attention_problem*>(c->structs[0]);
  if (c->n_tensors < 5) return kernel_fail(FLB_INVALID_ARGUMENT, c->op, "missing tensors");
  const int32_t dtype = c->tensors[4].dtype;
  if (dtype == FLB_FLOAT32) return attention<float>(c, p, backward);
  if (dtype == FLB_FLOAT64) return attention<double>(c, p, backward);
  return unsupported_dtypes(c);
}

}  // namespace

flb_status attention_forward(void*, const flb_kernel_call* c) { return run_attention(c, false); }

flb_status attention_backward(void*, const flb_kernel_call* c) { return run_attention(c, true); }

}  // namespace flambeau::cuda::kernels
