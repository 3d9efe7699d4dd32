// Frontends of the three FFT primitives (_fft_c2c, _fft_r2c, _fft_c2r): the
// same checks on every backend, the output's shape and dtype, then the
// kernel of the input's device (ops/fft_kernels.h).
#include "generated/kernels.h"
#include "generated/ops_fft.h"
#include "ops/common.h"
#include "ops/fft_kernels.h"
#include "ops/fft_util.h"
#include "ops/reduce_util.h"

namespace flambeau::ops {

namespace {

void check_normalization(int64_t normalization, const char* op) {
  FLB_CHECK(normalization >= kFftNormNone && normalization <= kFftNormByN, op,
            ": normalization must be 0 (none), 1 (by 1/sqrt(n)) or 2 (by 1/n), got ",
            normalization);
}

void check_complex(const Tensor& self, const char* op) {
  FLB_CHECK(is_complex(self->dtype()), op,
            ": Only supports complex dtypes, but found: ", torch_type_name(self->dtype()));
}

// The dims a primitive transforms, each holding at least one point.
DimVector primitive_dims(const Tensor& self, IntList dim, bool allow_none, const char* op) {
  FLB_CHECK(allow_none || !dim.empty(), op, ": must transform at least one dim");
  DimVector dims = fft::wrap_fft_dims(dim, self->dim(), op);
  for (int64_t d : dims) fft::check_points(self->sizes()[d]);
  return dims;
}

}  // namespace

Tensor _fft_c2c(const Tensor& self, IntList dim, int64_t normalization, bool forward) {
  const char* op = "_fft_c2c";
  check_complex(self, op);
  check_normalization(normalization, op);
  DimVector dims = primitive_dims(self, dim, true, op);
  Tensor out = flambeau::empty(self->sizes(), self->dtype(), self->device());
  if (dims.empty()) {
    copy_into(out, self);
  } else if (out->numel() != 0) {
    kernel<kernels::_fft_c2c>(self->device())(out, self, normalization, forward, dims);
  }
  return out;
}

Tensor _fft_r2c(const Tensor& self, IntList dim, int64_t normalization, bool onesided) {
  const char* op = "_fft_r2c";
  const ScalarType t = self->dtype();
  FLB_CHECK(is_floating(t), op,
            ": Only supports floating-point dtypes, but found: ", torch_type_name(t));
  fft::check_supported(t);
  check_normalization(normalization, op);
  DimVector dims = primitive_dims(self, dim, false, op);
  DimVector shape(self->sizes());
  if (onesided) shape[dims.back()] = shape[dims.back()] / 2 + 1;
  Tensor out = flambeau::empty(shape, to_complex(t), self->device());
  if (out->numel() != 0)
    kernel<kernels::_fft_r2c>(self->device())(out, self, normalization, onesided, dims);
  return out;
}

Tensor _fft_c2r(const Tensor& self, IntList dim, int64_t normalization, int64_t last_dim_size) {
  const char* op = "_fft_c2r";
  check_complex(self, op);
  check_normalization(normalization, op);
  DimVector dims = primitive_dims(self, dim, false, op);
  fft::check_points(last_dim_size);
  const int64_t last = dims.back(), half = last_dim_size / 2 + 1;
  FLB_CHECK(self->sizes()[last] == half, op, ": expected dim ", last, " to hold ", half,
            " (last_dim_size // 2 + 1) frequencies, but it has ", self->sizes()[last]);
  DimVector shape(self->sizes());
  shape[last] = last_dim_size;
  Tensor out = flambeau::empty(shape, to_real(self->dtype()), self->device());
  if (out->numel() != 0) kernel<kernels::_fft_c2r>(self->device())(out, self, normalization, dims);
  return out;
}

}  // namespace flambeau::ops
