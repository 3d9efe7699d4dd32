// Frontends of softmax, log_softmax and their backward kernels: the dim is
// split into (outer, n, inner) of a contiguous copy, then the kernel in
// cpu/nn_softmax_kernels.cpp runs. A 0-dim input is a single row of one.
#include "generated/kernels.h"
#include "generated/ops_nn_activation.h"
#include "generated/ops_tensor.h"
#include "ops/nn_kernels.h"

namespace flambeau::ops {

namespace {

struct Split {
  int64_t outer = 1, n = 1, inner = 1;
};

Split split_at(IntList sizes, int64_t dim) {
  Split s;
  for (int64_t i = 0; i < static_cast<int64_t>(sizes.size()); ++i) {
    if (i < dim) s.outer *= sizes[i];
    if (i == dim) s.n = sizes[i];
    if (i > dim) s.inner *= sizes[i];
  }
  return s;
}

Tensor softmax_impl(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  const int64_t d = wrap_dim(dim, std::max<int64_t>(input->dim(), 1), name);
  const ScalarType t = dtype ? *dtype : input->dtype();
  if (!is_floating(t)) fail_dtype(name, t);
  Tensor x = contiguous(to_dtype(input, t));
  Tensor out = empty(input->sizes(), t, input->device());
  if (out->numel() == 0) return out;
  Split s = split_at(input->sizes(), d);
  kernel<kernels::softmax>(input->device())(out, x, s.outer, s.n, s.inner, log);
  return out;
}

Tensor softmax_backward_impl(const Tensor& grad_output, const Tensor& output, int64_t dim,
                             ScalarType input_dtype, bool log) {
  const char* name = log ? "_log_softmax_backward_data" : "_softmax_backward_data";
  FLB_CHECK(grad_output->sizes() == output->sizes(), name, ": grad_output of shape ",
            shape_str(grad_output->sizes()), " does not match output of shape ",
            shape_str(output->sizes()));
  common_device({&grad_output, &output}, name);
  const ScalarType t = output->dtype();
  if (!is_floating(t)) fail_dtype(name, t);
  const int64_t d = wrap_dim(dim, std::max<int64_t>(output->dim(), 1), name);
  Tensor g = contiguous(to_dtype(grad_output, t));
  Tensor y = contiguous(output);
  Tensor gi = empty(output->sizes(), t, output->device());
  if (gi->numel() != 0) {
    Split s = split_at(output->sizes(), d);
    kernel<kernels::_softmax_backward_data>(output->device())(gi, g, y, s.outer, s.n, s.inner, log);
  }
  return to_dtype(gi, input_dtype);
}

}  // namespace

Tensor softmax(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl(input, dim, dtype, false);
}
Tensor log_softmax(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl(input, dim, dtype, true);
}
Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim,
                              ScalarType input_dtype) {
  return softmax_backward_impl(grad_output, output, dim, input_dtype, false);
}
Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim,
                                  ScalarType input_dtype) {
  return softmax_backward_impl(grad_output, output, dim, input_dtype, true);
}

}  // namespace flambeau::ops
