// Frontends of embedding and embedding_bag and their backward kernels: index
// dtype and range checks (IndexError naming the bad index), bag boundaries,
// output allocation; the loops are in cpu/nn_embedding_kernels.cpp.
#include "generated/kernels.h"
#include "generated/ops_nn_activation.h"
#include "generated/ops_tensor.h"
#include "ops/nn_kernels.h"
#include "plugin/foreign_call.h"

namespace flambeau::ops {

namespace {

// indices as contiguous int64, every entry in [0, rows).
Tensor checked_indices(const Tensor& indices, int64_t rows, const char* name) {
  FLB_CHECK(indices->dtype() == ScalarType::Int64 || indices->dtype() == ScalarType::Int32, name,
            ": Expected tensor for argument #1 'indices' to have one of the following scalar "
            "types: Long, Int; but got ",
            dtype_name(indices->dtype()), " instead");
  Tensor idx = contiguous(to_dtype(indices, ScalarType::Int64));
  if (!idx->device().has_data()) return idx;  // meta: no values to check
  Tensor host = ops::cpu(idx);  // the range check reads the values (a device's are copied)
  const int64_t* p = host->data_as<const int64_t>();
  for (int64_t i = 0; i < host->numel(); ++i) {
    FLB_CHECK_T(IndexError, p[i] >= 0 && p[i] < rows, name, ": index ", p[i],
                " is out of range for a weight with ", rows, " rows (index out of range in self)");
  }
  return idx;
}

void check_weight(const Tensor& weight, const char* name) {
  FLB_CHECK(weight->dim() == 2, name, ": 'weight' must be 2-D, got shape ",
            shape_str(weight->sizes()));
}

int64_t wrap_padding(int64_t padding_idx, int64_t rows, const char* name) {
  if (padding_idx == -1 && rows == 0) return -1;
  FLB_CHECK(padding_idx >= -rows && padding_idx < rows, name, ": padding_idx ", padding_idx,
            " must be within num_embeddings (", rows, ")");
  return padding_idx < 0 ? padding_idx + rows : padding_idx;
}

// A bookkeeping tensor of embedding_bag (offset2bag, bag_size, maximum_indices)
// as contiguous int64 of the expected shape, every entry in [lo, hi).
Tensor checked_bag_tensor(const Tensor& t, const char* what, IntList shape, int64_t lo, int64_t hi,
                          const char* name) {
  FLB_CHECK(t, name, ": ", what, " must be a tensor, got None");
  FLB_CHECK(t->dtype() == ScalarType::Int64 || t->dtype() == ScalarType::Int32, name, ": ", what,
            " must be an integer tensor (Long or Int), got ", dtype_name(t->dtype()));
  FLB_CHECK(t->sizes() == shape, name, ": expected ", what, " of shape ", shape_str(shape),
            ", got ", shape_str(t->sizes()));
  Tensor r = contiguous(to_dtype(t, ScalarType::Int64));
  if (!r->device().has_data()) return r;  // meta: no values to check
  Tensor host = ops::cpu(r);              // the check reads the values (a device's are copied)
  const int64_t* p = host->data_as<const int64_t>();
  for (int64_t i = 0; i < host->numel(); ++i)
    FLB_CHECK_T(IndexError, p[i] >= lo && p[i] < hi, name, ": ", what, " holds ", p[i],
                ", outside [", lo, ", ", hi, ")");
  return r;
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx,
                 bool scale_grad_by_freq, bool sparse) {
  (void)padding_idx, (void)scale_grad_by_freq, (void)sparse;  // they shape the gradient only
  check_weight(weight, "embedding");
  Tensor idx = checked_indices(indices, weight->size(0), "embedding");
  DimVector shape(indices->sizes());
  shape.push_back(weight->size(1));
  Tensor out = empty(shape, weight->dtype(), weight->device());
  if (out->numel() != 0) kernel<kernels::embedding>(weight->device())(out, contiguous(weight), idx);
  return out;
}

Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices,
                                int64_t num_weights, int64_t padding_idx, bool scale_grad_by_freq) {
  const char* name = "embedding_dense_backward";
  FLB_CHECK(is_floating(grad_output->dtype()), name, ": expected a floating point grad_output, ",
            "got ", dtype_name(grad_output->dtype()));
  Tensor idx = checked_indices(indices, num_weights, name);
  FLB_CHECK(grad_output->dim() >= 1 && grad_output->numel() == idx->numel() * grad_output->size(-1),
            name, ": grad_output of shape ", shape_str(grad_output->sizes()),
            " does not match indices of shape ", shape_str(indices->sizes()));
  const int64_t d = grad_output->size(-1);
  Tensor gw = zeros({num_weights, d}, grad_output->dtype(), grad_output->device(), false);
  Tensor g = contiguous(grad_output);
  kernel<kernels::embedding_dense_backward>(g->device())(gw, g, idx, Tensor(), Tensor(), Tensor(),
                                                         Tensor(), 0, scale_grad_by_freq,
                                                         padding_idx < 0 ? -1 : padding_idx);
  return gw;
}

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(
    const Tensor& weight, const Tensor& indices, const Tensor& offsets, bool scale_grad_by_freq,
    int64_t mode, bool sparse, const Tensor& per_sample_weights, bool include_last_offset,
    std::optional<int64_t> padding_idx) {
  (void)scale_grad_by_freq, (void)sparse;
  const char* name = "embedding_bag";
  check_weight(weight, name);
  FLB_CHECK(is_floating(weight->dtype()), name, ": expected a floating point weight, got ",
            dtype_name(weight->dtype()));
  FLB_CHECK(mode >= 0 && mode <= 2, name, ": mode must be 0 (sum), 1 (mean) or 2 (max), got ",
            mode);
  FLB_CHECK(indices->dim() == 1, name, ": input has to be 1D (with offsets) but got shape ",
            shape_str(indices->sizes()));
  FLB_CHECK(offsets->dim() == 1, name, ": offsets has to be a 1D Tensor but got shape ",
            shape_str(offsets->sizes()));
  const int64_t rows = weight->size(0), m = indices->numel();
  Tensor idx = checked_indices(indices, rows, name);
  FLB_CHECK(offsets->dtype() == ScalarType::Int64 || offsets->dtype() == ScalarType::Int32, name,
            ": offsets must be an integer tensor, got ", dtype_name(offsets->dtype()));
  // The offsets are read here, and the bags' starts written, on the host.
  Tensor off = ops::cpu(contiguous(to_dtype(offsets, ScalarType::Int64)));
  const int64_t* po = off->data_as<const int64_t>();
  const int64_t n_off = off->numel();
  FLB_CHECK(!include_last_offset || n_off >= 1, name,
            ": include_last_offset needs at least one offset");
  const int64_t bags = include_last_offset ? n_off - 1 : n_off;
  FLB_CHECK(n_off == 0 || po[0] == 0, name, ": offsets[0] has to be 0, i.e., the first sequence ",
            "in the mini-batch has to start from position 0. However, got ", po[0]);
  Tensor starts = empty({bags + 1}, ScalarType::Int64);
  int64_t* ps = starts->data_as<int64_t>();
  for (int64_t b = 0; b < bags; ++b) {
    const int64_t hi = b + 1 < n_off ? po[b + 1] : m;
    FLB_CHECK(po[b] <= hi && hi <= m, name, ": offsets must be non-decreasing and at most ",
              "the number of indices (", m, "), got offsets[", b, "] = ", po[b], " and next ", hi);
    ps[b] = po[b];
  }
  ps[bags] = include_last_offset && n_off > 0 ? std::min(po[n_off - 1], m) : m;
  starts = copy_to(starts, weight->device());
  Tensor psw;
  if (per_sample_weights) {
    FLB_CHECK(mode == 0, name, ": per_sample_weights was not None. per_sample_weights is only ",
              "supported for mode='sum' (got mode=", mode == 1 ? "'mean'" : "'max'",
              "). Please open a feature request on GitHub.");
    FLB_CHECK(per_sample_weights->sizes() == indices->sizes(), name,
              ": expected per_sample_weights of shape ", shape_str(indices->sizes()), ", got ",
              shape_str(per_sample_weights->sizes()));
    psw = contiguous(to_dtype(per_sample_weights, weight->dtype()));
  }
  const int64_t pad = padding_idx ? wrap_padding(*padding_idx, rows, name) : -1;
  const int64_t d = weight->size(1);
  Tensor out = empty({bags, d}, weight->dtype(), weight->device());
  Tensor offset2bag = zeros({m}, ScalarType::Int64, weight->device(), false);
  Tensor bag_size = empty({bags}, ScalarType::Int64, weight->device());
  Tensor max_indices = mode == 2 ? empty({bags, d}, ScalarType::Int64, weight->device())
                                 : zeros({bags}, ScalarType::Int64, weight->device(), false);
  kernel<kernels::embedding_bag>(weight->device())(out, offset2bag, bag_size, max_indices,
                                                   contiguous(weight), idx, starts, mode, psw, pad);
  return {out, offset2bag, bag_size, max_indices};
}

Tensor _embedding_bag_backward(const Tensor& grad, const Tensor& indices, const Tensor& offsets,
                               const Tensor& offset2bag, const Tensor& bag_size,
                               const Tensor& maximum_indices, int64_t num_weights,
                               bool scale_grad_by_freq, int64_t mode, bool sparse,
                               const Tensor& per_sample_weights, int64_t padding_idx) {
  (void)offsets;
  const char* name = "_embedding_bag_backward";
  FLB_CHECK(!sparse, name, ": sparse gradients are not supported");
  FLB_CHECK(grad->dim() == 2, name, ": grad must be 2-D, got shape ", shape_str(grad->sizes()));
  FLB_CHECK(is_floating(grad->dtype()), name, ": expected a floating point grad, got ",
            dtype_name(grad->dtype()));
  FLB_CHECK(mode >= 0 && mode <= 2, name, ": mode must be 0 (sum), 1 (mean) or 2 (max), got ",
            mode);
  FLB_CHECK(num_weights >= 0, name, ": num_weights must be non-negative, got ", num_weights);
  FLB_CHECK(indices->dim() == 1, name, ": indices must be 1-D, got shape ",
            shape_str(indices->sizes()));
  Tensor idx = checked_indices(indices, num_weights, name);
  const int64_t bags = grad->size(0), m = idx->numel();
  // The kernel indexes grad rows by offset2bag, divides by bag_size and scatters
  // to the rows named by maximum_indices: each is checked against its range.
  Tensor o2b = checked_bag_tensor(offset2bag, "offset2bag", {m}, 0, bags, name);
  Tensor bsz = checked_bag_tensor(bag_size, "bag_size", {bags}, 0, INT64_MAX, name);
  Tensor mi = mode == 2 ? checked_bag_tensor(maximum_indices, "maximum_indices",
                                             {bags, grad->size(1)}, -1, num_weights, name)
                        : Tensor();
  Tensor psw;
  if (per_sample_weights) {
    FLB_CHECK(per_sample_weights->sizes() == indices->sizes(), name,
              ": expected per_sample_weights of shape ", shape_str(indices->sizes()), ", got ",
              shape_str(per_sample_weights->sizes()));
    psw = contiguous(to_dtype(per_sample_weights, grad->dtype()));
  }
  const int64_t pad = padding_idx < 0 ? -1 : padding_idx;
  Tensor gw = zeros({num_weights, grad->size(1)}, grad->dtype(), grad->device(), false);
  kernel<kernels::embedding_dense_backward>(grad->device())(gw, contiguous(grad), idx, o2b, bsz, mi,
                                                            psw, mode, scale_grad_by_freq, pad);
  return gw;
}

}  // namespace flambeau::ops
