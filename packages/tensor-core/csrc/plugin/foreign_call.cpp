#include "plugin/foreign_call.h"

#include "core/error.h"
#include "ops/common.h"
#include "plugin/backends.h"

namespace flambeau {

namespace {

// Python numbers arrive as 0-dim host tensors broadcast to the output's shape:
// one element goes over, and the kernel sees the same broadcast on the device.
Tensor to_device(const Tensor& t, Device device) {
  bool broadcast_scalar = true;
  for (int64_t s : t->strides()) broadcast_scalar = broadcast_scalar && s == 0;
  if (!broadcast_scalar) return copy_to(t, device);
  Tensor one = empty({}, t->dtype(), device);
  copy_into(one, make_view(t, {}, {}, t->offset()));
  return make_view(one, t->sizes(), DimVector(t->sizes().size(), 0), 0);
}

}  // namespace

void ForeignCall::add(const Scalar& s) {
  flb_scalar out{};
  switch (s.kind()) {
    case Scalar::Kind::Bool:
      out.kind = FLB_SCALAR_BOOL;
      out.i = s.to<int64_t>();
      break;
    case Scalar::Kind::Int:
      out.kind = FLB_SCALAR_INT;
      out.i = s.to<int64_t>();
      break;
    case Scalar::Kind::Float:
      out.kind = FLB_SCALAR_FLOAT;
      out.real = s.to<double>();
      break;
    case Scalar::Kind::Complex: {
      auto c = s.to<c128>();
      out.kind = FLB_SCALAR_COMPLEX;
      out.real = c.real();
      out.imag = c.imag();
      break;
    }
  }
  scalars_.push_back(out);
}

Tensor copy_to(const Tensor& t, Device device) {
  if (!t || t->device() == device) return t;
  Tensor out = empty(t->sizes(), t->dtype(), device);
  copy_into(out, t);
  return out;
}

void call_foreign_kernel(const std::string& op, const ForeignKernels& kernels, Device device,
                         const ForeignCall& call) {
  const plugin::Backend& b = *plugin::backend_for(device.type);
  const char* dev = b.hooks.name;
  const auto& ts = call.tensors();
  ScalarType dtype = ScalarType::Undefined;  // the first present tensor's
  for (const Tensor& t : ts) {
    if (t) {
      dtype = t->dtype();
      break;
    }
  }
  ForeignKernels::Entry k = kernels.any;
  if (dtype != ScalarType::Undefined && kernels.by_dtype[static_cast<int>(dtype)].fn)
    k = kernels.by_dtype[static_cast<int>(dtype)];
  FLB_CHECK_T(NotImplementedError, k.fn != nullptr, "operator '", op,
              "' is not implemented for device '", dev, "' and dtype ", dtype_name(dtype));

  int32_t index = plugin::resolve_index(b, device);
  std::vector<Tensor> held;  // device copies of host arguments, alive for the call
  held.reserve(ts.size());
  std::vector<flb_tensor> tensors(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    flb_tensor& c = tensors[i];
    c.struct_size = sizeof(flb_tensor);
    if (!ts[i]) {  // absent (an optional argument not given)
      c.ndim = -1;
      c.dtype = -1;
      c.device_index = index;
      continue;
    }
    const Tensor* tp = &ts[i];
    if ((*tp)->device().is_cpu()) {
      held.push_back(to_device(*tp, device));
      tp = &held.back();
    }
    const Tensor& t = *tp;
    c.data = t->data();
    c.dtype = static_cast<int32_t>(t->dtype());
    c.ndim = static_cast<int32_t>(t->dim());
    c.sizes = t->sizes().data();
    c.strides = t->strides().data();
    c.device_index = t->device().is_cpu() ? -1 : t->device().index;
  }
  flb_kernel_call c{};
  c.struct_size = sizeof(c);
  c.op = op.c_str();
  c.device_index = index;
  c.stream = b.hooks.current_stream ? b.hooks.current_stream(b.hooks.self, index) : nullptr;
  c.n_tensors = static_cast<int32_t>(tensors.size());
  c.tensors = tensors.data();
  c.n_scalars = static_cast<int32_t>(call.scalars().size());
  c.scalars = call.scalars().data();
  c.n_ints = static_cast<int32_t>(call.ints().size());
  c.ints = call.ints().data();
  // No generator given (the CPU's default stands for it): the device's own default.
  Generator* gen = call.generator();
  if (gen == &default_generator())
    gen = &default_generator(Device{device.type, static_cast<int16_t>(index)});
  c.generator = reinterpret_cast<flb_generator*>(gen);
  c.n_structs = static_cast<int32_t>(call.structs().size());
  c.structs = call.structs().data();
  c.int_result = call.int_result();
  plugin::check(k.fn(k.ctx, &c), b, op.c_str());
}

}  // namespace flambeau
