#include "backend/hooks.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <exception>
#include <string>

#include "allocator/errors.h"
#include "backend/state.h"
#include "runtime/cuda_error.h"
#include "runtime/host_allocator.h"
#include "runtime/lazy_init.h"
#include "runtime/streams.h"

namespace flambeau::cuda::backend {

namespace {

#ifndef FLAMBEAU_CUDA_VERSION
#define FLAMBEAU_CUDA_VERSION "0.1.0"
#endif

// FLB_OK, or the status for a failing cudart call with "call: <cudart's words>".
flb_status cuda_check(cudaError_t err, const char* call) {
  if (err == cudaSuccess) return FLB_OK;
  (void)cudaGetLastError();
  return fail(err == cudaErrorMemoryAllocation ? FLB_OUT_OF_MEMORY : FLB_ERROR,
              std::string("CUDA error: ") + cudaGetErrorString(err) + " (" + call + ")");
}

// Runs body() under the device guard, turning C++ exceptions into statuses.
template <class F>
flb_status on_device(int32_t device, F&& body) {
  if (flb_status s = check_device(device); s != FLB_OK) return s;
  try {
    runtime::DeviceGuard guard(device);
    if (!guard.ok()) return cuda_check(cudaSetDevice(device), "cudaSetDevice");
    return body();
  } catch (const OutOfMemoryError& e) {
    return fail(FLB_OUT_OF_MEMORY, e.what());
  } catch (const std::exception& e) {
    return fail(FLB_ERROR, e.what());
  }
}

cudaStream_t as_stream(flb_stream s) { return static_cast<cudaStream_t>(s); }

// ---- devices ------------------------------------------------------------------------

int32_t device_count(void*) { return runtime::probe().device_count; }

int32_t current_device(void*) {
  int device = 0;
  if (runtime::is_initialized() && cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    device = 0;
  }
  return device;
}

flb_status set_device(void*, int32_t index) {
  if (flb_status s = check_device(index); s != FLB_OK) return s;
  return cuda_check(cudaSetDevice(index), "cudaSetDevice");
}

// ---- device memory --------------------------------------------------------------------

flb_status allocate(void*, int32_t device, size_t nbytes, void** ptr, void** ctx) {
  *ctx = nullptr;
  return on_device(device, [&] {
    *ptr = allocator().malloc(device, nbytes, runtime::current_stream(device));
    return FLB_OK;
  });
}

void free_block(void*, void* ptr, void* ctx) {
  // A forked child must not call into CUDA; the parent's blocks are not its own.
  if (ptr == nullptr || runtime::in_bad_fork()) return;
  if (ctx != nullptr) return ipc_release(ctx);  // a block another process shared
  try {
    allocator().free(ptr);
  } catch (const std::exception&) {
    // free has no way to report; the allocator only throws for a pointer it
    // never handed out, which the core cannot pass.
  }
}

flb_status allocator_stats(void*, int32_t device, flb_allocator_stats* out) {
  flb_allocator_stats s{};
  if (CachingAllocator* a = allocator_if_created()) {
    if (device < 0 || device >= a->device_count()) return check_device(device);
    DeviceStats st = a->memory_stats(device);
    s.allocated_bytes = st.allocated_bytes.all().current;
    s.reserved_bytes = st.reserved_bytes.all().current;
    s.peak_allocated_bytes = st.allocated_bytes.all().peak;
    s.peak_reserved_bytes = st.reserved_bytes.all().peak;
    s.allocations = st.allocation.all().current;
  }
  // Only the fields the caller's struct has (it may be an older minor's).
  size_t caller_size = out->struct_size;
  size_t n = caller_size < sizeof s ? caller_size : sizeof s;
  std::memcpy(out, &s, n);
  out->struct_size = caller_size;
  return FLB_OK;
}

flb_status reset_peak_stats(void*, int32_t device) {
  if (CachingAllocator* a = allocator_if_created()) {
    if (device < 0 || device >= a->device_count()) return check_device(device);
    a->reset_peak_memory_stats(device);
  }
  return FLB_OK;
}

flb_status empty_cache(void*, int32_t) {
  if (runtime::in_bad_fork()) return FLB_OK;
  try {
    if (CachingAllocator* a = allocator_if_created()) a->empty_cache();
    runtime::host_allocator().empty_cache();
  } catch (const std::exception& e) {
    return fail(FLB_ERROR, e.what());
  }
  return FLB_OK;
}

// ---- copies: ordered on `stream`; blocking ones wait for it --------------------------

flb_status finish_copy(cudaStream_t stream, const void* host, int32_t non_blocking) {
  // An asynchronous copy from or to pinned memory stays in flight; the pinned
  // block is then not reused before the stream is past it. Pageable memory
  // cannot be read asynchronously, so such a copy completes here.
  if (non_blocking && runtime::host_allocator().record_stream(host, stream)) return FLB_OK;
  return cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

flb_status copy_from_host(void*, void* dst, const void* src, size_t n, int32_t device, flb_stream s,
                          int32_t non_blocking) {
  return on_device(device, [&] {
    cudaStream_t stream = as_stream(s);
    if (flb_status st = cuda_check(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, stream),
                                   "cudaMemcpyAsync");
        st != FLB_OK)
      return st;
    return finish_copy(stream, src, non_blocking);
  });
}

flb_status copy_to_host(void*, void* dst, const void* src, size_t n, int32_t device, flb_stream s,
                        int32_t non_blocking) {
  return on_device(device, [&] {
    cudaStream_t stream = as_stream(s);
    if (flb_status st = cuda_check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, stream),
                                   "cudaMemcpyAsync");
        st != FLB_OK)
      return st;
    return finish_copy(stream, dst, non_blocking);
  });
}

flb_status copy_on_device(void*, void* dst, const void* src, size_t n, int32_t device,
                          flb_stream s) {
  return on_device(device, [&] {
    return cuda_check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, as_stream(s)),
                      "cudaMemcpyAsync");
  });
}

// ---- streams and events -------------------------------------------------------------

flb_stream current_stream(void*, int32_t device) { return runtime::current_stream(device); }

flb_status synchronize(void*, int32_t device) {
  return on_device(device,
                   [] { return cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); });
}

flb_status event_create(void*, int32_t device, flb_event* out) {
  return on_device(device, [&] {
    return cuda_check(
        cudaEventCreateWithFlags(reinterpret_cast<cudaEvent_t*>(out), cudaEventDisableTiming),
        "cudaEventCreateWithFlags");
  });
}

flb_status event_destroy(void*, flb_event e) {
  if (runtime::in_bad_fork()) return FLB_OK;
  return cuda_check(cudaEventDestroy(static_cast<cudaEvent_t>(e)), "cudaEventDestroy");
}

flb_status event_record(void*, flb_event e, flb_stream s) {
  if (flb_status st = ensure_initialized(); st != FLB_OK) return st;
  return cuda_check(cudaEventRecord(static_cast<cudaEvent_t>(e), as_stream(s)), "cudaEventRecord");
}

flb_status stream_wait_event(void*, flb_stream s, flb_event e) {
  if (flb_status st = ensure_initialized(); st != FLB_OK) return st;
  return cuda_check(cudaStreamWaitEvent(as_stream(s), static_cast<cudaEvent_t>(e), 0),
                    "cudaStreamWaitEvent");
}

flb_status event_synchronize(void*, flb_event e) {
  if (flb_status st = ensure_initialized(); st != FLB_OK) return st;
  return cuda_check(cudaEventSynchronize(static_cast<cudaEvent_t>(e)), "cudaEventSynchronize");
}

// ---- pinned host memory -------------------------------------------------------------

flb_status host_allocate(void*, size_t nbytes, void** ptr, void** ctx) {
  if (flb_status s = ensure_initialized(); s != FLB_OK) return s;
  runtime::HostAllocator::Block* block = nullptr;
  if (flb_status s =
          cuda_check(runtime::host_allocator().allocate(nbytes, &block), "cudaHostAlloc");
      s != FLB_OK)
    return s;
  *ptr = block ? block->ptr : nullptr;
  *ctx = block;
  return FLB_OK;
}

void host_free(void*, void*, void* ctx) {
  if (runtime::in_bad_fork()) return;
  runtime::host_allocator().free(static_cast<runtime::HostAllocator::Block*>(ctx));
}

flb_backend make_table() {
  flb_backend b{};
  b.struct_size = sizeof b;
  b.abi_major = FLB_ABI_MAJOR;
  b.abi_minor = FLB_ABI_MINOR;
  b.name = "cuda";
  b.version = FLAMBEAU_CUDA_VERSION;
  b.self = nullptr;
  b.device_count = device_count;
  b.current_device = current_device;
  b.set_device = set_device;
  b.allocate = allocate;
  b.free = free_block;
  b.allocator_stats = allocator_stats;
  b.reset_peak_stats = reset_peak_stats;
  b.empty_cache = empty_cache;
  b.copy_from_host = copy_from_host;
  b.copy_to_host = copy_to_host;
  b.copy_on_device = copy_on_device;
  b.current_stream = current_stream;
  b.synchronize = synchronize;
  b.event_create = event_create;
  b.event_destroy = event_destroy;
  b.event_record = event_record;
  b.stream_wait_event = stream_wait_event;
  b.event_synchronize = event_synchronize;
  b.host_allocate = host_allocate;
  b.host_free = host_free;
  b.ipc_export = ipc_export;
  b.ipc_import = ipc_import;
  return b;
}

}  // namespace

const flb_backend& cuda_backend_table() {
  static const flb_backend table = make_table();
  return table;
}

}  // namespace flambeau::cuda::backend
