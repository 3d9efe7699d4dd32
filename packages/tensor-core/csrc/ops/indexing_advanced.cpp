// Frontends of advanced indexing: index (input[indices]), index_put, nonzero,
// argwhere. A list of index tensors (None: keep the dim whole; bool masks stand
// for their nonzero() columns) becomes one int64 index over the broadcast
// index shape and a restrided view of the input (NumPy's placement: the index
// dims replace the indexed dims in place when those are adjacent, else go first).
#include <string>

#include "generated/kernels.h"
#include "generated/ops_indexing.h"
#include "generated/ops_tensor.h"
#include "ops/indexing_util.h"
#include "plugin/foreign_call.h"

namespace flambeau::ops {

namespace {

std::string list_str(IntList s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// `t` (the indexed tensor, possibly with unit dims inserted for 0-dim masks)
// seen through the indices: result shape, the restrided view of t and the
// int64 index over the result shape.
struct Plan {
  Tensor base;  // t, or a view of it with inserted unit dims
  DimVector sizes;
  Tensor view;   // base restrided to `sizes` (stride 0 along the index dims)
  Tensor index;  // int64 with `sizes` (stride 0 along the kept dims)
  IndexSpec spec;
};

Plan plan(const Tensor& t, const std::vector<Tensor>& indices, const char* op) {
  Tensor base = t;
  DimVector bsizes(t->sizes()), bstrides(t->strides());
  std::vector<Tensor> idx(t->dim());  // per dim of base; null keeps it whole
  size_t p = 0;
  auto too_many = [&](size_t need) {
    FLB_CHECK_T(IndexError, need <= bsizes.size(), "too many indices for tensor of dimension ",
                t->dim(), " (got ", indices.size(), ")");
  };
  for (const Tensor& i : indices) {
    if (!i) {
      too_many(p + 1);
      ++p;
      continue;
    }
    ScalarType dt = i->dtype();
    if (dt == ScalarType::Bool || dt == ScalarType::UInt8) {
      Tensor mask = to_dtype(i, ScalarType::Bool);
      if (mask->dim() == 0) {  // adds a unit dim, selected (True) or not (False)
        bsizes.insert(p, 1);
        bstrides.insert(p, 1);
        bool on = *ops::cpu(mask)->data_as<bool>();
        Tensor one =
            ops::zeros(DimVector{static_cast<int64_t>(on)}, ScalarType::Int64, t->device(), false);
        idx.insert(idx.begin() + static_cast<std::ptrdiff_t>(p), one);
        ++p;
        continue;
      }
      size_t k = static_cast<size_t>(mask->dim());
      too_many(p + k);
      for (size_t j = 0; j < k; ++j) {
        FLB_CHECK_T(IndexError, mask->sizes()[j] == bsizes[p + j], "The shape of the mask ",
                    list_str(mask->sizes()), " at index ", j,
                    " does not match the shape of the indexed tensor ", list_str(bsizes),
                    " at index ", p + j);
      }
      Tensor nz = copy_to(ops::nonzero(mask, OutArg::none()), t->device());  // (n, k)
      for (size_t j = 0; j < k; ++j) {
        idx[p + j] = make_view(nz, DimVector{nz->sizes()[0]}, DimVector{static_cast<int64_t>(k)},
                               nz->offset() + j);
      }
      p += k;
    } else if (dt == ScalarType::Int64 || dt == ScalarType::Int32) {
      too_many(p + 1);
      // (CPU indices of a device tensor are moved there, as PyTorch allows)
      idx[p] = copy_to(to_dtype(i, ScalarType::Int64), t->device());
      ++p;
    } else {
      fail<IndexError>("tensors used as indices must be long, int, byte or bool tensors (got ",
                       dtype_name(dt), ")");
    }
  }
  if (bsizes.size() != static_cast<size_t>(t->dim()))
    base = make_view(t, bsizes, bstrides, t->offset());

  // Broadcast the index tensors together.
  std::vector<int64_t> dims;
  DimVector shape;
  bool ok = true;
  for (size_t d = 0; d < idx.size(); ++d) {
    if (!idx[d]) continue;
    IntList s = idx[d]->sizes();
    if (dims.empty()) {
      shape = DimVector(s);
    } else {
      size_t n = std::max(shape.size(), s.size());
      DimVector r(n, 1);
      for (size_t j = 0; j < n; ++j) {
        int64_t a = j + shape.size() >= n ? shape[j + shape.size() - n] : 1;
        int64_t b = j + s.size() >= n ? s[j + s.size() - n] : 1;
        if (a != b && a != 1 && b != 1) ok = false;
        r[j] = a == 1 ? b : a;
      }
      shape = r;
    }
    dims.push_back(static_cast<int64_t>(d));
  }
  if (!ok) {
    std::string shapes;
    for (int64_t d : dims) shapes += (shapes.empty() ? "" : ", ") + list_str(idx[d]->sizes());
    fail<IndexError>(
        "shape mismatch: indexing tensors could not be broadcast together with "
        "shapes ",
        shapes);
  }

  Plan r;
  r.base = base;
  Tensor index;
  if (dims.empty()) {  // nothing indexed: a plain copy
    index = ops::zeros(DimVector{}, ScalarType::Int64, t->device(), false);
    r.spec = IndexSpec{0, -1, 0, false, op};
  } else if (dims.size() == 1) {
    index = expand_to(idx[dims[0]], shape, op);
    r.spec = IndexSpec{bstrides[dims[0]], bsizes[dims[0]], dims[0], true, op};
  } else {
    index = ops::zeros(shape, ScalarType::Int64, t->device(), false);
    for (int64_t d : dims) {
      kernel<kernels::_index_offsets>(t->device())(index, expand_to(idx[d], shape, op),
                                                   IndexSpec{bstrides[d], bsizes[d], d, true, op});
    }
    r.spec = IndexSpec{1, -1, 0, false, op};
  }
  const bool adjacent =
      !dims.empty() && dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size());
  DimVector vstrides, istrides;
  auto keep = [&](size_t d) {
    r.sizes.push_back(bsizes[d]);
    vstrides.push_back(bstrides[d]);
    istrides.push_back(0);
  };
  auto put_index_dims = [&]() {
    for (size_t j = 0; j < shape.size(); ++j) {
      r.sizes.push_back(shape[j]);
      vstrides.push_back(0);
      istrides.push_back(index->dim() == 0 ? 0 : index->strides()[j]);
    }
  };
  if (adjacent) {
    for (int64_t d = 0; d < dims.front(); ++d) keep(d);
    put_index_dims();
    for (size_t d = dims.back() + 1; d < bsizes.size(); ++d) keep(d);
  } else {
    put_index_dims();
    for (size_t d = 0; d < bsizes.size(); ++d)
      if (!idx[d]) keep(d);
  }
  r.view = make_view(base, r.sizes, vstrides, base->offset());
  r.index = make_view(index, r.sizes, istrides, index->offset());
  return r;
}

}  // namespace

Tensor index(const Tensor& input, const std::vector<Tensor>& indices) {
  if (indices.size() == 1 && indices[0] && indices[0]->dtype() == ScalarType::Bool &&
      indices[0]->dim() > 0 && indices[0]->sizes() == input->sizes())
    return masked_select(input, indices[0], OutArg::none());  // x[mask]: one pass, no nonzero()
  Plan pl = plan(input, indices, "index");
  Tensor out = flambeau::empty(pl.sizes, input->dtype(), input->device());
  if (out->numel() > 0) kernel<kernels::index>(input->device())(out, pl.view, pl.index, pl.spec);
  return out;
}

Tensor index_put(const Tensor& input, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate, const OutArg& out) {
  FLB_CHECK(values->dtype() == input->dtype() || values->is_wrapped_number(),
            "index_put(): Index put requires the source and destination dtypes match, got ",
            dtype_name(input->dtype()), " for the destination and ", dtype_name(values->dtype()),
            " for the source.");
  Tensor target = indexing::target_for(input, out, "index_put");
  Plan pl = plan(target, indices, "index_put");
  Tensor v = to_dtype(values, input->dtype());
  bool fits = v->dim() <= static_cast<int64_t>(pl.sizes.size());
  for (int64_t j = 0; fits && j < v->dim(); ++j) {
    int64_t s = v->sizes()[v->dim() - 1 - j];
    fits = s == 1 || s == pl.sizes[pl.sizes.size() - 1 - j];
  }
  FLB_CHECK(fits, "shape mismatch: value tensor of shape ", list_str(v->sizes()),
            " cannot be broadcast to indexing result of shape ", list_str(pl.sizes));
  v = expand_to(v, pl.sizes, "index_put");
  if (numel_of(pl.sizes) > 0) {
    kernel<kernels::index_put>(input->device())(pl.view, v, pl.index, pl.spec,
                                                accumulate ? PutMode::Add : PutMode::Assign);
  }
  return target;
}

Tensor nonzero(const Tensor& input, const OutArg& out) {
  // Counted first, so that the result is allocated on the input's device (as in
  // masked_select).
  Tensor in = ops::contiguous(input);
  const Device device = input->device();
  const int64_t n = kernel<kernels::_nonzero_count>(device)(in);
  Tensor r = flambeau::empty(DimVector{n, in->dim()}, ScalarType::Int64, device);
  if (r->numel() > 0) kernel<kernels::nonzero>(device)(r, in);
  return indexing::finish(r, out, "nonzero");
}

std::vector<Tensor> nonzero_tuple(const Tensor& input, bool as_tuple) {
  Tensor nz = nonzero(input, OutArg::none());
  if (!as_tuple) return {nz};
  const int64_t n = nz->sizes()[0], k = nz->sizes()[1];
  if (k == 0)  // 0-dim input: one column, [0] when it is non-zero
    return {ops::zeros(DimVector{n}, ScalarType::Int64, std::nullopt, false)};
  std::vector<Tensor> cols;
  for (int64_t j = 0; j < k; ++j)
    cols.push_back(ops::contiguous(make_view(nz, DimVector{n}, DimVector{k}, nz->offset() + j)));
  return cols;
}

Tensor argwhere(const Tensor& input) { return nonzero(input, OutArg::none()); }

}  // namespace flambeau::ops
