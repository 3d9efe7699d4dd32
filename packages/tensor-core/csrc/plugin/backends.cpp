#include "plugin/backends.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>

#include "core/error.h"
#include "core/storage.h"
#include "dispatch/dispatcher.h"

namespace flambeau::plugin {

void register_copy_kernel(DeviceType type);  // plugin/copy.cpp

namespace {

// The struct sizes of ABI minor 0: what every backend must provide at least.
constexpr size_t kMinBackendSize = sizeof(flb_backend);

std::array<Backend*, kMaxDeviceTypes>& backends() {
  static std::array<Backend*, kMaxDeviceTypes> b{};
  return b;
}
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

struct LastError {
  flb_status status = FLB_OK;
  std::string message;
};
thread_local LastError t_error;

void set_error(flb_status status, const char* message) {
  t_error.status = status;
  t_error.message = message ? message : "";
}

// Blocks go back through the backend of the device type D; one deleter per
// type keeps DataPtr at its two words.
template <size_t D>
void free_block(void* ctx, void* ptr) {
  const Backend* b = backends()[D];
  b->hooks.free(b->hooks.self, ptr, ctx);
}
template <size_t... D>
constexpr std::array<void (*)(void*, void*), sizeof...(D)> make_deleters(
    std::index_sequence<D...>) {
  return {&free_block<D>...};
}
constexpr auto kDeleters = make_deleters(std::make_index_sequence<kMaxDeviceTypes>());

class PluginAllocator final : public Allocator {
 public:
  explicit PluginAllocator(const Backend* b) : b_(b) {}
  DataPtr allocate(size_t nbytes) override { return allocate_on(nbytes, Device{b_->type, -1}); }
  Device resolve(Device d) const override {
    return Device{d.type, static_cast<int16_t>(resolve_index(*b_, d))};
  }
  DataPtr allocate_on(size_t nbytes, Device d) override {
    int32_t index = resolve_index(*b_, d);
    void* ptr = nullptr;
    void* ctx = nullptr;
    check(b_->hooks.allocate(b_->hooks.self, index, nbytes, &ptr, &ctx), *b_, "allocate");
    return DataPtr{ptr, ctx, kDeleters[static_cast<size_t>(b_->type)]};
  }
  AllocatorStats stats() const override {
    AllocatorStats s;
    if (!b_->hooks.allocator_stats) return s;
    flb_allocator_stats st{};
    st.struct_size = sizeof(st);
    check(b_->hooks.allocator_stats(b_->hooks.self, resolve_index(*b_, Device{b_->type, -1}), &st),
          *b_, "allocator_stats");
    s.allocated = st.allocated_bytes;
    s.peak = st.peak_allocated_bytes;
    s.allocations = st.allocations;
    return s;
  }

 private:
  const Backend* b_;
};

// Fails registration with a message the backend's import error shows.
int32_t refuse(const std::string& message) {
  set_error(FLB_VERSION_MISMATCH, message.c_str());
  return -1;
}

int32_t register_backend(const flb_backend* in) {
  try {
    if (in == nullptr || in->struct_size < offsetof(flb_backend, abi_minor) + sizeof(uint32_t))
      return refuse("register_backend: not an flb_backend table");
    std::string name = in->name ? in->name : "";
    if (in->abi_major != FLB_ABI_MAJOR)
      return refuse(str_cat("backend '", name, "' was built for flambeau backend ABI ",
                            in->abi_major, ".", in->abi_minor, ", but this flambeau core provides ",
                            FLB_ABI_MAJOR, ".", FLB_ABI_MINOR));
    if (in->struct_size < kMinBackendSize)
      return refuse(str_cat("backend '", name, "': its flb_backend table has ", in->struct_size,
                            " bytes, fewer than ABI ", FLB_ABI_MAJOR, ".0 defines (",
                            kMinBackendSize, ")"));
    if (name.empty() || name == "cpu" || name.find(':') != std::string::npos)
      return refuse(str_cat("register_backend: invalid device type name '", name, "'"));
    if (!in->device_count || !in->allocate || !in->free || !in->copy_from_host ||
        !in->copy_to_host || !in->copy_on_device)
      return refuse(str_cat("backend '", name,
                            "' lacks a required hook (device_count, allocate, free, "
                            "copy_from_host, copy_to_host, copy_on_device)"));
    std::lock_guard<std::mutex> g(registry_mutex());
    DeviceType type = register_device_type(name);
    auto slot = static_cast<size_t>(type);
    if (backends()[slot] != nullptr)
      return refuse(str_cat("a backend for device type '", name, "' is already registered"));
    // Lives for the whole process: storages of this device may outlive any module.
    auto* b = new Backend();
    std::memcpy(&b->hooks, in, std::min(in->struct_size, sizeof(flb_backend)));
    b->hooks.struct_size = sizeof(flb_backend);
    b->type = type;
    backends()[slot] = b;
    set_allocator(type, new PluginAllocator(b));
    register_copy_kernel(type);
    return type;
  } catch (const std::exception& e) {
    return refuse(e.what());
  }
}

flb_status register_kernel(int32_t device_type, const char* op, int32_t dtype, flb_kernel_fn fn,
                           void* kernel_ctx) {
  if (device_type < 0 || device_type >= kMaxDeviceTypes || !backends()[device_type]) {
    set_error(FLB_INVALID_ARGUMENT, "register_kernel: no backend has this device type id");
    return FLB_INVALID_ARGUMENT;
  }
  if (!op || !fn || dtype < FLB_ANY_DTYPE || dtype >= kNumScalarTypes) {
    set_error(FLB_INVALID_ARGUMENT,
              "register_kernel: needs an operator name, a kernel and a dtype");
    return FLB_INVALID_ARGUMENT;
  }
  KernelForm form = kernel_form(op);
  if (form != KernelForm::kC) {  // a typo, or a kernel whose result has no C form
    set_error(FLB_INVALID_ARGUMENT,
              form == KernelForm::kUnknown
                  ? str_cat("register_kernel: flambeau has no kernel named '", op,
                            "' (flambeau/backend_kernels.h lists them)")
                        .c_str()
                  : str_cat("register_kernel: kernel '", op,
                            "' returns a tensor and has no C form; on a plugin's device it "
                            "runs on the CPU")
                        .c_str());
    return FLB_INVALID_ARGUMENT;
  }
  OperatorEntry& entry = Dispatcher::op(op);
  std::lock_guard<std::mutex> g(registry_mutex());
  auto slot = static_cast<size_t>(device_type);
  // Never freed: frontends may hold the operator entry for the whole process.
  ForeignKernels* table = entry.foreign[slot];
  if (!table) table = new ForeignKernels();
  auto& e = dtype == FLB_ANY_DTYPE ? table->any : table->by_dtype[dtype];
  e.fn = fn;
  e.ctx = kernel_ctx;
  entry.foreign[slot] = table;
  return FLB_OK;
}

flb_status declare_nondeterministic(int32_t device_type, const char* op) {
  if (device_type < 0 || device_type >= kMaxDeviceTypes || !backends()[device_type]) {
    set_error(FLB_INVALID_ARGUMENT, "declare_nondeterministic: no backend has this device type id");
    return FLB_INVALID_ARGUMENT;
  }
  OperatorEntry* entry = op ? Dispatcher::find(op) : nullptr;
  if (!entry) {
    set_error(FLB_INVALID_ARGUMENT,
              str_cat("declare_nondeterministic: flambeau has no operator named '",
                      op ? op : "(null)", "'")
                  .c_str());
    return FLB_INVALID_ARGUMENT;
  }
  std::lock_guard<std::mutex> g(registry_mutex());
  entry->nondeterministic |= 1u << device_type;
  return FLB_OK;
}

const char* last_error() { return t_error.message.c_str(); }

void generator_reserve(flb_generator* g, uint64_t blocks, uint64_t* seed, uint64_t* offset) {
  auto* gen = reinterpret_cast<Generator*>(g);
  *offset = gen->reserve(blocks);
  *seed = gen->seed();
}

}  // namespace

const Backend* backend_for(DeviceType t) {
  return t >= 0 && t < kMaxDeviceTypes ? backends()[static_cast<size_t>(t)] : nullptr;
}

const flb_core_api* core_api() {
  static const flb_core_api api = {sizeof(flb_core_api), FLB_ABI_MAJOR,
                                   FLB_ABI_MINOR,        FLAMBEAU_VERSION,
                                   &register_backend,    &register_kernel,
                                   &set_error,           &last_error,
                                   &generator_reserve,   &declare_nondeterministic};
  return &api;
}

void check(flb_status status, const Backend& b, const char* what) {
  if (FLB_LIKELY(status == FLB_OK)) return;
  std::string msg = str_cat(b.hooks.name, ": ", what, " failed");
  if (t_error.status != FLB_OK && !t_error.message.empty()) msg += ": " + t_error.message;
  t_error = LastError{};
  switch (status) {
    case FLB_NOT_IMPLEMENTED:
      throw NotImplementedError(msg);
    case FLB_INVALID_ARGUMENT:
      throw ValueError(msg);
    case FLB_OUT_OF_MEMORY:
      throw OutOfMemoryError(msg);
    default:
      throw Error(msg);
  }
}

int32_t resolve_index(const Backend& b, Device d) {
  if (d.index >= 0) return d.index;
  return b.hooks.current_device ? b.hooks.current_device(b.hooks.self) : 0;
}

}  // namespace flambeau::plugin
