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

// Contiguous `t` (of r.out_shape) viewed with the reduced dims kept as 1.
Tensor keep_view(const Tensor& t, const ReduceShape& r);

// PyTorch's name of a dtype in messages: "Long", "Float", ... (core/dtype.cpp's table).
const char* torch_type_name(ScalarType t);

// Max/min-style reductions have no identity: an empty reduced dim is an
// IndexError, reducing every dim of an empty tensor a RuntimeError.
void check_nonempty(const Tensor& in, const ReduceShape& r, bool all_dims, const char* op);

// Integral and bool inputs of sum/prod/cumsum accumulate in int64.
inline ScalarType sum_type(ScalarType in, std::optional<ScalarType> dtype) {
  return dtype.value_or(is_integral(in, true) ? ScalarType::Int64 : in);
}

// Kernel signatures of the reductions with more than one output.
// values (may be null) and indices have `in`'s shape with dim kept as 1.
// ArgReduceKernel: declared in kernels/table.yaml.
// var_out (real type) and mean_out (may be null) with the reduced dims kept as 1.
// VarKernel: declared in kernels/table.yaml.
// out has in's shape and dtype; dim wrapped; in->dim() > 0.
// ScanKernel: declared in kernels/table.yaml.

// Runs the kernel registered for `op` on (out viewed with keepdim, in, dims, args).
Tensor reduce(const KernelHandle<ReduceKernel>& op, const char* name, const Tensor& in,
              const std::optional<DimVector>& dim, bool keepdim, ScalarType out_dtype,
              std::initializer_list<Scalar> args, const OutArg& out = OutArg::none());

}  // namespace flambeau
