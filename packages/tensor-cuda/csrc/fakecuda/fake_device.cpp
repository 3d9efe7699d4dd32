#include "fakecuda/fake_device.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace flambeau::fakecuda {

namespace {

thread_local std::string last_error_message;

const char* kCallNames[kNumCalls] = {
    "malloc",         "free",         "mem_get_info", "event_create",
    "event_destroy",  "event_record", "event_query",  "event_synchronize",
    "vm_granularity", "reserve_va",   "release_va",   "map",
    "unmap"};

size_t host_page() {
  static const size_t page = size_t(sysconf(_SC_PAGESIZE));
  return page;
}

// Address space the host can neither read nor write, and that costs no memory.
void* map_inaccessible(size_t size) {
  void* p = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

FakeDevice* self_of(void* self) { return static_cast<FakeDevice*>(self); }

}  // namespace

const char* call_name(Call c) { return kCallNames[int(c)]; }

FakeDevice::FakeDevice(const FakeOptions& options) : options_(options) {
  if (options.device_count < 1) throw std::invalid_argument("fakecuda: device_count must be >= 1");
  if (options.granularity == 0 || options.granularity % host_page() != 0) {
    throw std::invalid_argument("fakecuda: granularity must be a multiple of the host page size");
  }
  devices_.resize(size_t(options.device_count));

  api_.struct_size = sizeof api_;
  api_.self = this;
  api_.last_error = [](void*) { return last_error_message.c_str(); };
  api_.malloc = [](void* s, int32_t d, size_t n, void** p) { return self_of(s)->malloc(d, n, p); };
  api_.free = [](void* s, int32_t d, void* p) { return self_of(s)->free(d, p); };
  api_.mem_get_info = [](void* s, int32_t d, size_t* f, size_t* t) {
    return self_of(s)->mem_get_info(d, f, t);
  };
  api_.event_create = [](void* s, int32_t d, void** e) { return self_of(s)->event_create(d, e); };
  api_.event_destroy = [](void* s, int32_t d, void* e) { return self_of(s)->event_destroy(d, e); };
  api_.event_record = [](void* s, void* e, void* st) { return self_of(s)->event_record(e, st); };
  api_.event_query = [](void* s, void* e) { return self_of(s)->event_query(e); };
  api_.event_synchronize = [](void* s, void* e) { return self_of(s)->event_synchronize(e); };
  if (options.virtual_memory) {
    api_.vm_granularity = [](void* s, int32_t d, size_t* g) {
      return self_of(s)->vm_granularity(d, g);
    };
    api_.reserve_va = [](void* s, int32_t d, size_t n, void** b) {
      return self_of(s)->reserve_va(d, n, b);
    };
    api_.release_va = [](void* s, int32_t d, void* b, size_t n) {
      return self_of(s)->release_va(d, b, n);
    };
    api_.map = [](void* s, int32_t d, void* a, size_t n) { return self_of(s)->map(d, a, n); };
    api_.unmap = [](void* s, int32_t d, void* a, size_t n) { return self_of(s)->unmap(d, a, n); };
  }
}

FakeDevice::~FakeDevice() {
  for (Device& d : devices_) {
    for (auto& [ptr, size] : d.allocations) munmap(ptr, round_up_host(size));
    for (auto& [base, r] : d.reservations) munmap(base, r.size);
  }
  for (Event* e : events_) delete e;
}

// ---------------------------------------------------------------------------
// Test controls

void FakeDevice::inject(Call call, uint64_t nth, uint64_t count, flb_cuda_status status) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (nth == 0 || count == 0) return;
  uint64_t first = calls_[int(call)] + nth;
  injections_.push_back(Injection{call, first, first + count - 1, status});
}

void FakeDevice::clear_injections() {
  std::lock_guard<std::mutex> lock(mutex_);
  injections_.clear();
}

void FakeDevice::complete(void* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  Stream& s = streams_[stream];
  s.completed = s.submitted;
}

void FakeDevice::complete_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& entry : streams_) entry.second.completed = entry.second.submitted;
}

void FakeDevice::set_logging(bool on) {
  std::lock_guard<std::mutex> lock(mutex_);
  logging_ = on;
}

std::vector<std::pair<Call, flb_cuda_status>> FakeDevice::take_log() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<Call, flb_cuda_status>> out;
  out.swap(log_);
  return out;
}

uint64_t FakeDevice::calls(Call c) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return calls_[int(c)];
}

uint64_t FakeDevice::failures(Call c) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failures_[int(c)];
}

void FakeDevice::reset_counts() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::fill(std::begin(calls_), std::end(calls_), 0);
  std::fill(std::begin(failures_), std::end(failures_), 0);
  injections_.clear();  // their call numbers counted from the old counts
}

size_t FakeDevice::used_bytes(int index) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return devices_.at(size_t(index)).used;
}

size_t FakeDevice::mapped_bytes(int index) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return devices_.at(size_t(index)).mapped;
}

size_t FakeDevice::reserved_va_bytes(int index) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return devices_.at(size_t(index)).reserved_va;
}

size_t FakeDevice::live_allocations(int index) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return devices_.at(size_t(index)).allocations.size();
}

size_t FakeDevice::live_events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_.size();
}

size_t FakeDevice::pending_events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const Event* e : events_) n += event_done(*e) ? 0 : 1;
  return n;
}

// ---------------------------------------------------------------------------
// Helpers (called with mutex_ held)

flb_cuda_status FakeDevice::enter(Call c) {
  uint64_t n = ++calls_[int(c)];
  if (logging_) log_.emplace_back(c, FLB_CUDA_OK);
  for (const Injection& inj : injections_) {
    if (inj.call == c && inj.first <= n && n <= inj.last) {
      return error(c, inj.status,
                   inj.status == FLB_CUDA_OUT_OF_MEMORY ? "out of memory (injected)"
                                                        : "unspecified launch failure (injected)");
    }
  }
  return FLB_CUDA_OK;
}

flb_cuda_status FakeDevice::error(Call c, flb_cuda_status status, const char* message) {
  ++failures_[int(c)];
  if (logging_ && !log_.empty()) log_.back().second = status;  // this call's entry
  last_error_message = std::string("fakecuda ") + call_name(c) + ": " + message;
  return status;
}

FakeDevice::Device* FakeDevice::device(int index) {
  if (index < 0 || index >= int(devices_.size())) return nullptr;
  return &devices_[size_t(index)];
}

size_t FakeDevice::round_up_host(size_t n) {
  return (n + host_page() - 1) / host_page() * host_page();
}

FakeDevice::Reservation* FakeDevice::granules(Call c, Device& d, void* addr, size_t size,
                                              size_t* first, size_t* count) {
  const size_t g = options_.granularity;
  char* a = static_cast<char*>(addr);
  auto it = d.reservations.upper_bound(a);
  if (it == d.reservations.begin()) {
    error(c, FLB_CUDA_ERROR, "address outside every reserved range");
    return nullptr;
  }
  --it;
  char* base = it->first;
  Reservation& r = it->second;
  size_t offset = size_t(a - base);
  if (size == 0 || offset % g != 0 || size % g != 0) {
    error(c, FLB_CUDA_ERROR, "address or size not a multiple of the granularity");
    return nullptr;
  }
  if (offset >= r.size || size > r.size - offset) {
    error(c, FLB_CUDA_ERROR, "range outside the reserved range");
    return nullptr;
  }
  *first = offset / g;
  *count = size / g;
  return &r;
}

bool FakeDevice::event_done(const Event& e) const {
  if (e.seq == 0) return true;  // never recorded: complete, as in CUDA
  auto it = streams_.find(e.stream);
  return it != streams_.end() && it->second.completed >= e.seq;
}

// ---------------------------------------------------------------------------
// The table's functions

flb_cuda_status FakeDevice::malloc(int index, size_t size, void** ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (flb_cuda_status s = enter(Call::kMalloc)) return s;
  Device* d = device(index);
  if (d == nullptr) return error(Call::kMalloc, FLB_CUDA_ERROR, "invalid device ordinal");
  if (size == 0) {
    *ptr = nullptr;
    return FLB_CUDA_OK;
  }
  if (size > options_.total_bytes - d->used) {
    return error(Call::kMalloc, FLB_CUDA_OUT_OF_MEMORY, "out of memory");
  }
  void* p = map_inaccessible(round_up_host(size));
  if (p == nullptr) return error(Call::kMalloc, FLB_CUDA_OUT_OF_MEMORY, "host mmap failed");
  d->allocations.emplace(p, size);
  d->used += size;
  *ptr = p;
  return FLB_CUDA_OK;
}

flb_cuda_status FakeDevice::free(int index, void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (flb_cuda_status s = enter(Call::kFree)) return s;
  Device* d = device(index);
  if (d == nullptr) return error(Call::kFree, FLB_CUDA_ERROR, "invalid device ordinal");
  if (ptr == nullptr) return FLB_CUDA_OK;
  auto it = d->allocations.find(ptr);
  if (it == d->allocations.end())
    return error(Call::kFree, FLB_CUDA_ERROR, "invalid device pointer");
  munmap(ptr, round_up_host(it->second));
  d->used -= it->second;
  d->allocations.erase(it);
  return FLB_CUDA_OK;
}

flb_cuda_status FakeDevice::mem_get_info(int index, size_t* free_bytes, size_t* total_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (flb_cuda_status s = enter(Call::kMemGetInfo)) return s;
  Device* d = device(index);
  if (d == nullptr) return error(Call::kMemGetInfo, FLB_CUDA_ERROR, "invalid device ordinal");
  *free_bytes = options_.total_bytes - d->used;
  *total_bytes = options_.total_bytes;
  return FLB_CUDA_OK;
}

flb_cuda_status FakeDevice::event_create(int index, void** event) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (flb_cuda_status s = enter(Call::kEventCreate)) return s;
  if (device(index) == nullptr) {
    return error(Call::kEventCreate, FLB_CUDA_ERROR, "invalid device ordinal");
  }
  Event* e = new Event();
  e->device = index;
  events_.insert(e);
  *event = e;
  return FLB_CUDA_OK;
}

flb_cuda_status FakeDevice::event_destroy(int index, void* event) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (flb_cuda_status s = enter(Call::kEventDestroy)) return s;
  Event* e = static_cast<Event*>(event);
  if (events_.erase(e) == 0) return error(Call::kEventDestroy, FLB_CUDA_ERROR, "invalid event");
  if (e->device != index) {
    events_.insert(e);
    return error(Call::kEventDestroy, FLB_CUDA_ERROR, "event of another device");
  }
  delete e;
  return FLB_CUDA_OK;
}

flb_cuda_status FakeDevice::event_record(void* event, void* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (flb_cuda_status s = enter(Call::kEventRecord)) return s;
  Event* e = static_cast<Event*>(event);
  if (events_.count(e) == 0) return error(Call::kEventRecord, FLB_CUDA_ERROR, "invalid event");
  Stream& s = streams_[stream];
  e->stream = stream;
  e->seq = ++s.submitted;
  return FLB_CUDA_OK;
}

flb_cuda_status FakeDevice::event_query(void* event) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (flb_cuda_status s = enter(Call::kEventQuery)) return s;
  Event* e = static_cast<Event*>(event);
  if (events_.count(e) == 0) return error(Call::kEventQuery, FLB_CUDA_ERROR, "invalid event");
  if (event_done(*e)) return FLB_CUDA_OK;
  if (logging_ && !log_.empty()) log_.back().second = FLB_CUDA_NOT_READY;
  return FLB_CUDA_NOT_READY;
}

flb_cuda_status FakeDevice::event_synchronize(void* event) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (flb_cuda_status s = enter(Call::kEventSynchronize)) return s;
  Event* e = static_cast<Event*>(event);
  if (events_.count(e) == 0) return error(Call::kEventSynchronize, FLB_CUDA_ERROR, "invalid event");
  if (e->seq != 0) {  // the host waits: the stream gets that far
    Stream& s = streams_[e->stream];
    s.completed = std::max(s.completed, e->seq);
  }
  return FLB_CUDA_OK;
}

flb_cuda_status FakeDevice::vm_granularity(int index, size_t* granularity) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (flb_cuda_status s = enter(Call::kVmGranularity)) return s;
  if (device(index) == nullptr) {
    return error(Call::kVmGranularity, FLB_CUDA_ERROR, "invalid device ordinal");
  }
  *granularity = options_.granularity;
  return FLB_CUDA_OK;
}

flb_cuda_status FakeDevice::reserve_va(int index, size_t size, void** base) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (flb_cuda_status s = enter(Call::kReserveVa)) return s;
  Device* d = device(index);
  if (d == nullptr) return error(Call::kReserveVa, FLB_CUDA_ERROR, "invalid device ordinal");
  const size_t g = options_.granularity;
  if (size == 0 || size % g != 0) {
    return error(Call::kReserveVa, FLB_CUDA_ERROR, "size not a multiple of the granularity");
  }
  // Over-reserve by a granule to align the start, then give the slack back.
  char* raw = static_cast<char*>(map_inaccessible(size + g));
  if (raw == nullptr) return error(Call::kReserveVa, FLB_CUDA_OUT_OF_MEMORY, "host mmap failed");
  char* aligned = reinterpret_cast<char*>((uintptr_t(raw) + g - 1) / g * g);
  if (aligned > raw) munmap(raw, size_t(aligned - raw));
  size_t tail = size_t(raw + size + g - (aligned + size));
  if (tail > 0) munmap(aligned + size, tail);
  Reservation r;
  r.size = size;
  r.mapped.assign(size / g, false);
  d->reservations.emplace(aligned, std::move(r));
  d->reserved_va += size;
  *base = aligned;
  return FLB_CUDA_OK;
}

flb_cuda_status FakeDevice::release_va(int index, void* base, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (flb_cuda_status s = enter(Call::kReleaseVa)) return s;
  Device* d = device(index);
  if (d == nullptr) return error(Call::kReleaseVa, FLB_CUDA_ERROR, "invalid device ordinal");
  auto it = d->reservations.find(static_cast<char*>(base));
  if (it == d->reservations.end() || it->second.size != size) {
    return error(Call::kReleaseVa, FLB_CUDA_ERROR, "not a reserved range");
  }
  for (bool m : it->second.mapped) {
    if (m) return error(Call::kReleaseVa, FLB_CUDA_ERROR, "range still has mapped memory");
  }
  munmap(base, size);
  d->reserved_va -= size;
  d->reservations.erase(it);
  return FLB_CUDA_OK;
}

flb_cuda_status FakeDevice::map(int index, void* addr, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (flb_cuda_status s = enter(Call::kMap)) return s;
  Device* d = device(index);
  if (d == nullptr) return error(Call::kMap, FLB_CUDA_ERROR, "invalid device ordinal");
  size_t first = 0, count = 0;
  Reservation* r = granules(Call::kMap, *d, addr, size, &first, &count);
  if (r == nullptr) return FLB_CUDA_ERROR;
  for (size_t i = first; i < first + count; ++i) {
    if (r->mapped[i]) return error(Call::kMap, FLB_CUDA_ERROR, "range already mapped");
  }
  if (size > options_.total_bytes - d->used) {
    return error(Call::kMap, FLB_CUDA_OUT_OF_MEMORY, "out of memory");
  }
  for (size_t i = first; i < first + count; ++i) r->mapped[i] = true;
  d->used += size;
  d->mapped += size;
  return FLB_CUDA_OK;
}

flb_cuda_status FakeDevice::unmap(int index, void* addr, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (flb_cuda_status s = enter(Call::kUnmap)) return s;
  Device* d = device(index);
  if (d == nullptr) return error(Call::kUnmap, FLB_CUDA_ERROR, "invalid device ordinal");
  size_t first = 0, count = 0;
  Reservation* r = granules(Call::kUnmap, *d, addr, size, &first, &count);
  if (r == nullptr) return FLB_CUDA_ERROR;
  for (size_t i = first; i < first + count; ++i) {
    if (!r->mapped[i]) return error(Call::kUnmap, FLB_CUDA_ERROR, "range not mapped");
  }
  for (size_t i = first; i < first + count; ++i) r->mapped[i] = false;
  d->used -= size;
  d->mapped -= size;
  return FLB_CUDA_OK;
}

}  // namespace flambeau::fakecuda
