#include "ops/reduce_util.h"

#include <algorithm>

namespace flambeau {

ReduceShape reduce_shape(const Tensor& in, const std::optional<DimVector>& dim, bool keepdim,
                         const char* op) {
  ReduceShape r;
  const int64_t nd = in->dim();
  if (!dim || dim->empty()) {
    for (int64_t d = 0; d < nd; ++d) r.dims.push_back(d);
  } else {
    for (int64_t d : *dim) {
      int64_t w = wrap_dim(d, nd, op);
      FLB_CHECK(std::find(r.dims.begin(), r.dims.end(), w) == r.dims.end(), op, ": dim ", w,
                " appears multiple times in the list of dims");
      r.dims.push_back(w);
    }
    std::sort(r.dims.begin(), r.dims.end());
  }
  for (int64_t d = 0; d < nd; ++d) {
    bool reduced = std::find(r.dims.begin(), r.dims.end(), d) != r.dims.end();
    r.keep_shape.push_back(reduced ? 1 : in->sizes()[d]);
    if (!reduced || keepdim) r.out_shape.push_back(reduced ? 1 : in->sizes()[d]);
  }
  if (nd == 0) r.dims.clear();
  return r;
}

Tensor keep_view(const Tensor& t, const ReduceShape& r) {
  return make_view(t, r.keep_shape, contiguous_strides(r.keep_shape), t->offset());
}

void check_nonempty(const Tensor& in, const ReduceShape& r, bool all_dims, const char* op) {
  if (in->numel() != 0) return;
  FLB_CHECK(!all_dims || in->dim() == 0, op,
            "(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
            "reduction dim with the 'dim' argument.");
  for (int64_t d : r.dims) {
    FLB_CHECK_T(IndexError, in->sizes()[d] != 0, op, "(): Expected reduction dim ", d,
                " to have non-zero size.");
  }
}

Tensor reduce(const KernelHandle<ReduceKernel>& op, const char* name, const Tensor& in,
              const std::optional<DimVector>& dim, bool keepdim, ScalarType out_dtype,
              std::initializer_list<Scalar> args, const OutArg& out) {
  ReduceShape r = reduce_shape(in, dim, keepdim, name);
  Tensor dest = prepare_out(out, r.out_shape, out_dtype, in->device(), name);
  Tensor target = dest->dtype() == out_dtype ? dest : empty(r.out_shape, out_dtype, in->device());
  // The kernel sees the output with reduced dims kept, so shapes line up.
  Tensor keep =
      target->is_contiguous()
          ? make_view(target, r.keep_shape, contiguous_strides(r.keep_shape), target->offset())
          : empty(r.keep_shape, out_dtype, in->device());
  Scalar scalars[4];
  size_t ns = 0;
  for (const Scalar& s : args) scalars[ns++] = s;
  kernel_for(op, in->device())(keep, in, r.dims, Span<Scalar>(scalars, ns));
  if (!target->is_contiguous())
    copy_into(target, make_view(keep, r.out_shape, contiguous_strides(r.out_shape), 0));
  if (target != dest) copy_into(dest, target);
  return dest;
}

}  // namespace flambeau
