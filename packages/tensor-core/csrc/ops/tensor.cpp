// Creating, copying and filling tensors.
#include "core/non_blocking.h"
#include "generated/kernels.h"
#include "generated/ops.h"
#include "ops/common.h"
#include "ops/memory_format.h"
#include "ops/uninitialized.h"

namespace flambeau {

void copy_into(const Tensor& dst, const Tensor& src) {
  // A CPU source may be copied into any device; the destination's backend does it.
  FLB_CHECK(src->device() == dst->device() || src->device().is_cpu() || dst->device().is_cpu(),
            "copy_: cannot copy between devices ", src->device().str(), " and ",
            dst->device().str());
  if (dst->numel() == 0) return;
  Tensor s = expand_to(src, dst->sizes(), "copy_");
  Device d = dst->device().is_cpu() ? s->device() : dst->device();
  kernel<kernels::copy_>(d)(dst, s);
}

Tensor contiguous_copy(const Tensor& t) {
  Tensor out = empty(t->sizes(), t->dtype(), t->device());
  copy_into(out, t);
  return out;
}

namespace ops {

namespace {
Tensor filled(IntList size, const std::optional<Scalar>& value, ScalarType dtype,
              const std::optional<Device>& device, bool requires_grad) {
  Tensor t = flambeau::empty(size, dtype, device.value_or(Device{}));
  if (value) fill_(t, *value);
  if (requires_grad) t->set_requires_grad(true);
  return t;
}
}  // namespace

Tensor empty(IntList size, std::optional<ScalarType> dtype, std::optional<Device> device,
             bool requires_grad) {
  return maybe_fill_uninitialized(
      filled(size, std::nullopt, dtype.value_or(default_dtype()), device, requires_grad));
}

Tensor zeros(IntList size, std::optional<ScalarType> dtype, std::optional<Device> device,
             bool requires_grad) {
  return filled(size, Scalar(int64_t(0)), dtype.value_or(default_dtype()), device, requires_grad);
}

Tensor ones(IntList size, std::optional<ScalarType> dtype, std::optional<Device> device,
            bool requires_grad) {
  return filled(size, Scalar(int64_t(1)), dtype.value_or(default_dtype()), device, requires_grad);
}

Tensor full(IntList size, const Scalar& fill_value, std::optional<ScalarType> dtype,
            std::optional<Device> device, bool requires_grad) {
  ScalarType inferred = fill_value.is_floating()  ? default_dtype()
                        : fill_value.is_complex() ? default_complex_dtype()
                                                  : fill_value.natural_dtype();
  return filled(size, fill_value, dtype.value_or(inferred), device, requires_grad);
}

Tensor copy_(const Tensor& self, const Tensor& src, bool non_blocking) {
  NonBlockingCopy scope(non_blocking);
  check_no_partial_overlap(self, src, "copy_");
  self->bump_version();  // first: refuses an inference tensor before any write
  copy_into(self, src);
  return self;
}

Tensor fill_(const Tensor& self, const Scalar& value) {
  self->bump_version();
  if (self->numel() > 0) kernel<kernels::fill_>(self->device())(self, value);
  return self;
}

Tensor zero_(const Tensor& self) { return fill_(self, Scalar(int64_t(0))); }

Tensor clone(const Tensor& input, MemoryFormat memory_format) {
  Tensor out = empty_in_format(input, input->dtype(), input->device(), memory_format, "clone");
  copy_into(out, input);
  return out;
}

Tensor contiguous(const Tensor& self, MemoryFormat memory_format) {
  if (is_contiguous_in(self, memory_format)) return self;
  FLB_CHECK(memory_format != MemoryFormat::Preserve,
            "contiguous: preserve memory format is unsupported by the contiguous operator");
  return clone(self, memory_format);
}

Tensor contiguous(const Tensor& self) {
  return self->is_contiguous() ? self : contiguous_copy(self);
}

}  // namespace ops
}  // namespace flambeau
