// Frontends of var, std, var_mean and std_mean, in PyTorch's three spellings:
// (dim, *, correction, keepdim), (dim, unbiased, keepdim) and (unbiased).
#include "generated/kernels.h"
#include "generated/ops.h"
#include "ops/reduce_util.h"

namespace flambeau::ops {

namespace {

// (var or std, mean); mean is computed only when asked for.
std::tuple<Tensor, Tensor> moments(const char* name, bool take_sqrt, bool with_mean,
                                   const Tensor& input, const std::optional<DimVector>& dim,
                                   double correction, bool keepdim, const OutArg& out) {
  ScalarType t = input->dtype();
  FLB_CHECK(is_floating(t) || is_complex(t), name,
            "(): input dtype should be either floating point or complex dtypes. Got ",
            torch_type_name(t), " instead.");
  ReduceShape r = reduce_shape(input, dim, keepdim, name);
  ScalarType real = is_complex(t) ? to_real(t) : t;
  Tensor dest = prepare_out(out, r.out_shape, real, input->device(), name);
  Tensor v = dest->dtype() == real && dest->is_contiguous()
                 ? dest
                 : empty(r.out_shape, real, input->device());
  Tensor m = with_mean ? empty(r.out_shape, t, input->device()) : Tensor();
  kernel<kernels::var>(input->device())(keep_view(v, r), m ? keep_view(m, r) : Tensor(), input,
                                        r.dims, correction, take_sqrt);
  if (v != dest) copy_into(dest, v);
  return {dest, m};
}

double correction_of(const std::optional<Scalar>& c) { return c ? c->to_double() : 1.0; }

}  // namespace

#define FLB_MOMENT_TENSOR(NAME, SQRT)                                                       \
  Tensor NAME(const Tensor& input, const std::optional<DimVector>& dim,                     \
              const std::optional<Scalar>& correction, bool keepdim, const OutArg& out) {   \
    return std::get<0>(                                                                     \
        moments(#NAME, SQRT, false, input, dim, correction_of(correction), keepdim, out));  \
  }                                                                                         \
  Tensor NAME##_unbiased(const Tensor& input, bool unbiased) {                              \
    return std::get<0>(                                                                     \
        moments(#NAME, SQRT, false, input, std::nullopt, unbiased, false, OutArg::none())); \
  }                                                                                         \
  Tensor NAME##_dim_unbiased(const Tensor& input, const std::optional<DimVector>& dim,      \
                             bool unbiased, bool keepdim) {                                 \
    return std::get<0>(                                                                     \
        moments(#NAME, SQRT, false, input, dim, unbiased, keepdim, OutArg::none()));        \
  }

#define FLB_MOMENT_PAIR(NAME, SQRT)                                                            \
  std::tuple<Tensor, Tensor> NAME(const Tensor& input, const std::optional<DimVector>& dim,    \
                                  const std::optional<Scalar>& correction, bool keepdim) {     \
    return moments(#NAME, SQRT, true, input, dim, correction_of(correction), keepdim,          \
                   OutArg::none());                                                            \
  }                                                                                            \
  std::tuple<Tensor, Tensor> NAME##_unbiased(const Tensor& input, bool unbiased) {             \
    return moments(#NAME, SQRT, true, input, std::nullopt, unbiased, false, OutArg::none());   \
  }                                                                                            \
  std::tuple<Tensor, Tensor> NAME##_dim_unbiased(                                              \
      const Tensor& input, const std::optional<DimVector>& dim, bool unbiased, bool keepdim) { \
    return moments(#NAME, SQRT, true, input, dim, unbiased, keepdim, OutArg::none());          \
  }

FLB_MOMENT_TENSOR(var, false)
FLB_MOMENT_TENSOR(std, true)
FLB_MOMENT_PAIR(var_mean, false)
FLB_MOMENT_PAIR(std_mean, true)

#undef FLB_MOMENT_TENSOR
#undef FLB_MOMENT_PAIR

}  // namespace flambeau::ops
