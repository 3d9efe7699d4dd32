// The dispatcher: one entry per operator name, holding a kernel per device type.
// Frontends in csrc/ops check arguments (the same errors on every backend), then
// ask the dispatcher for the kernel of the inputs' device. Backends, CPU
// included, register kernels by operator name; the autograd key above them is
// a slot the autograd package fills (see python/autograd_slot.h).
#pragma once
#include <array>
#include <string>
#include <type_traits>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"
#include "generated/kernel_signatures.h"
#include "plugin/foreign_call.h"

namespace flambeau {

struct OperatorEntry {
  std::string name;
  std::array<void*, kMaxDeviceTypes> kernels{};
  // Kernels that backend plugins registered through the C ABI, by device type
  // (see plugin/foreign_call.h); used where `kernels` has none.
  std::array<ForeignKernels*, kMaxDeviceTypes> foreign{};
  // Bit d set: this operator's kernels on device type d are not deterministic
  // (from the operator table, or declared by a plugin; see core/deterministic.h).
  uint32_t nondeterministic = 0;
};

class Dispatcher {
 public:
  // The entry for an operator, created on first use. Entries are never freed, so
  // frontends cache the reference in a function-local static.
  static OperatorEntry& op(const std::string& name);
  static void register_kernel(const std::string& op, DeviceType device, void* kernel);
  // The entry of an operator or kernel name seen so far, else nullptr.
  static OperatorEntry* find(const std::string& name);
  static std::vector<std::string> operators_with_kernel(DeviceType device);
};

[[noreturn]] void fail_no_kernel(const OperatorEntry& op, Device device);
// Warns, once per operator and device type, that a kernel runs on the CPU.
void warn_cpu_fallback(const OperatorEntry& op, Device device);

// A kernel found for a device: the core's own (a function pointer), or a
// plugin's C kernel, to which the arguments go over as C structs.
template <class Fn>
class KernelRef;
template <class R, class... Args>
class KernelRef<R(Args...)> {
 public:
  using Fn = R(Args...);
  // Kernels that return tensors (unique, whose result's size depends on the
  // data) have no C form: on a plugin's device they run on the CPU, their inputs
  // copied to the host and their results back (docs/design/backends.rst).
  // nonzero and masked_select avoid this by counting first (_nonzero_count).
  static constexpr bool kRunsOnHost = !std::is_void_v<R> && !std::is_same_v<R, int64_t>;
  KernelRef(Fn* native, const OperatorEntry* op, Device device)
      : native_(native), op_(op), device_(device) {}
  R operator()(Args... args) const {
    if (FLB_LIKELY(native_ != nullptr)) return native_(args...);
    [[maybe_unused]] const ForeignKernels* foreign =
        op_->foreign[static_cast<size_t>(device_.type)];
    if constexpr (std::is_void_v<R>) {
      ForeignCall call;
      (call.add(args), ...);
      call_foreign_kernel(op_->name, *foreign, device_, call);
    } else if constexpr (std::is_same_v<R, int64_t>) {
      ForeignCall call;
      (call.add(args), ...);
      int64_t value = 0;
      call.set_int_result(&value);
      call_foreign_kernel(op_->name, *foreign, device_, call);
      return value;
    } else {
      auto* cpu = reinterpret_cast<Fn*>(op_->kernels[static_cast<size_t>(kCPU)]);
      if (cpu == nullptr) fail_no_kernel(*op_, device_);
      warn_cpu_fallback(*op_, device_);
      return result_to_device(cpu(on_host(args)...), device_);
    }
  }

 private:
  Fn* native_;
  const OperatorEntry* op_;
  Device device_;
};

// A kernel of the kernel table, resolved once: handle<kernels::add>() (generated/
// kernels.h) looks its entry up on first use; the type carries the signature.
template <class Fn>
class KernelHandle {
 public:
  explicit KernelHandle(const OperatorEntry* entry) : entry_(entry) {}
  const OperatorEntry& entry() const { return *entry_; }

 private:
  const OperatorEntry* entry_;
};

template <class Fn>
KernelRef<Fn> kernel_for(const KernelHandle<Fn>& handle, Device device) {
  const OperatorEntry& op = handle.entry();
  auto d = static_cast<size_t>(device.type);
  void* k = op.kernels[d];
  if (FLB_UNLIKELY(k == nullptr) && op.foreign[d] == nullptr &&
      !(KernelRef<Fn>::kRunsOnHost && op.kernels[static_cast<size_t>(kCPU)] != nullptr))
    fail_no_kernel(op, device);
  return KernelRef<Fn>(reinterpret_cast<Fn*>(k), &op, device);
}

template <class K>
const KernelHandle<typename K::Fn>& handle() {
  static const KernelHandle<typename K::Fn> h(&Dispatcher::op(K::name));
  return h;
}

template <class K>
KernelRef<typename K::Fn> kernel(Device device) {
  return kernel_for(handle<K>(), device);
}

// Registration takes the kernel as the tag's function type: a kernel of another
// signature does not compile.
template <class K>
void register_kernel(DeviceType device, typename K::Fn* fn) {
  Dispatcher::register_kernel(K::name, device, reinterpret_cast<void*>(fn));
}

// The device every tensor argument lives on; a RuntimeError naming both
// devices when they differ. Wrapped Python numbers (0-dim CPU) are exempt.
Device common_device(std::initializer_list<const Tensor*> tensors, const char* op);

// Grad mode is thread-local, as in PyTorch.
bool grad_enabled();
void set_grad_enabled(bool enabled);

}  // namespace flambeau

#define FLB_CONCAT_INNER(a, b) a##b
#define FLB_CONCAT(a, b) FLB_CONCAT_INNER(a, b)
// FLB_REGISTER_KERNEL(add, kCPU, add_kernel) at namespace scope in a kernel file:
// `add` is the kernel's tag in kernels/table.yaml (a '.' in its name becomes '_').
#define FLB_REGISTER_KERNEL(kernel_tag, device, fn)            \
  static const bool FLB_CONCAT(flb_registered_, __COUNTER__) = \
      (::flambeau::register_kernel<::flambeau::kernels::kernel_tag>(device, &fn), true)
