// Copies that rearrange elements: repeat, flip, fliplr, flipud, roll. Each is a
// strided view of the input copied by the one copy kernel, so every backend
// with a copy_ kernel runs them.
#include <vector>

#include "generated/ops.h"
#include "ops/shape_util.h"

namespace flambeau::ops {

Tensor repeat(const Tensor& self, IntList repeats) {
  int64_t nr = static_cast<int64_t>(repeats.size()), nd = self->dim();
  FLB_CHECK(nr >= nd, "Number of dimensions of repeat dims can not be smaller than number of ",
            "dimensions of tensor");
  DimVector in_sizes(static_cast<size_t>(nr), 1), in_strides(static_cast<size_t>(nr), 0);
  for (int64_t d = 0; d < nd; ++d) {
    in_sizes[nr - nd + d] = self->sizes()[d];
    in_strides[nr - nd + d] = self->strides()[d];
  }
  DimVector shape(static_cast<size_t>(nr));
  for (int64_t d = 0; d < nr; ++d) {
    FLB_CHECK(repeats[d] >= 0, "Trying to create tensor with negative dimension ", repeats[d], ": ",
              shape_str(repeats));
    shape[d] = in_sizes[d] * repeats[d];
  }
  Tensor out = flambeau::empty(shape, self->dtype(), self->device());
  if (out->numel() == 0) return out;
  // out seen as (r0, s0, r1, s1, ...) receives self broadcast along every r.
  DimVector tiled, out_strides, src_strides;
  for (int64_t d = 0; d < nr; ++d) {
    tiled.push_back(repeats[d]);
    tiled.push_back(in_sizes[d]);
    out_strides.push_back(in_sizes[d] * out->strides()[d]);
    out_strides.push_back(out->strides()[d]);
    src_strides.push_back(0);
    src_strides.push_back(in_strides[d]);
  }
  copy_into(make_view(out, tiled, out_strides, 0),
            make_view(self, tiled, src_strides, self->offset()));
  return out;
}

Tensor flip(const Tensor& input, IntList dims) {
  DimVector wrapped = wrap_dims(dims, input->dim(), "flip");
  Tensor out = flambeau::empty(input->sizes(), input->dtype(), input->device());
  if (out->numel() == 0) return out;
  // A reversed view: negative strides, starting at the last element of each flipped dim.
  DimVector strides(input->strides());
  int64_t offset = input->offset();
  for (int64_t d : wrapped) {
    if (input->dim() == 0) continue;
    offset += (input->sizes()[d] - 1) * strides[d];
    strides[d] = -strides[d];
  }
  copy_into(out, make_view(input, input->sizes(), strides, offset));
  return out;
}

Tensor fliplr(const Tensor& input) {
  FLB_CHECK(input->dim() >= 2, "Input must be >= 2-d.");
  return flip(input, {1});
}

Tensor flipud(const Tensor& input) {
  FLB_CHECK(input->dim() >= 1, "Input must be >= 1-d.");
  return flip(input, {0});
}

Tensor roll(const Tensor& input, IntList shifts, const std::optional<DimVector>& dims) {
  if (!dims || dims->empty()) {
    FLB_CHECK(shifts.size() == 1, "roll: shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:0");
    return view(roll(flatten(input, 0, -1), shifts, DimVector{0}), input->sizes());
  }
  FLB_CHECK(shifts.size() == dims->size(),
            "roll: shifts and dimensions must align. shifts: ", shifts.size(),
            ", dims:", dims->size());
  Tensor cur = input;
  for (size_t i = 0; i < shifts.size(); ++i) {
    int64_t d = wrap_dim((*dims)[i], input->dim(), "roll");
    int64_t n = input->dim() == 0 ? 1 : input->sizes()[d];
    int64_t s = n == 0 ? 0 : ((shifts[i] % n) + n) % n;
    if (s == 0 || input->dim() == 0) continue;
    Tensor next = flambeau::empty(input->sizes(), input->dtype(), input->device());
    copy_into(narrow(next, d, s, n - s), narrow(cur, d, 0, n - s));
    copy_into(narrow(next, d, 0, s), narrow(cur, d, n - s, s));
    cur = next;
  }
  return cur.get() == input.get() ? contiguous_copy(input) : cur;
}

}  // namespace flambeau::ops
