// Shared frontend of reductions: dim handling, keepdim, output allocation.
#pragma once
#include <optional>

#include "ops/common.h"

namespace flambeau {

struct ReduceShape {
  DimVector dims;        // sorted, unique, wrapped
  DimVector keep_shape;  // input shape with reduced dims as 1
  DimVector out_shape;   // keep_shape, or with reduced dims dropped
};

// dim None or () reduces over every dim.
ReduceShape reduce_shape(const Tensor& in, const std::optional<DimVector>& dim, bool keepdim,
                         const char* op);

// Runs the kernel registered for `op` on (out viewed with keepdim, in, dims, args).
Tensor reduce(const OperatorEntry& op, const char* name, const Tensor& in,
              const std::optional<DimVector>& dim, bool keepdim, ScalarType out_dtype,
              std::initializer_list<Scalar> args, const OutArg& out = OutArg::none());

}  // namespace flambeau
