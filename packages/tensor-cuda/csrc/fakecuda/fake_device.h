// fakecuda: a device that lives in host address space, implementing the
// allocator's flb_cuda_device_api so that the allocator can be tested without
// a GPU (after PyTorch's torch_openreg test backend).
//
// - Memory is mmap'd PROT_NONE: the host cannot touch it, as it cannot touch
//   device memory, and untouched pages cost nothing.
// - Each device has a configurable size; malloc and map fail with
//   FLB_CUDA_OUT_OF_MEMORY beyond it, and any call can be made to fail on
//   purpose (inject).
// - Streams are opaque numbers. Work is never executed: an event recorded on a
//   stream completes when the test calls complete(stream) (or complete_all),
//   or when someone synchronizes on it (as the host would wait for the GPU).
// - Virtual memory: reserve_va takes a PROT_NONE range; map / unmap track which
//   granules of it are backed and reject misaligned or double (un)maps.
// - Every call is counted.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "allocator/device_api.h"

namespace flambeau::fakecuda {

enum class Call : int {
  kMalloc,
  kFree,
  kMemGetInfo,
  kEventCreate,
  kEventDestroy,
  kEventRecord,
  kEventQuery,
  kEventSynchronize,
  kVmGranularity,
  kReserveVa,
  kReleaseVa,
  kMap,
  kUnmap,
  kCount
};
constexpr int kNumCalls = int(Call::kCount);
// "malloc", "free", "mem_get_info", "event_create", ... as in the table.
const char* call_name(Call c);

struct FakeOptions {
  int device_count = 1;
  size_t total_bytes = size_t(1) << 30;  // per device
  size_t granularity = size_t(2) << 20;  // of map / unmap
  bool virtual_memory = true;            // offer the VM functions
};

class FakeDevice {
 public:
  explicit FakeDevice(const FakeOptions& options = FakeOptions());
  ~FakeDevice();  // returns whatever is still mapped or allocated to the OS
  FakeDevice(const FakeDevice&) = delete;
  FakeDevice& operator=(const FakeDevice&) = delete;

  const flb_cuda_device_api& api() const { return api_; }
  const FakeOptions& options() const { return options_; }

  // Calls number nth .. nth + count - 1 of `call`, counted from now (nth = 1 is
  // the next one), fail with `status` (FLB_CUDA_OUT_OF_MEMORY or FLB_CUDA_ERROR).
  void inject(Call call, uint64_t nth, uint64_t count, flb_cuda_status status);
  void clear_injections();

  // Finishes the work queued on `stream` so far: its recorded events complete.
  void complete(void* stream);
  void complete_all();

  // While logging is on, every call is appended to the log with its status.
  void set_logging(bool on);
  std::vector<std::pair<Call, flb_cuda_status>> take_log();  // and clears it

  uint64_t calls(Call c) const;     // made, failed ones included
  uint64_t failures(Call c) const;  // that did not return FLB_CUDA_OK (NOT_READY excluded)
  void reset_counts();
  size_t used_bytes(int device) const;  // malloc'd plus mapped
  size_t mapped_bytes(int device) const;
  size_t reserved_va_bytes(int device) const;
  size_t live_allocations(int device) const;  // malloc'd blocks not freed
  size_t live_events() const;                 // created, not destroyed
  size_t pending_events() const;              // recorded, not complete

  // The table's functions.
  flb_cuda_status malloc(int device, size_t size, void** ptr);
  flb_cuda_status free(int device, void* ptr);
  flb_cuda_status mem_get_info(int device, size_t* free_bytes, size_t* total_bytes);
  flb_cuda_status event_create(int device, void** event);
  flb_cuda_status event_destroy(int device, void* event);
  flb_cuda_status event_record(void* event, void* stream);
  flb_cuda_status event_query(void* event);
  flb_cuda_status event_synchronize(void* event);
  flb_cuda_status vm_granularity(int device, size_t* granularity);
  flb_cuda_status reserve_va(int device, size_t size, void** base);
  flb_cuda_status release_va(int device, void* base, size_t size);
  flb_cuda_status map(int device, void* addr, size_t size);
  flb_cuda_status unmap(int device, void* addr, size_t size);

 private:
  struct Reservation {
    size_t size = 0;
    std::vector<bool> mapped;  // one entry per granule
  };
  struct Device {
    size_t used = 0;
    size_t mapped = 0;
    size_t reserved_va = 0;
    std::unordered_map<void*, size_t> allocations;
    std::map<char*, Reservation> reservations;
  };
  struct Event {
    int device = 0;
    void* stream = nullptr;
    uint64_t seq = 0;  // the stream's work count when recorded; 0: never recorded
  };
  struct Stream {
    uint64_t submitted = 0;  // work queued (one unit per recorded event)
    uint64_t completed = 0;
  };
  struct Injection {
    Call call;
    uint64_t first, last;  // call numbers
    flb_cuda_status status;
  };

  // Counts the call; the injected status if this one must fail, else OK.
  flb_cuda_status enter(Call c);
  flb_cuda_status error(Call c, flb_cuda_status status, const char* message);
  Device* device(int index);
  // The granules [first, first + count) of the reservation holding
  // [addr, addr + size); nullptr (after error()) when misaligned or outside.
  Reservation* granules(Call c, Device& d, void* addr, size_t size, size_t* first, size_t* count);
  bool event_done(const Event& e) const;
  static size_t round_up_host(size_t n);  // to whole host pages

  FakeOptions options_;
  flb_cuda_device_api api_{};
  mutable std::mutex mutex_;
  std::vector<Device> devices_;
  std::unordered_set<Event*> events_;
  std::unordered_map<void*, Stream> streams_;
  std::vector<Injection> injections_;
  bool logging_ = false;
  std::vector<std::pair<Call, flb_cuda_status>> log_;
  uint64_t calls_[kNumCalls] = {};
  uint64_t failures_[kNumCalls] = {};
};

}  // namespace flambeau::fakecuda
