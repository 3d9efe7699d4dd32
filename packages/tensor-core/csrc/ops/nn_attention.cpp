// Frontends of scaled dot-product attention (ops/nn_attention.yaml): argument
// checks, the broadcast batch shape, per-problem offset tables (see
// ops/attention_kernels.h) and, in the backward, the sums that fold gradients
// of broadcast or shared (grouped-query) inputs back to the inputs' shapes.
// Float16/BFloat16 compute in float32.
#include <cmath>

#include "generated/kernels.h"
#include "generated/ops_nn_attention.h"
#include "generated/ops_reduction.h"
#include "generated/ops_shape.h"
#include "generated/ops_tensor.h"
#include "ops/attention_kernels.h"

namespace flambeau::ops {

namespace {

constexpr const char* kName = "scaled_dot_product_attention";

// The checked inputs and the problem the kernels see.
struct Prepared {
  AttentionProblem p;
  DimVector batch;      // broadcast batch dims (heads included)
  int64_t k_ratio = 1;  // query heads per key head (grouped-query attention)
  int64_t v_ratio = 1;  // query heads per value head
  ScalarType dtype;     // the inputs' dtype
  ScalarType compute;   // float32 or float64
};

ScalarType compute_type(ScalarType t) {
  return t == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
}

DimVector batch_dims(const Tensor& t) {
  DimVector d;
  d.assign(t->sizes().begin(), t->sizes().end() - 2);
  return d;
}

// Element offsets of each problem (batch index, row-major over `batch`) in t,
// whose leading dims broadcast against batch (right-aligned); the head dim
// (last of batch) is divided by `ratio` (grouped-query attention).
std::vector<int64_t> offsets(const Tensor& t, IntList batch, int64_t ratio) {
  const int64_t nb = static_cast<int64_t>(batch.size());
  const int64_t lead = nb - (t->dim() - 2);  // batch dims t lacks
  std::vector<int64_t> off(static_cast<size_t>(numel_of(batch)), 0);
  DimVector idx(batch.size(), 0);
  for (size_t n = 0; n < off.size(); ++n) {
    int64_t o = 0;
    for (int64_t d = lead; d < nb; ++d) {
      const int64_t size = t->sizes()[d - lead];
      int64_t i = size == 1 ? 0 : idx[d];
      if (d == nb - 1) i /= ratio;
      o += i * t->stride(d - lead);
    }
    off[n] = o;
    for (int64_t d = nb - 1; d >= 0; --d) {  // next batch index
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  return off;
}

// t in the compute dtype with a unit-stride last dim and rows at least a row
// apart, as GEMM needs; returns its leading dimension in ld.
Tensor gemm_operand(const Tensor& t, ScalarType compute, int64_t& ld) {
  Tensor c = to_dtype(t, compute);
  const int64_t rows = c->sizes()[c->dim() - 2], cols = c->sizes()[c->dim() - 1];
  const bool ok = (cols <= 1 || c->stride(-1) == 1) && (rows <= 1 || c->stride(-2) >= cols);
  if (!ok) c = contiguous(c);
  ld = rows <= 1 ? cols : c->stride(-2);
  ld = std::max<int64_t>({ld, cols, 1});
  return c;
}

bool broadcastable(IntList a, IntList b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 1; i <= n; ++i) {
    const int64_t x = a[a.size() - i], y = b[b.size() - i];
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

// Number of query heads per key (or value) head under enable_gqa.
int64_t head_ratio(const Tensor& q, const Tensor& kv, bool gqa) {
  if (!gqa || q->dim() < 3 || kv->dim() < 3) return 1;
  const int64_t hq = q->sizes()[q->dim() - 3], hk = kv->sizes()[kv->dim() - 3];
  if (hk == hq || hk == 0) return 1;
  FLB_CHECK(hq % hk == 0, kName,
            ": Number of heads in key and value must divide the number of heads in query, but "
            "got query of shape ",
            shape_str(q->sizes()), " and key/value of shape ", shape_str(kv->sizes()));
  return hq / hk;
}

// kv's batch dims with its head dim counted as the query's.
DimVector grouped_batch(const Tensor& kv, int64_t ratio) {
  DimVector b = batch_dims(kv);
  if (ratio > 1) b[b.size() - 1] *= ratio;
  return b;
}

Prepared prepare(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                 double dropout_p, bool is_causal, std::optional<double> scale, bool gqa) {
  FLB_CHECK(q->dim() >= 2 && k->dim() >= 2 && v->dim() >= 2, kName,
            ": Expected query, key, and value to all be at least 2 dimensional, but got "
            "query of shape ",
            shape_str(q->sizes()), ", key of shape ", shape_str(k->sizes()), " and value of shape ",
            shape_str(v->sizes()));
  FLB_CHECK(q->dtype() == k->dtype() && q->dtype() == v->dtype(), kName,
            ": Expected query, key, and value to have the same dtype, but got query.dtype: ",
            dtype_name(q->dtype()), " key.dtype: ", dtype_name(k->dtype()),
            " and value.dtype: ", dtype_name(v->dtype()), " instead.");
  if (!is_floating(q->dtype())) fail_dtype(kName, q->dtype());
  if (mask)
    common_device({&q, &k, &v, &mask}, kName);
  else
    common_device({&q, &k, &v}, kName);
  FLB_CHECK(dropout_p >= 0 && dropout_p <= 1, kName,
            ": dropout probability has to be between 0 and 1, but got ", dropout_p);
  FLB_CHECK(!(mask && is_causal), kName,
            ": Explicit attn_mask should not be set when is_causal=True");
  const int64_t E = q->sizes()[q->dim() - 1];
  FLB_CHECK(k->sizes()[k->dim() - 1] == E, kName,
            ": query and key must have the same embedding size (last dim), but got query of "
            "shape ",
            shape_str(q->sizes()), " and key of shape ", shape_str(k->sizes()));
  FLB_CHECK(k->sizes()[k->dim() - 2] == v->sizes()[v->dim() - 2], kName,
            ": key and value must have the same sequence length (dim -2), but got key of shape ",
            shape_str(k->sizes()), " and value of shape ", shape_str(v->sizes()));
  if (mask) {
    const ScalarType m = mask->dtype();
    FLB_CHECK(m == ScalarType::Bool || m == ScalarType::Float32 || m == q->dtype(), kName,
              ": Expected attn_mask dtype to be bool or float or to match query dtype, but got "
              "attn_mask.dtype: ",
              dtype_name(m), " and query.dtype: ", dtype_name(q->dtype()), " instead.");
  }

  Prepared r;
  r.dtype = q->dtype();
  r.compute = compute_type(r.dtype);
  r.k_ratio = head_ratio(q, k, gqa);
  r.v_ratio = head_ratio(q, v, gqa);
  const DimVector qb = batch_dims(q), kb = grouped_batch(k, r.k_ratio);
  const DimVector vb = grouped_batch(v, r.v_ratio);
  FLB_CHECK(broadcastable(qb, kb) && broadcastable(qb, vb) && broadcastable(kb, vb), kName,
            ": the batch dims of query ", shape_str(q->sizes()), ", key ", shape_str(k->sizes()),
            " and value ", shape_str(v->sizes()), " do not broadcast",
            gqa ? " (key and value heads, dim -3, counted as the query's)" : "");
  r.batch = broadcast_shapes(broadcast_shapes(qb, kb, kName), vb, kName);
  AttentionProblem& p = r.p;
  p.count = numel_of(r.batch);
  p.L = q->sizes()[q->dim() - 2];
  p.S = k->sizes()[k->dim() - 2];
  p.E = E;
  p.Ev = v->sizes()[v->dim() - 1];
  p.q = gemm_operand(q, r.compute, p.q_ld);
  p.k = gemm_operand(k, r.compute, p.k_ld);
  p.v = gemm_operand(v, r.compute, p.v_ld);
  // A batch dim of size 1 (rather than the query's head count) shares its head:
  // offsets() reads index 0 there whatever the ratio.
  p.q_off = offsets(p.q, r.batch, 1);
  p.k_off = offsets(p.k, r.batch, r.k_ratio);
  p.v_off = offsets(p.v, r.batch, r.v_ratio);
  if (mask) {
    DimVector full(r.batch);
    full.push_back(p.L);
    full.push_back(p.S);
    bool fits = mask->dim() <= static_cast<int64_t>(full.size());
    for (int64_t i = 0; fits && i < mask->dim(); ++i) {
      const int64_t size = mask->sizes()[i], want = full[full.size() - mask->dim() + i];
      fits = size == want || size == 1;
    }
    FLB_CHECK(fits, kName, ": attn_mask of shape ", shape_str(mask->sizes()),
              " is not broadcastable to the attention weights of shape ", shape_str(full));
    Tensor m = mask->dtype() == ScalarType::Bool ? mask : to_dtype(mask, r.compute);
    p.mask = expand_to(m, full, kName);
    p.mask_off = offsets(p.mask, r.batch, 1);
    p.mask_row = p.mask->stride(-2);
    p.mask_col = p.mask->stride(-1);
  }
  p.scale = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(E));
  p.causal = is_causal;
  p.dropout_p = dropout_p;
  return r;
}

DimVector with_rows(IntList batch, int64_t rows, int64_t cols) {
  DimVector s;
  s.assign(batch.begin(), batch.end());
  s.push_back(rows);
  if (cols >= 0) s.push_back(cols);
  return s;
}

Tensor int64_scalar(uint64_t value) {
  Tensor t = flambeau::empty(DimVector{}, ScalarType::Int64);
  t->data_as<int64_t>()[0] = static_cast<int64_t>(value);
  return t;
}

uint64_t read_int64(const Tensor& t, const char* what) {
  FLB_CHECK(t->dtype() == ScalarType::Int64 && t->numel() == 1,
            "_scaled_dot_product_attention_backward: expected ", what,
            " to be a one-element int64 tensor, got ", dtype_name(t->dtype()), " of shape ",
            shape_str(t->sizes()));
  return static_cast<uint64_t>(cpu(contiguous(t))->data_as<int64_t>()[0]);  // (read on the host)
}

// grad (batch..., rows, cols), one per problem, summed to the shape of input:
// over the query heads sharing one of its heads, then over broadcast dims.
Tensor fold_to(Tensor grad, const Tensor& input, int64_t ratio, ScalarType dtype) {
  if (ratio > 1) {
    // (..., heads, rows, cols) -> (..., heads / ratio, ratio, rows, cols)
    const int64_t h = grad->dim() - 3;
    DimVector s;
    for (int64_t d = 0; d < grad->dim(); ++d) {
      s.push_back(d == h ? grad->sizes()[d] / ratio : grad->sizes()[d]);
      if (d == h) s.push_back(ratio);
    }
    grad = sum(reshape(grad, s), DimVector{h + 1}, false, std::nullopt, OutArg::none());
  }
  const int64_t lead = grad->dim() - input->dim();
  DimVector dims;
  for (int64_t d = 0; d < grad->dim(); ++d)
    if (d < lead || (input->sizes()[d - lead] == 1 && grad->sizes()[d] != 1)) dims.push_back(d);
  if (!dims.empty()) grad = sum(grad, dims, true, std::nullopt, OutArg::none());
  if (lead > 0) grad = reshape(grad, input->sizes());
  return to_dtype(grad, dtype);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor> _scaled_dot_product_attention_forward(
    const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
    double dropout_p, bool is_causal, std::optional<double> scale, bool enable_gqa) {
  Prepared r = prepare(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa);
  AttentionProblem& p = r.p;
  if (dropout_p > 0) {
    Generator& gen = default_generator();
    p.seed = gen.seed();
    p.offset = gen.reserve((static_cast<uint64_t>(p.count * p.L * p.S) + 3) / 4);
  }
  const Device device = query->device();
  Tensor out = flambeau::empty(with_rows(r.batch, p.L, p.Ev), r.compute, device);
  Tensor lse = flambeau::empty(with_rows(r.batch, p.L, -1), r.compute, device);
  kernel<kernels::_scaled_dot_product_attention_forward>(device)(p, out, lse);
  return {to_dtype(out, r.dtype), lse, int64_scalar(p.seed), int64_scalar(p.offset)};
}

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, bool enable_gqa) {
  return std::get<0>(_scaled_dot_product_attention_forward(query, key, value, attn_mask, dropout_p,
                                                           is_causal, scale, enable_gqa));
}

std::tuple<Tensor, Tensor, Tensor> _scaled_dot_product_attention_backward(
    const Tensor& grad_out, const Tensor& query, const Tensor& key, const Tensor& value,
    const Tensor& out, const Tensor& logsumexp, const Tensor& philox_seed,
    const Tensor& philox_offset, double dropout_p, bool is_causal, const Tensor& attn_mask,
    std::optional<double> scale, bool enable_gqa) {
  const char* name = "_scaled_dot_product_attention_backward";
  Prepared r = prepare(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa);
  AttentionProblem& p = r.p;
  const DimVector out_shape = with_rows(r.batch, p.L, p.Ev);
  const DimVector lse_shape = with_rows(r.batch, p.L, -1);
  FLB_CHECK(grad_out->sizes() == IntList(out_shape) && out->sizes() == IntList(out_shape), name,
            ": expected grad_out and out of shape ", shape_str(out_shape), ", got ",
            shape_str(grad_out->sizes()), " and ", shape_str(out->sizes()));
  FLB_CHECK(logsumexp->sizes() == IntList(lse_shape), name, ": expected logsumexp of shape ",
            shape_str(lse_shape), ", got ", shape_str(logsumexp->sizes()));
  if (dropout_p > 0) {
    p.seed = read_int64(philox_seed, "philox_seed");
    p.offset = read_int64(philox_offset, "philox_offset");
  }
  const Device device = query->device();
  common_device({&query, &grad_out, &out, &logsumexp}, name);
  Tensor go = contiguous(to_dtype(grad_out, r.compute));
  Tensor o = contiguous(to_dtype(out, r.compute));
  Tensor lse = contiguous(to_dtype(logsumexp, r.compute));
  Tensor gq = flambeau::empty(with_rows(r.batch, p.L, p.E), r.compute, device);
  Tensor gk = flambeau::empty(with_rows(r.batch, p.S, p.E), r.compute, device);
  Tensor gv = flambeau::empty(with_rows(r.batch, p.S, p.Ev), r.compute, device);
  kernel<kernels::_scaled_dot_product_attention_backward>(device)(p, go, o, lse, gq, gk, gv);
  return {fold_to(gq, query, 1, r.dtype), fold_to(gk, key, r.k_ratio, r.dtype),
          fold_to(gv, value, r.v_ratio, r.dtype)};
}

}  // namespace flambeau::ops
