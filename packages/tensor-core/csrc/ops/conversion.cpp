// Conversions between dtypes and devices: to, type_as, cpu and the dtype
// shorthand methods (float(), long(), ...). Each returns self when nothing
// changes, as PyTorch does, unless a copy is asked for.
#include "core/non_blocking.h"
#include "generated/ops.h"
#include "ops/memory_format.h"

namespace flambeau::ops {

namespace {

// An unspecified index (-1) matches any index of the same device type.
bool same_device(Device a, Device b) {
  return a.type == b.type && (a.index == b.index || a.index < 0 || b.index < 0);
}

// A copy takes memory_format's layout (by default self's own, as in PyTorch).
Tensor convert_to(const Tensor& self, Device device, ScalarType dtype, bool copy,
                  MemoryFormat memory_format = MemoryFormat::Preserve) {
  if (!copy && dtype == self->dtype() && same_device(device, self->device()) &&
      (memory_format == MemoryFormat::Preserve || is_contiguous_in(self, memory_format)))
    return self;
  Tensor out = empty_in_format(self, dtype, device, memory_format, "to");
  copy_into(out, self);
  return out;
}

Tensor cast(const Tensor& self, ScalarType dtype) {
  return convert_to(self, self->device(), dtype, false);
}

}  // namespace

Tensor to(const Tensor& self, ScalarType dtype, bool non_blocking, bool copy,
          MemoryFormat memory_format) {
  (void)non_blocking;  // copies on the CPU are synchronous
  return convert_to(self, self->device(), dtype, copy, memory_format);
}

Tensor to_device(const Tensor& self, std::optional<Device> device, std::optional<ScalarType> dtype,
                 bool non_blocking, bool copy, MemoryFormat memory_format) {
  NonBlockingCopy scope(non_blocking);
  return convert_to(self, device.value_or(self->device()), dtype.value_or(self->dtype()), copy,
                    memory_format);
}

Tensor to_other(const Tensor& self, const Tensor& other, bool non_blocking, bool copy,
                MemoryFormat memory_format) {
  NonBlockingCopy scope(non_blocking);
  FLB_CHECK_T(TypeError, !other->is_wrapped_number(),
              "to() received an invalid combination of arguments: expected a dtype, a device or "
              "a Tensor, not a number");
  return convert_to(self, other->device(), other->dtype(), copy, memory_format);
}

Tensor type_as(const Tensor& self, const Tensor& other) { return cast(self, other->dtype()); }

Tensor cpu(const Tensor& self) { return convert_to(self, Device{kCPU, -1}, self->dtype(), false); }

Tensor float_cast(const Tensor& self) { return cast(self, ScalarType::Float32); }
Tensor double_cast(const Tensor& self) { return cast(self, ScalarType::Float64); }
Tensor half_cast(const Tensor& self) { return cast(self, ScalarType::Float16); }
Tensor bfloat16_cast(const Tensor& self) { return cast(self, ScalarType::BFloat16); }
Tensor long_cast(const Tensor& self) { return cast(self, ScalarType::Int64); }
Tensor int_cast(const Tensor& self) { return cast(self, ScalarType::Int32); }
Tensor short_cast(const Tensor& self) { return cast(self, ScalarType::Int16); }
Tensor char_cast(const Tensor& self) { return cast(self, ScalarType::Int8); }
Tensor byte_cast(const Tensor& self) { return cast(self, ScalarType::UInt8); }
Tensor bool_cast(const Tensor& self) { return cast(self, ScalarType::Bool); }

}  // namespace flambeau::ops
