// Frontends of unique-element operators: _unique2 (behind flambeau.unique),
// unique_dim, unique_consecutive. The kernel finds unique rows of a 2-D
// tensor: single elements are rows of one, slices along dim longer rows.
#include "generated/kernels.h"
#include "generated/ops_shape.h"
#include "generated/ops_sorting.h"
#include "generated/ops_tensor.h"
#include "ops/sorting_kernels.h"

namespace flambeau::ops {

namespace {

using Unique3 = std::tuple<Tensor, Tensor, Tensor>;

Tensor none_like(const Tensor& input) {
  return empty(DimVector{0}, ScalarType::Int64, input->device());
}

// Unique elements of the flattened input.
Unique3 unique_elements(const Tensor& input, bool sort, bool inverse, bool counts,
                        const char* name) {
  check_sortable(input, name);
  Tensor flat = ops::reshape(ops::contiguous(input), DimVector{input->numel(), 1});
  auto [out, inv, cnt] = kernel<kernels::_unique2>(input->device())(flat, sort, inverse);
  Tensor values = ops::reshape(out, DimVector{out->sizes()[0]});
  return {values, inverse ? ops::reshape(inv, input->sizes()) : none_like(input),
          counts ? cnt : none_like(input)};
}

// Unique slices of input along dim.
Unique3 unique_slices(const Tensor& input, int64_t dim, bool sort, bool inverse, bool counts,
                      const char* name) {
  check_sortable(input, name);
  FLB_CHECK_T(IndexError, input->dim() > 0, name, "(): input must have at least one dim");
  const int64_t d = wrap_dim(dim, input->dim(), name);
  const int64_t n = input->sizes()[d];
  int64_t m = 1;
  DimVector rest;
  for (int64_t i = 0; i < input->dim(); ++i) {
    if (i == d) continue;
    m *= input->sizes()[i];
    rest.push_back(input->sizes()[i]);
  }
  Tensor moved = ops::contiguous(ops::movedim(input, DimVector{d}, DimVector{0}));
  Tensor rows = ops::reshape(moved, DimVector{n, m});
  auto [out, inv, cnt] = kernel<kernels::_unique2>(input->device())(rows, sort, inverse);
  DimVector shape{out->sizes()[0]};
  for (int64_t s : rest) shape.push_back(s);
  Tensor values =
      ops::contiguous(ops::movedim(ops::reshape(out, shape), DimVector{0}, DimVector{d}));
  return {values, inverse ? inv : none_like(input), counts ? cnt : none_like(input)};
}

}  // namespace

Unique3 _unique2(const Tensor& input, bool sorted, bool return_inverse, bool return_counts) {
  (void)sorted;  // results are always sorted (PyTorch leaves the order unspecified otherwise)
  return unique_elements(input, true, return_inverse, return_counts, "unique");
}

Unique3 unique_dim(const Tensor& input, int64_t dim, bool sorted, bool return_inverse,
                   bool return_counts) {
  (void)sorted;
  return unique_slices(input, dim, true, return_inverse, return_counts, "unique");
}

Unique3 unique_consecutive(const Tensor& input, bool return_inverse, bool return_counts,
                           std::optional<int64_t> dim) {
  if (!dim) {
    return unique_elements(input, false, return_inverse, return_counts, "unique_consecutive");
  }
  return unique_slices(input, *dim, false, return_inverse, return_counts, "unique_consecutive");
}

}  // namespace flambeau::ops
