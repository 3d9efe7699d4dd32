#include "dispatch/dispatcher.h"

#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <utility>

#include "core/deterministic.h"

namespace flambeau {

namespace {
struct Registry {
  std::mutex mutex;
  std::unordered_map<std::string, std::unique_ptr<OperatorEntry>> ops;
};
Registry& registry() {
  static Registry* r = new Registry();  // leaked on purpose: used by static initializers
  return *r;
}
thread_local bool t_grad_enabled = true;
}  // namespace

OperatorEntry& Dispatcher::op(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mutex);
  auto& slot = r.ops[name];
  if (!slot) {
    slot = std::make_unique<OperatorEntry>();
    slot->name = name;
  }
  return *slot;
}

OperatorEntry* Dispatcher::find(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mutex);
  auto it = r.ops.find(name);
  return it == r.ops.end() ? nullptr : it->second.get();
}

void Dispatcher::register_kernel(const std::string& name, DeviceType device, void* kernel) {
  FLB_CHECK(device >= 0 && device < kMaxDeviceTypes, "register_kernel: bad device type ",
            static_cast<int>(device));
  op(name).kernels[static_cast<size_t>(device)] = kernel;
}

// The core's own kernels and those a plugin registered through the C ABI.
std::vector<std::string> Dispatcher::operators_with_kernel(DeviceType device) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mutex);
  std::vector<std::string> names;
  const auto d = static_cast<size_t>(device);
  for (auto& [name, entry] : r.ops)
    if (entry->kernels[d] || entry->foreign[d]) names.push_back(name);
  return names;
}

void fail_no_kernel(const OperatorEntry& op, Device device) {
  fail<NotImplementedError>("operator '", op.name, "' is not implemented for device '",
                            device_type_name(device.type), "'");
}

void warn_cpu_fallback(const OperatorEntry& op, Device device) {
  // A meta tensor has no data to copy: the copy raises, saying so, with no warning first.
  if (!device.has_data()) return;
  static std::mutex mutex;
  static std::set<std::pair<std::string, DeviceType>> warned;
  {
    std::lock_guard<std::mutex> g(mutex);
    if (!warned.insert({op.name, device.type}).second) return;
  }
  emit_warning(str_cat("operator '", op.name, "' runs on the CPU for device '",
                       device_type_name(device.type),
                       "': its result's size depends on the data, so its inputs are copied to "
                       "the host and its result back"));
}

Device common_device(std::initializer_list<const Tensor*> tensors, const char* op) {
  const Tensor* first = nullptr;
  for (const Tensor* t : tensors) {
    if (!t || !*t || (*t)->is_wrapped_number()) continue;
    if (!first) {
      first = t;
    } else if (FLB_UNLIKELY((*t)->device() != (*first)->device())) {
      fail(op,
           ": expected all tensors to be on the same device, but found at least two "
           "devices, ",
           (*first)->device().str(), " and ", (*t)->device().str());
    }
  }
  return first ? (*first)->device() : Device{};
}

bool grad_enabled() { return t_grad_enabled; }
void set_grad_enabled(bool enabled) { t_grad_enabled = enabled; }

}  // namespace flambeau
