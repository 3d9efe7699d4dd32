// Shape arithmetic shared by view-producing operators.
#pragma once
#include <optional>

#include "core/tensor.h"

namespace flambeau {

// Replaces a -1 in shape by what numel implies; RuntimeError naming op otherwise.
DimVector infer_size(IntList shape, int64_t numel, const char* op);
// Strides that view (sizes, strides) as new_sizes without copying, if any.
std::optional<DimVector> view_strides(IntList sizes, IntList strides, IntList new_sizes);
// A view of t along dim with Python slice semantics: start/end wrap when
// negative and are clamped to [0, size]; step must be positive.
Tensor slice_view(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step);
// t viewed with sizes/strides (same storage and offset as t).
Tensor restride(const Tensor& t, IntList sizes, IntList strides);
// Dims wrapped into [0, ndim), with a RuntimeError naming op on repeats.
DimVector wrap_dims(IntList dims, int64_t ndim, const char* op);

}  // namespace flambeau
