// Shape arithmetic shared by view-producing operators.
#pragma once
#include <optional>

#include "core/tensor.h"

namespace flambeau {

// Replaces a -1 in shape by what numel implies; RuntimeError naming op otherwise.
DimVector infer_size(IntList shape, int64_t numel, const char* op);
// Strides that view (sizes, strides) as new_sizes without copying, if any.
std::optional<DimVector> view_strides(IntList sizes, IntList strides, IntList new_sizes);

}  // namespace flambeau
