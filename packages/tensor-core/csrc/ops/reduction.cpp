// Frontends of sum-like reductions: sum, mean, prod, nansum, nanmean, all, any,
// count_nonzero, norm, logsumexp.
#include <cmath>

#include "generated/kernels.h"
#include "generated/ops.h"
#include "ops/reduce_util.h"

namespace flambeau::ops {

namespace {

// The float/complex type mean-like ops compute in, or the PyTorch error.
ScalarType mean_type(const char* op, ScalarType in, std::optional<ScalarType> dtype) {
  if (dtype) {
    FLB_CHECK(is_floating(*dtype) || is_complex(*dtype), op,
              "(): could not infer output dtype. Optional dtype must be either a floating "
              "point or complex dtype. Got: ",
              torch_type_name(*dtype));
    return *dtype;
  }
  FLB_CHECK(is_floating(in) || is_complex(in), op,
            "(): could not infer output dtype. Input dtype must be either a floating point or "
            "complex dtype. Got: ",
            torch_type_name(in));
  return in;
}

template <class K>
Tensor sum_family(const Tensor& input, const std::optional<DimVector>& dim, bool keepdim,
                  ScalarType t, const OutArg& out) {
  const char* name = K::name;
  // Refused before the conversion, which may be large (an expanded input materializes).
  if (!is_floating(t) && !is_complex(t) && !is_integral(t, true)) fail_dtype(name, t);
  const auto& op = handle<K>();
  return reduce(op, name, to_dtype(input, t), dim, keepdim, t, {}, out);
}

}  // namespace

Tensor sum(const Tensor& input, const std::optional<DimVector>& dim, bool keepdim,
           std::optional<ScalarType> dtype, const OutArg& out) {
  return sum_family<kernels::sum>(input, dim, keepdim, sum_type(input->dtype(), dtype), out);
}

Tensor nansum(const Tensor& input, const std::optional<DimVector>& dim, bool keepdim,
              std::optional<ScalarType> dtype, const OutArg& out) {
  FLB_CHECK(!is_complex(input->dtype()), "nansum(): does not support complex inputs");
  return sum_family<kernels::nansum>(input, dim, keepdim, sum_type(input->dtype(), dtype), out);
}

Tensor mean(const Tensor& input, const std::optional<DimVector>& dim, bool keepdim,
            std::optional<ScalarType> dtype, const OutArg& out) {
  return sum_family<kernels::mean>(input, dim, keepdim, mean_type("mean", input->dtype(), dtype),
                                   out);
}

Tensor nanmean(const Tensor& input, const std::optional<DimVector>& dim, bool keepdim,
               std::optional<ScalarType> dtype, const OutArg& out) {
  ScalarType t = mean_type("nanmean", input->dtype(), dtype);
  FLB_CHECK(!is_complex(t), "nanmean(): does not support complex inputs");
  return sum_family<kernels::nanmean>(input, dim, keepdim, t, out);
}

Tensor prod(const Tensor& input, std::optional<ScalarType> dtype) {
  return sum_family<kernels::prod>(input, std::nullopt, false, sum_type(input->dtype(), dtype),
                                   OutArg::none());
}

Tensor prod_dim_int(const Tensor& input, int64_t dim, bool keepdim, std::optional<ScalarType> dtype,
                    const OutArg& out) {
  return sum_family<kernels::prod>(input, DimVector{dim}, keepdim, sum_type(input->dtype(), dtype),
                                   out);
}

Tensor count_nonzero(const Tensor& input, const std::optional<DimVector>& dim) {
  return reduce(handle<kernels::count_nonzero>(), "count_nonzero", input, dim, false,
                ScalarType::Int64, {});
}

// all/any return bool, except uint8 for uint8 input.
Tensor all(const Tensor& input, const std::optional<DimVector>& dim, bool keepdim,
           const OutArg& out) {
  ScalarType t = input->dtype() == ScalarType::UInt8 ? ScalarType::UInt8 : ScalarType::Bool;
  return reduce(handle<kernels::all>(), "all", input, dim, keepdim, t, {}, out);
}

Tensor any(const Tensor& input, const std::optional<DimVector>& dim, bool keepdim,
           const OutArg& out) {
  ScalarType t = input->dtype() == ScalarType::UInt8 ? ScalarType::UInt8 : ScalarType::Bool;
  return reduce(handle<kernels::any>(), "any", input, dim, keepdim, t, {}, out);
}

namespace {

Tensor vector_norm(const Tensor& input, double p, const std::optional<DimVector>& dim, bool keepdim,
                   std::optional<ScalarType> dtype, const OutArg& out) {
  ScalarType in = dtype.value_or(input->dtype());
  FLB_CHECK(is_floating(in) || is_complex(in),
            "norm(): Expected a floating point or complex tensor as input. Got ",
            torch_type_name(in));
  if (std::isinf(p) && input->numel() == 0) {
    ReduceShape r = reduce_shape(input, dim, keepdim, "norm");
    int64_t n = 1;
    for (int64_t d : r.dims) n *= input->sizes()[d];
    FLB_CHECK(n != 0 && input->dim() != 0, "norm(): cannot compute the ", p > 0 ? "" : "-",
              "inf norm on an empty tensor because the operation does not have an identity");
  }
  ScalarType result = is_complex(in) ? to_real(in) : in;
  return reduce(handle<kernels::norm>(), "norm", to_dtype(input, in), dim, keepdim, result,
                {Scalar(p)}, out);
}

}  // namespace

Tensor norm(const Tensor& input, const std::optional<Scalar>& p,
            const std::optional<DimVector>& dim, bool keepdim, std::optional<ScalarType> dtype,
            const OutArg& out) {
  double pv = p ? p->to_double() : 2.0;
  return vector_norm(input, pv, dim, keepdim, dtype, out);
}

Tensor norm_str(const Tensor& input, const std::string& p, const std::optional<DimVector>& dim,
                bool keepdim, std::optional<ScalarType> dtype, const OutArg& out) {
  FLB_CHECK(p == "fro", "norm(): unsupported norm type '", p,
            "'; expected a number or 'fro' ('nuc' needs a matrix decomposition)");
  FLB_CHECK(!dim || dim->size() <= 2, "norm(): the Frobenius norm takes at most 2 dims, got ",
            dim->size());
  return vector_norm(input, 2.0, dim, keepdim, dtype, out);
}

Tensor logsumexp(const Tensor& input, IntList dim, bool keepdim, const OutArg& out) {
  ScalarType t = is_floating(input->dtype()) ? input->dtype() : default_dtype();
  FLB_CHECK(!is_complex(input->dtype()), "logsumexp(): does not support complex inputs");
  DimVector dims = dim;
  return reduce(handle<kernels::logsumexp>(), "logsumexp", to_dtype(input, t), dims, keepdim, t, {},
                out);
}

}  // namespace flambeau::ops
