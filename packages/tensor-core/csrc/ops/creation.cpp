// Creating tensors: *_like, empty_strided, ranges (arange, linspace, logspace),
// eye and meshgrid.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "generated/kernels.h"
#include "generated/ops.h"
#include "ops/memory_format.h"
#include "ops/shape_util.h"
#include "ops/uninitialized.h"

namespace flambeau::ops {

namespace {

Tensor finish(Tensor t, bool requires_grad) {
  if (requires_grad) t->set_requires_grad(true);
  return t;
}

Tensor like(const Tensor& input, const std::optional<Scalar>& value,
            std::optional<ScalarType> dtype, std::optional<Device> device, bool requires_grad,
            MemoryFormat memory_format, const char* op) {
  Tensor t = empty_in_format(input, dtype.value_or(input->dtype()),
                             device.value_or(input->device()), memory_format, op);
  if (value) fill_(t, *value);
  return finish(t, requires_grad);
}

// Ranges fill a fresh 1-d tensor through the device's kernel.
// ArangeKernel: declared in kernels/table.yaml.
// LinspaceKernel: declared in kernels/table.yaml.
// LogspaceKernel: declared in kernels/table.yaml.

void check_range_dtype(const char* op, ScalarType dtype, bool complex_ok) {
  FLB_CHECK(dtype != ScalarType::Bool && (complex_ok || !is_complex(dtype)), op,
            ": not implemented for dtype ", dtype_name(dtype));
}

}  // namespace

Tensor empty_strided(IntList size, IntList stride, std::optional<ScalarType> dtype,
                     std::optional<Device> device, bool requires_grad) {
  return finish(maybe_fill_uninitialized(flambeau::empty_strided(
                    size, stride, dtype.value_or(default_dtype()), device.value_or(Device{}))),
                requires_grad);
}

Tensor empty_like(const Tensor& input, std::optional<ScalarType> dtype,
                  std::optional<Device> device, bool requires_grad, MemoryFormat memory_format) {
  return maybe_fill_uninitialized(
      like(input, std::nullopt, dtype, device, requires_grad, memory_format, "empty_like"));
}

Tensor zeros_like(const Tensor& input, std::optional<ScalarType> dtype,
                  std::optional<Device> device, bool requires_grad, MemoryFormat memory_format) {
  return like(input, Scalar(int64_t(0)), dtype, device, requires_grad, memory_format, "zeros_like");
}

Tensor ones_like(const Tensor& input, std::optional<ScalarType> dtype, std::optional<Device> device,
                 bool requires_grad, MemoryFormat memory_format) {
  return like(input, Scalar(int64_t(1)), dtype, device, requires_grad, memory_format, "ones_like");
}

Tensor full_like(const Tensor& input, const Scalar& fill_value, std::optional<ScalarType> dtype,
                 std::optional<Device> device, bool requires_grad, MemoryFormat memory_format) {
  return like(input, fill_value, dtype, device, requires_grad, memory_format, "full_like");
}

Tensor arange(const Scalar& end, std::optional<ScalarType> dtype, std::optional<Device> device,
              bool requires_grad) {
  return arange_start(Scalar(int64_t(0)), end, Scalar(int64_t(1)), dtype, device, requires_grad);
}

Tensor arange_start(const Scalar& start, const Scalar& end, const Scalar& step,
                    std::optional<ScalarType> dtype, std::optional<Device> device,
                    bool requires_grad) {
  FLB_CHECK(!start.is_complex() && !end.is_complex() && !step.is_complex(),
            "arange: complex start, end or step are not supported");
  bool floating = start.is_floating() || end.is_floating() || step.is_floating();
  ScalarType type = dtype.value_or(floating ? default_dtype() : ScalarType::Int64);
  check_range_dtype("arange", type, false);
  // PyTorch checks the bounds in the accumulate type: int64 for integer dtypes.
  double xs, xe, xst;
  if (is_integral(type, false)) {
    xs = static_cast<double>(start.to<int64_t>());
    xe = static_cast<double>(end.to<int64_t>());
    xst = static_cast<double>(step.to<int64_t>());
  } else {
    xs = start.to_double(), xe = end.to_double(), xst = step.to_double();
  }
  FLB_CHECK(xst != 0, "arange: step must be nonzero");
  FLB_CHECK(std::isfinite(xs) && std::isfinite(xe), "arange: unsupported range: ", xs, " -> ", xe);
  FLB_CHECK((xst > 0 && xe >= xs) || (xst < 0 && xe <= xs),
            "arange: upper bound and larger bound inconsistent with step sign");
  double size_d;
  if (type == ScalarType::Int64) {
    int64_t s = start.to<int64_t>(), e = end.to<int64_t>(), st = step.to<int64_t>();
    int64_t sgn = (st > 0) - (st < 0);
    // In 128 bits: e - s alone can exceed the int64 range.
    size_d = static_cast<double>((__int128(e) - s + st - sgn) / st);
  } else {
    size_d = std::ceil((end.to_double() - start.to_double()) / step.to_double());
  }
  // 2^63 exactly: INT64_MAX rounds up to it as a double, and 2^63 has no int64 value.
  FLB_CHECK(size_d >= 0 && size_d < 9223372036854775808.0,
            "arange: invalid size, possible overflow?");
  Tensor out = flambeau::empty({static_cast<int64_t>(size_d)}, type, device.value_or(Device{}));
  if (out->numel() > 0) {
    Scalar s0 = is_integral(type, false) ? Scalar(start.to<int64_t>()) : start;
    Scalar st0 = is_integral(type, false) ? Scalar(step.to<int64_t>()) : step;
    kernel<kernels::arange>(out->device())(out, s0, st0);
  }
  return finish(out, requires_grad);
}

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps,
                std::optional<ScalarType> dtype, std::optional<Device> device, bool requires_grad) {
  FLB_CHECK(steps >= 0, "linspace: number of steps must be non-negative");
  bool cplx = start.is_complex() || end.is_complex();
  ScalarType type = dtype.value_or(cplx ? default_complex_dtype() : default_dtype());
  check_range_dtype("linspace", type, true);
  Tensor out = flambeau::empty({steps}, type, device.value_or(Device{}));
  if (steps > 0) {
    kernel<kernels::linspace>(out->device())(out, start, end);
  }
  return finish(out, requires_grad);
}

Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base,
                std::optional<ScalarType> dtype, std::optional<Device> device, bool requires_grad) {
  FLB_CHECK(steps >= 0, "logspace: number of steps must be non-negative");
  bool cplx = start.is_complex() || end.is_complex();
  ScalarType type = dtype.value_or(cplx ? default_complex_dtype() : default_dtype());
  check_range_dtype("logspace", type, true);
  Tensor out = flambeau::empty({steps}, type, device.value_or(Device{}));
  if (steps > 0) {
    kernel<kernels::logspace>(out->device())(out, start, end, base);
  }
  return finish(out, requires_grad);
}

Tensor eye(int64_t n, std::optional<int64_t> m, std::optional<ScalarType> dtype,
           std::optional<Device> device, bool requires_grad) {
  int64_t cols = m.value_or(n);
  FLB_CHECK(n >= 0, "eye: n must be greater or equal to 0, got ", n);
  FLB_CHECK(cols >= 0, "eye: m must be greater or equal to 0, got ", cols);
  Tensor out =
      flambeau::empty({n, cols}, dtype.value_or(default_dtype()), device.value_or(Device{}));
  zero_(out);
  if (out->numel() > 0) fill_(diagonal(out, 0, 0, 1), Scalar(int64_t(1)));
  return finish(out, requires_grad);
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors,
                             const std::optional<std::string>& indexing) {
  FLB_CHECK(!tensors.empty(), "meshgrid expects a non-empty TensorList");
  std::string mode = indexing.value_or("ij");
  FLB_CHECK(mode == "ij" || mode == "xy",
            "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: ", mode);
  size_t n = tensors.size();
  for (const Tensor& t : tensors) {
    FLB_CHECK(t->dim() <= 1,
              "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: ", t->dim(),
              "D tensor of shape ", shape_str(t->sizes()));
    FLB_CHECK(t->dtype() == tensors[0]->dtype(),
              "torch.meshgrid: Expected all tensors in the tensor list to have the same dtype.");
    FLB_CHECK(t->device() == tensors[0]->device(),
              "torch.meshgrid: Expected all tensors in the tensor list to have the same device.");
  }
  // 'xy' swaps the roles of the first two inputs in the output shape.
  std::vector<size_t> pos(n);
  for (size_t i = 0; i < n; ++i) pos[i] = i;
  if (mode == "xy" && n >= 2) std::swap(pos[0], pos[1]);
  DimVector shape(n);
  for (size_t i = 0; i < n; ++i) shape[pos[i]] = tensors[i]->numel();
  std::vector<Tensor> out;
  for (size_t i = 0; i < n; ++i) {
    DimVector v(n, 1);
    v[pos[i]] = tensors[i]->numel();
    out.push_back(mark_view(expand(reshape(tensors[i], v), shape), tensors[i]));  // _base
  }
  return out;
}

}  // namespace flambeau::ops
