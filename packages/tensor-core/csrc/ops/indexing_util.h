// Shared pieces of the indexing operators (ops/indexing.yaml): the kernel
// signatures the CPU backend registers, and frontend helpers.
//
// Every gather-like operator is one kernel: out[i] = src[i + index[i] * stride]
// over views where `src` has stride 0 along the indexed dim. Every scatter-like
// operator is its mirror, dst[i + index[i] * stride] (op)= values[i], run
// serially so duplicates combine in a fixed order (deterministic results).
#pragma once
#include "ops/common.h"

namespace flambeau {

// How the kernels read and check an int64 index tensor.
struct IndexSpec {
  int64_t stride = 1;           // element stride of the indexed dim
  int64_t size = -1;            // its size; < 0: the index holds already checked offsets
  int64_t dim = 0;              // for error messages
  bool allow_negative = false;  // -size <= i < 0 counts from the end
  const char* op = "";
};

enum class PutMode : int { Assign, Add, Multiply, Max, Min };

// out, src, index share one shape (src/index are stride-0 views where needed).
using IndexGatherKernel = void(const Tensor& out, const Tensor& src, const Tensor& index,
                               const IndexSpec& spec);
// dst, values, index share one shape; serial in a fixed order.
using IndexPutKernel = void(const Tensor& dst, const Tensor& values, const Tensor& index,
                            const IndexSpec& spec, PutMode mode);
// acc (int64) += checked(index) * spec.stride; same shapes.
using IndexOffsetsKernel = void(const Tensor& acc, const Tensor& index, const IndexSpec& spec);
// input and mask (bool) contiguous with one shape: the selected entries, 1-d.
using MaskedSelectKernel = Tensor(const Tensor& input, const Tensor& mask);
// input contiguous: the (n, dim) int64 indices of non-zero entries.
using NonzeroKernel = Tensor(const Tensor& input);
// dst and mask (bool) share one shape.
using MaskedFillKernel = void(const Tensor& dst, const Tensor& mask, const Scalar& value);
// dst and mask share one shape; source is contiguous 1-d of dst's dtype.
using MaskedScatterKernel = void(const Tensor& dst, const Tensor& mask, const Tensor& source);

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
