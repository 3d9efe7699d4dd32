// Shared pieces of the indexing operators (ops/indexing.yaml): the kernel
// signatures the CPU backend registers, and frontend helpers.
//
// Every gather-like operator is one kernel: out[i] = src[i + index[i] * stride]
// over views where `src` has stride 0 along the indexed dim. Every scatter-like
// operator is its mirror, dst[i + index[i] * stride] (op)= values[i], run
// serially so duplicates combine in a fixed order (deterministic results).
#pragma once
#include "ops/common.h"
#include "ops/index_spec.h"

namespace flambeau {

// out, src, index share one shape (src/index are stride-0 views where needed).
// IndexGatherKernel: declared in kernels/table.yaml.
// dst, values, index share one shape; serial in a fixed order.
// IndexPutKernel: declared in kernels/table.yaml.
// acc (int64) += checked(index) * spec.stride; same shapes.
// IndexOffsetsKernel: declared in kernels/table.yaml.
// input and mask (bool) contiguous with one shape: the selected entries, 1-d.
// MaskedSelectKernel: declared in kernels/table.yaml.
// input contiguous: the (n, dim) int64 indices of non-zero entries.
// NonzeroKernel: declared in kernels/table.yaml.
// dst and mask (bool) share one shape.
// MaskedFillKernel: declared in kernels/table.yaml.
// dst and mask share one shape; source is contiguous 1-d of dst's dtype.
// MaskedScatterKernel: declared in kernels/table.yaml.

[[noreturn]] void fail_index_bounds(int64_t index, int64_t dim, int64_t size);

namespace indexing {

// The tensor a scatter-like operator writes into: self (in place), or a copy of
// input (out-of-place and out=).
Tensor target_for(const Tensor& input, const OutArg& out, const char* op);
// The operator's return value: `result` itself, or out= filled from it.
Tensor finish(const Tensor& result, const OutArg& out, const char* op);
// int64 index (int32 accepted when `allow_int32`); a RuntimeError naming op otherwise.
Tensor long_index(const Tensor& index, const char* op, bool allow_int32);
// A 0-dim tensor as a 1-d one of size 1 (dim-wise operators treat them alike).
Tensor as_1d(const Tensor& t);
// The value of a number or a 0-dim tensor argument.
Scalar scalar_value(const Tensor& value, const char* op);
// A view of t with `sizes` and t's strides except stride 0 along `dim`.
Tensor along_dim_view(const Tensor& t, IntList sizes, int64_t dim);
// A view of the 1-d index laid along `dim` of `sizes` (stride 0 elsewhere).
Tensor index_along(const Tensor& index, IntList sizes, int64_t dim);

}  // namespace indexing
}  // namespace flambeau
