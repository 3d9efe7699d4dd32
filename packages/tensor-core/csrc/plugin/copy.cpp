// copy_ on a plugin's device type, native to the core: moves bytes with the
// backend's copy hooks and leaves strided or converting copies within the
// device to the backend's own "copy_" kernel. copy_into hands it every copy
// whose destination, or (to the CPU) source, is on the device.
#include <array>
#include <utility>

#include "core/non_blocking.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/common.h"
#include "plugin/backends.h"

namespace flambeau::plugin {

namespace {

bool is_flat(const Tensor& t, IntList sizes) { return t->is_contiguous() && t->sizes() == sizes; }

size_t nbytes(const Tensor& t) { return static_cast<size_t>(t->numel()) * t->itemsize(); }

// dst and src on the same device of type b, same shape.
void copy_within(const Backend& b, const Tensor& dst, const Tensor& src) {
  if (dst->dtype() == src->dtype() && is_flat(dst, src->sizes()) && is_flat(src, dst->sizes())) {
    int32_t index = resolve_index(b, dst->device());
    flb_stream s = b.hooks.current_stream ? b.hooks.current_stream(b.hooks.self, index) : nullptr;
    check(b.hooks.copy_on_device(b.hooks.self, dst->data(), src->data(), nbytes(dst), index, s), b,
          "copy_on_device");
    return;
  }
  static const OperatorEntry& op = handle<kernels::copy_>().entry();
  ForeignKernels* k = op.foreign[static_cast<size_t>(b.type)];
  FLB_CHECK_T(NotImplementedError, k != nullptr, "operator 'copy_' is not implemented for device '",
              b.hooks.name, "' (a strided or dtype-converting copy within the device)");
  ForeignCall call;
  call.add(dst);
  call.add(src);
  call_foreign_kernel(op.name, *k, dst->device(), call);
}

void host_to_device(const Backend& b, const Tensor& dst, const Tensor& src) {
  Tensor host = src;
  if (src->dtype() != dst->dtype() || !is_flat(src, dst->sizes())) {
    host = empty(dst->sizes(), dst->dtype());
    copy_into(host, src);
  }
  Tensor target =
      is_flat(dst, dst->sizes()) ? dst : empty(dst->sizes(), dst->dtype(), dst->device());
  int32_t index = resolve_index(b, target->device());
  flb_stream s = b.hooks.current_stream ? b.hooks.current_stream(b.hooks.self, index) : nullptr;
  // Asynchronous only from the caller's own memory: a staging copy dies on return.
  const int32_t async = non_blocking_copy() && host == src;
  check(b.hooks.copy_from_host(b.hooks.self, target->data(), host->data(), nbytes(target), index, s,
                               async),
        b, "copy_from_host");
  if (target != dst) copy_within(b, dst, target);
}

void device_to_host(const Backend& b, const Tensor& dst, const Tensor& src) {
  Tensor flat = src;
  if (!is_flat(src, dst->sizes())) {
    flat = empty(dst->sizes(), src->dtype(), src->device());
    copy_within(b, flat, src);
  }
  Tensor host = flat->dtype() == dst->dtype() && is_flat(dst, dst->sizes())
                    ? dst
                    : empty(dst->sizes(), flat->dtype());
  int32_t index = resolve_index(b, flat->device());
  flb_stream s = b.hooks.current_stream ? b.hooks.current_stream(b.hooks.self, index) : nullptr;
  // Asynchronous only into the caller's own memory, which nothing here reads afterwards.
  const int32_t async = non_blocking_copy() && host == dst;
  check(
      b.hooks.copy_to_host(b.hooks.self, host->data(), flat->data(), nbytes(host), index, s, async),
      b, "copy_to_host");
  if (host != dst) copy_into(dst, host);
}

template <DeviceType D>
void copy_kernel(const Tensor& dst, const Tensor& src) {
  const Backend& b = *backend_for(D);
  if (src->device().is_cpu())
    host_to_device(b, dst, src);
  else if (dst->device().is_cpu())
    device_to_host(b, dst, src);
  else
    copy_within(b, dst, src);
}

template <size_t... D>
constexpr std::array<void (*)(const Tensor&, const Tensor&), sizeof...(D)> make_kernels(
    std::index_sequence<D...>) {
  return {&copy_kernel<static_cast<DeviceType>(D)>...};
}

}  // namespace

void register_copy_kernel(DeviceType type) {
  static constexpr auto copies = make_kernels(std::make_index_sequence<kMaxDeviceTypes>());
  register_kernel<kernels::copy_>(type, copies[static_cast<size_t>(type)]);
}

}  // namespace flambeau::plugin
