// The dispatcher: one entry per operator name, holding a kernel per device type.
// Frontends in csrc/ops check arguments (the same errors on every backend), then
// ask the dispatcher for the kernel of the inputs' device. Backends, CPU
// included, register kernels by operator name; the autograd key above them is
// a slot the autograd package fills (see python/autograd_slot.h).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"
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

// A kernel found for a device: the core's own (a function pointer), or a
// plugin's C kernel, to which the arguments go over as C structs.
template <class Fn>
class KernelRef;
template <class... Args>
class KernelRef<void(Args...)> {
 public:
  using Fn = void(Args...);
  KernelRef(Fn* native, const OperatorEntry* op, Device device)
      : native_(native), op_(op), device_(device) {}
  void operator()(Args... args) const {
    if (FLB_LIKELY(native_ != nullptr)) return native_(args...);
    ForeignCall call;
    (call.add(args), ...);
    call_foreign_kernel(op_->name, *op_->foreign[static_cast<size_t>(device_.type)], device_, call);
  }

 private:
  Fn* native_;
  const OperatorEntry* op_;
  Device device_;
};

// Kernels that return a value (nonzero's result, say) have no C-ABI form yet:
// only the core's own kernels can serve them.
template <class R, class... Args>
class KernelRef<R(Args...)> {
 public:
  using Fn = R(Args...);
  KernelRef(Fn* native, const OperatorEntry* op, Device device)
      : native_(native), op_(op), device_(device) {}
  R operator()(Args... args) const {
    if (FLB_LIKELY(native_ != nullptr)) return native_(args...);
    fail_no_kernel(*op_, device_);
  }

 private:
  Fn* native_;
  const OperatorEntry* op_;
  Device device_;
};

template <class Fn>
KernelRef<Fn> kernel_for(const OperatorEntry& op, Device device) {
  auto d = static_cast<size_t>(device.type);
  void* k = op.kernels[d];
  if (FLB_UNLIKELY(k == nullptr) && op.foreign[d] == nullptr) fail_no_kernel(op, device);
  return KernelRef<Fn>(reinterpret_cast<Fn*>(k), &op, device);
}

// The device every tensor argument lives on; a RuntimeError naming both
// devices when they differ. Wrapped Python numbers (0-dim CPU) are exempt.
Device common_device(std::initializer_list<const Tensor*> tensors, const char* op);

// Kernel signatures shared by families of operators. Inputs arrive checked,
// broadcast to the output's shape (stride-0 views) and cast to `compute`.
using ElementwiseKernel = void(const Tensor& out, Span<Tensor> inputs, Span<Scalar> args);
// Reduces `in` over `dims` (sorted, unique) into `out`, whose shape is `in`'s
// with those dims kept as size 1.
using ReduceKernel = void(const Tensor& out, const Tensor& in, IntList dims, Span<Scalar> args);

// Grad mode is thread-local, as in PyTorch.
bool grad_enabled();
void set_grad_enabled(bool enabled);

}  // namespace flambeau

#define FLB_CONCAT_INNER(a, b) a##b
#define FLB_CONCAT(a, b) FLB_CONCAT_INNER(a, b)
// FLB_REGISTER_KERNEL("add", kCPU, add_kernel) at namespace scope in a kernel file.
#define FLB_REGISTER_KERNEL(op_name, device, fn)                                               \
  static const bool FLB_CONCAT(flb_registered_, __COUNTER__) =                                 \
      (::flambeau::Dispatcher::register_kernel(op_name, device, reinterpret_cast<void*>(&fn)), \
       true)
