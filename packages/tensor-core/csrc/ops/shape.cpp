// View and reshape operators. Views share the storage of their base.
#include <algorithm>
#include <optional>
#include <vector>

#include "generated/ops.h"
#include "ops/shape_util.h"

namespace flambeau {

DimVector infer_size(IntList shape, int64_t numel, const char* op) {
  DimVector out(shape);
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      FLB_CHECK(infer < 0, op, ": only one dimension can be inferred");
      infer = static_cast<int64_t>(i);
    } else {
      FLB_CHECK(shape[i] >= 0, op, ": invalid shape dimension ", shape[i]);
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    FLB_CHECK(known != 0 && numel % known == 0, op, ": shape '", shape_str(shape),
              "' is invalid for input of size ", numel);
    out[infer] = numel / known;
  } else {
    FLB_CHECK(known == numel, op, ": shape '", shape_str(shape), "' is invalid for input of size ",
              numel);
  }
  return out;
}

// Strides giving `new_sizes` over the same memory as (sizes, strides), or
// nullopt when no such strides exist (PyTorch's computeStride).
std::optional<DimVector> view_strides(IntList sizes, IntList strides, IntList new_sizes) {
  DimVector out(new_sizes.size());
  if (sizes.empty()) {
    for (auto& s : out) s = 1;
    return out;
  }
  if (numel_of(sizes) == 0) {
    if (sizes == new_sizes) return DimVector(strides);
    return contiguous_strides(new_sizes);
  }
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

Tensor restride(const Tensor& t, IntList sizes, IntList strides) {
  return make_view(t, sizes, strides, t->offset());
}

Tensor slice_view(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step) {
  int64_t size = t->sizes()[dim];
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::min(std::max<int64_t>(start, 0), size);
  end = std::min(std::max(end, start), size);
  DimVector sizes(t->sizes()), strides(t->strides());
  sizes[dim] = (end - start + step - 1) / step;
  strides[dim] *= step;
  return make_view(t, sizes, strides, t->offset() + start * t->strides()[dim]);
}

DimVector wrap_dims(IntList dims, int64_t ndim, const char* op) {
  DimVector out(dims.size());
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(ndim, 1)), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    out[i] = wrap_dim(dims[i], ndim, op);
    FLB_CHECK(!seen[out[i]], op, ": dim ", out[i], " appears multiple times in the list of dims");
    seen[out[i]] = true;
  }
  return out;
}

namespace ops {

Tensor view(const Tensor& self, IntList size) {
  DimVector shape = infer_size(size, self->numel(), "view");
  auto strides = view_strides(self->sizes(), self->strides(), shape);
  FLB_CHECK(strides.has_value(), "view: view size ", shape_str(shape),
            " is not compatible with input tensor's size ", shape_str(self->sizes()),
            " and stride ", shape_str(self->strides()),
            " (at least one dimension spans across two contiguous subspaces); use "
            ".reshape(...) instead");
  return make_view(self, shape, *strides, self->offset());
}

// The same bytes read as another dtype. With a different element size the last
// dimension (which must be contiguous) absorbs the ratio, as in PyTorch.
Tensor view_dtype(const Tensor& self, ScalarType dtype) {
  const int64_t from = self->itemsize(), to = static_cast<int64_t>(itemsize(dtype));
  if (from == to)
    return make_ref<TensorImpl>(self->storage(), self->sizes(), self->strides(), self->offset(),
                                dtype);
  const char* src = dtype_name(self->dtype());
  const char* dst = dtype_name(dtype);
  FLB_CHECK(self->dim() > 0, "view: self.dim() cannot be 0 to view ", src, " as ", dst,
            " (different element sizes)");
  const int64_t last = self->dim() - 1;
  FLB_CHECK(self->strides()[last] == 1 || self->numel() == 0,
            "view: self.stride(-1) must be 1 to view ", src, " as ", dst,
            " (different element sizes), but got ", self->strides()[last]);
  DimVector sizes(self->sizes());
  DimVector strides(self->strides());
  int64_t offset = self->offset();
  if (to > from) {
    const int64_t ratio = to / from;
    FLB_CHECK(sizes[last] % ratio == 0, "view: self.size(-1) must be divisible by ", ratio,
              " to view ", src, " as ", dst, " (different element sizes), but got ", sizes[last]);
    FLB_CHECK(offset % ratio == 0, "view: self.storage_offset() must be divisible by ", ratio,
              " to view ", src, " as ", dst, " (different element sizes), but got ", offset);
    for (int64_t d = 0; d < last; ++d)
      FLB_CHECK(strides[d] % ratio == 0, "view: self.stride(", d, ") must be divisible by ", ratio,
                " to view ", src, " as ", dst, " (different element sizes), but got ", strides[d]);
    sizes[last] /= ratio;
    for (int64_t d = 0; d < last; ++d) strides[d] /= ratio;
    offset /= ratio;
  } else {
    const int64_t ratio = from / to;
    sizes[last] *= ratio;
    for (int64_t d = 0; d < last; ++d) strides[d] *= ratio;
    offset *= ratio;
  }
  return make_ref<TensorImpl>(self->storage(), sizes, strides, offset, dtype);
}

Tensor reshape(const Tensor& input, IntList shape) {
  DimVector sizes = infer_size(shape, input->numel(), "reshape");
  if (auto strides = view_strides(input->sizes(), input->strides(), sizes))
    return make_view(input, sizes, *strides, input->offset());
  return view(contiguous_copy(input), sizes);
}

Tensor view_as(const Tensor& self, const Tensor& other) { return view(self, other->sizes()); }

Tensor reshape_as(const Tensor& self, const Tensor& other) { return reshape(self, other->sizes()); }

Tensor flatten(const Tensor& input, int64_t start_dim, int64_t end_dim) {
  int64_t start = wrap_dim(start_dim, input->dim(), "flatten");
  int64_t end = wrap_dim(end_dim, input->dim(), "flatten");
  FLB_CHECK(start <= end, "flatten() has invalid args: start_dim cannot come after end_dim");
  if (input->dim() == 0) return reshape(input, {1});
  if (start == end) return input;
  DimVector shape;
  for (int64_t d = 0; d < start; ++d) shape.push_back(input->sizes()[d]);
  int64_t merged = 1;
  for (int64_t d = start; d <= end; ++d) merged *= input->sizes()[d];
  shape.push_back(merged);
  for (int64_t d = end + 1; d < input->dim(); ++d) shape.push_back(input->sizes()[d]);
  return reshape(input, shape);
}

Tensor unflatten(const Tensor& input, int64_t dim, IntList sizes) {
  int64_t d = wrap_dim(dim, input->dim(), "unflatten");
  FLB_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  int64_t size = input->dim() == 0 ? 1 : input->sizes()[d];
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      FLB_CHECK(infer < 0, "unflatten: only one dimension can be inferred");
      infer = static_cast<int64_t>(i);
    } else {
      FLB_CHECK(sizes[i] >= 0, "unflatten: invalid size ", sizes[i], " in ", shape_str(sizes));
      known *= sizes[i];
    }
  }
  DimVector expanded(sizes);
  if (infer >= 0 && known != 0 && size % known == 0) expanded[infer] = size / known;
  FLB_CHECK(numel_of(expanded) == size && (infer < 0 || known != 0), "unflatten: Provided sizes ",
            shape_str(sizes), " don't multiply up to the size of dim ", dim, " (", size,
            ") in the input tensor");
  DimVector shape;
  for (int64_t i = 0; i < input->dim(); ++i) {
    if (i == d) {
      for (int64_t s : expanded) shape.push_back(s);
    } else {
      shape.push_back(input->sizes()[i]);
    }
  }
  if (input->dim() == 0) shape = expanded;
  return view(input, shape);
}

Tensor ravel(const Tensor& input) { return reshape(input, {-1}); }

Tensor squeeze(const Tensor& input, const std::optional<DimVector>& dim) {
  std::vector<bool> drop(static_cast<size_t>(input->dim()), false);
  if (dim) {
    DimVector dims = wrap_dims(*dim, input->dim(), "squeeze");
    for (int64_t d : dims)
      if (input->dim() > 0 && input->sizes()[d] == 1) drop[d] = true;
  } else {
    for (int64_t d = 0; d < input->dim(); ++d) drop[d] = input->sizes()[d] == 1;
  }
  DimVector sizes, strides;
  for (int64_t d = 0; d < input->dim(); ++d) {
    if (drop[d]) continue;
    sizes.push_back(input->sizes()[d]);
    strides.push_back(input->strides()[d]);
  }
  return restride(input, sizes, strides);
}

Tensor unsqueeze(const Tensor& input, int64_t dim) {
  int64_t d = wrap_dim(dim, input->dim() + 1, "unsqueeze");
  DimVector sizes(input->sizes()), strides(input->strides());
  int64_t stride = d >= input->dim() ? 1 : sizes[d] * strides[d];
  sizes.insert(d, 1);
  strides.insert(d, stride);
  return restride(input, sizes, strides);
}

Tensor transpose(const Tensor& input, int64_t dim0, int64_t dim1) {
  int64_t a = wrap_dim(dim0, input->dim(), "transpose");
  int64_t b = wrap_dim(dim1, input->dim(), "transpose");
  DimVector sizes(input->sizes()), strides(input->strides());
  if (input->dim() > 0) {
    std::swap(sizes[a], sizes[b]);
    std::swap(strides[a], strides[b]);
  }
  return restride(input, sizes, strides);
}

Tensor swapaxes(const Tensor& input, int64_t axis0, int64_t axis1) {
  return transpose(input, axis0, axis1);
}

Tensor swapdims(const Tensor& input, int64_t dim0, int64_t dim1) {
  return transpose(input, dim0, dim1);
}

Tensor t(const Tensor& input) {
  FLB_CHECK(input->dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ",
            input->dim(), "D");
  if (input->dim() < 2) return restride(input, input->sizes(), input->strides());
  return transpose(input, 0, 1);
}

Tensor permute(const Tensor& input, IntList dims) {
  FLB_CHECK(static_cast<int64_t>(dims.size()) == input->dim(),
            "permute(): number of dimensions in the tensor input does not match the length of "
            "the desired ordering of dimensions i.e. input.dim() = ",
            input->dim(), " is not equal to len(dims) = ", dims.size());
  DimVector order = wrap_dims(dims, input->dim(), "permute");
  DimVector sizes(dims.size()), strides(dims.size());
  for (size_t i = 0; i < order.size(); ++i) {
    sizes[i] = input->sizes()[order[i]];
    strides[i] = input->strides()[order[i]];
  }
  return restride(input, sizes, strides);
}

Tensor movedim(const Tensor& input, IntList source, IntList destination) {
  FLB_CHECK(source.size() == destination.size(),
            "movedim: Invalid source or destination dims: ", "source (", shape_str(source),
            " dims) should contain the same number of dims as ", "destination (",
            shape_str(destination), " dims)");
  int64_t n = input->dim();
  DimVector src = wrap_dims(source, n, "movedim");
  DimVector dst = wrap_dims(destination, n, "movedim");
  if (n == 0) return restride(input, input->sizes(), input->strides());
  DimVector order(static_cast<size_t>(n), -1);
  std::vector<bool> used(static_cast<size_t>(n), false);
  for (size_t i = 0; i < src.size(); ++i) {
    order[dst[i]] = src[i];
    used[src[i]] = true;
  }
  int64_t next = 0;
  for (int64_t& o : order) {
    if (o >= 0) continue;
    while (used[next]) ++next;
    o = next++;
  }
  return permute(input, order);
}

Tensor moveaxis(const Tensor& input, IntList source, IntList destination) {
  return movedim(input, source, destination);
}

Tensor expand(const Tensor& self, IntList size) {
  int64_t nd = static_cast<int64_t>(size.size()), td = self->dim();
  FLB_CHECK(nd >= td, "expand(", dtype_name(self->dtype()), " tensor of shape ",
            shape_str(self->sizes()), ", size=", shape_str(size),
            "): the number of sizes provided (", nd,
            ") must be greater or equal to the number of dimensions in the tensor (", td, ")");
  DimVector sizes(size), strides(static_cast<size_t>(nd), 0);
  for (int64_t d = nd - 1; d >= 0; --d) {
    int64_t k = d - (nd - td);  // the matching dim of self, if any
    if (k < 0) {
      FLB_CHECK(size[d] >= 0, "expand: the expanded size of the tensor (", size[d],
                ") isn't allowed in a leading, non-existing dimension ", d);
      continue;
    }
    int64_t have = self->sizes()[k];
    if (size[d] == -1) sizes[d] = have;
    FLB_CHECK(have == sizes[d] || have == 1, "expand: the expanded size of the tensor (", sizes[d],
              ") must match the existing size (", have, ") at non-singleton dimension ", d,
              ".  Target sizes: ", shape_str(size), ".  Tensor sizes: ", shape_str(self->sizes()));
    FLB_CHECK(sizes[d] >= 0, "expand: invalid size ", sizes[d], " in ", shape_str(size));
    strides[d] = have == sizes[d] ? self->strides()[k] : 0;
  }
  return restride(self, sizes, strides);
}

Tensor expand_as(const Tensor& self, const Tensor& other) { return expand(self, other->sizes()); }

Tensor narrow(const Tensor& input, int64_t dim, int64_t start, int64_t length) {
  FLB_CHECK(input->dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  int64_t d = wrap_dim(dim, input->dim(), "narrow");
  int64_t size = input->sizes()[d];
  FLB_CHECK(length >= 0, "narrow(): length must be non-negative.");
  FLB_CHECK_T(IndexError, start >= -size && start <= size,
              "start out of range (expected to be in range of [", -size, ", ", size, "], but got ",
              start, ")");
  if (start < 0) start += size;
  FLB_CHECK(start <= size - length, "start (", start, ") + length (", length,
            ") exceeds dimension size (", size, ").");
  DimVector sizes(input->sizes());
  sizes[d] = length;
  return make_view(input, sizes, input->strides(), input->offset() + start * input->strides()[d]);
}

Tensor select(const Tensor& input, int64_t dim, int64_t index) {
  FLB_CHECK_T(IndexError, input->dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  int64_t d = wrap_dim(dim, input->dim(), "select");
  int64_t size = input->sizes()[d];
  FLB_CHECK_T(IndexError, index >= -size && index < size, "select(): index ", index,
              " out of range for tensor of size ", shape_str(input->sizes()), " at dimension ", d);
  if (index < 0) index += size;
  DimVector sizes(input->sizes()), strides(input->strides());
  int64_t offset = input->offset() + index * strides[d];
  sizes.erase(d);
  strides.erase(d);
  return make_view(input, sizes, strides, offset);
}

Tensor diagonal(const Tensor& input, int64_t offset, int64_t dim1, int64_t dim2) {
  int64_t a = wrap_dim(dim1, input->dim(), "diagonal");
  int64_t b = wrap_dim(dim2, input->dim(), "diagonal");
  FLB_CHECK(a != b, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  FLB_CHECK(input->dim() >= 2, "diagonal: expected a tensor with at least 2 dims, got ",
            input->dim());
  int64_t sa = input->sizes()[a], sb = input->sizes()[b];
  int64_t n = offset >= 0 ? std::min(sa, sb - offset) : std::min(sa + offset, sb);
  n = std::max<int64_t>(n, 0);
  int64_t start = input->offset();
  if (n > 0) start += offset >= 0 ? offset * input->strides()[b] : -offset * input->strides()[a];
  DimVector sizes, strides;
  for (int64_t d = 0; d < input->dim(); ++d) {
    if (d == a || d == b) continue;
    sizes.push_back(input->sizes()[d]);
    strides.push_back(input->strides()[d]);
  }
  sizes.push_back(n);
  strides.push_back(input->strides()[a] + input->strides()[b]);
  return make_view(input, sizes, strides, start);
}

Tensor unfold(const Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  int64_t d = wrap_dim(dimension, self->dim(), "unfold");
  int64_t have = self->dim() == 0 ? 1 : self->sizes()[d];
  FLB_CHECK(size <= have, "maximum size for tensor at dimension ", d, " is ", have, " but size is ",
            size);
  FLB_CHECK(size >= 0, "unfold: size is ", size, " but must be >= 0");
  FLB_CHECK(step > 0, "step is ", step, " but must be > 0");
  if (self->dim() == 0) return restride(self, {size}, {1});
  DimVector sizes(self->sizes()), strides(self->strides());
  sizes[d] = (have - size) / step + 1;
  // One window: its stride is never used (and stride * step may not fit in int64).
  if (sizes[d] > 1) strides[d] *= step;
  sizes.push_back(size);
  strides.push_back(self->strides()[d]);
  return restride(self, sizes, strides);
}

Tensor as_strided(const Tensor& input, IntList size, IntList stride,
                  std::optional<int64_t> storage_offset) {
  for (int64_t s : stride)
    FLB_CHECK(s >= 0, "as_strided: Negative strides are not supported at the moment, got strides: ",
              shape_str(stride));
  int64_t offset = storage_offset.value_or(input->offset());
  // The bounds check sums (size - 1) * stride: refuse geometry whose extent overflows int64,
  // which could otherwise wrap around the check.
  int64_t extent = offset;
  for (size_t i = 0; i < size.size() && i < stride.size(); ++i) {
    int64_t span = 0;
    bool overflow = size[i] > 0 && (__builtin_mul_overflow(size[i] - 1, stride[i], &span) ||
                                    __builtin_add_overflow(extent, span, &extent));
    FLB_CHECK(!overflow, "as_strided: view of sizes ", shape_str(size), " and strides ",
              shape_str(stride), " is out of bounds for the storage (its extent overflows)");
  }
  check_view_bounds(input, size, stride, offset, "as_strided");
  return make_view(input, size, stride, offset);
}

}  // namespace ops
}  // namespace flambeau
