/* The device functions the caching allocator calls, as one C table.
 *
 * Production binds it to cudart and the driver's entry points (csrc/runtime/); the tests bind
 * it to fakecuda (csrc/fakecuda/). Nothing here includes a CUDA header: streams
 * and events are opaque pointers (cudaStream_t / cudaEvent_t in production).
 *
 * Conventions:
 *   - The table starts with its size. A reader touches a field only when
 *     struct_size covers it (FLB_CUDA_API_HAS), so fields can be appended.
 *   - Every function gets `self` (the binding's state) first and returns an
 *     flb_cuda_status. On FLB_CUDA_ERROR / FLB_CUDA_OUT_OF_MEMORY the binding
 *     keeps a message for the calling thread that last_error returns (e.g.
 *     cudaGetErrorString of the failing call).
 *   - Functions may be called from any thread; the allocator serialises calls
 *     for one device under that device's mutex.
 */
#ifndef FLAMBEAU_CUDA_DEVICE_API_H_
#define FLAMBEAU_CUDA_DEVICE_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLB_CUDA_DEVICE_API_VERSION 1

/* Whether a table of size api->struct_size holds `field`. */
#define FLB_CUDA_API_HAS(api, field) \
  ((api)->struct_size >=             \
   offsetof(flb_cuda_device_api, field) + sizeof(((flb_cuda_device_api*)0)->field))

typedef enum flb_cuda_status {
  FLB_CUDA_OK = 0,
  FLB_CUDA_OUT_OF_MEMORY = 1, /* cudaErrorMemoryAllocation / CUDA_ERROR_OUT_OF_MEMORY */
  FLB_CUDA_NOT_READY = 2,     /* event_query: the event has not completed yet */
  FLB_CUDA_ERROR = 3          /* anything else; last_error says what */
} flb_cuda_status;

typedef struct flb_cuda_device_api {
  size_t struct_size; /* sizeof(flb_cuda_device_api) as the binding compiled it */
  void* self;

  /* The message of the last failing call on the calling thread. */
  const char* (*last_error)(void* self);

  /* Device memory (cudaMalloc / cudaFree on `device`). */
  flb_cuda_status (*malloc)(void* self, int32_t device, size_t size, void** ptr);
  flb_cuda_status (*free)(void* self, int32_t device, void* ptr);
  /* cudaMemGetInfo on `device`. */
  flb_cuda_status (*mem_get_info)(void* self, int32_t device, size_t* free_bytes,
                                  size_t* total_bytes);

  /* Events (created with timing disabled). record captures the work queued on
   * `stream` so far; query returns FLB_CUDA_OK once that work is done and
   * FLB_CUDA_NOT_READY before; synchronize blocks the host until it is done. */
  flb_cuda_status (*event_create)(void* self, int32_t device, void** event);
  flb_cuda_status (*event_destroy)(void* self, int32_t device, void* event);
  flb_cuda_status (*event_record)(void* self, void* event, void* stream);
  flb_cuda_status (*event_query)(void* self, void* event);
  flb_cuda_status (*event_synchronize)(void* self, void* event);

  /* Virtual memory, for expandable segments: all five or none (NULL when the
   * device or driver lacks cuMemAddressReserve / cuMemCreate / cuMemMap).
   *   vm_granularity: the mapping granularity (cuMemGetAllocationGranularity);
   *     addresses and sizes given to map / unmap are multiples of it.
   *   reserve_va / release_va: a range of addresses with nothing behind it.
   *   map: backs [addr, addr + size) with new physical memory, readable and
   *     writable by `device`; all or nothing (on failure nothing stays mapped).
   *   unmap: releases the physical memory of [addr, addr + size), which may be
   *     any granularity-aligned part of what earlier maps covered (a binding
   *     over cuMemMap therefore keeps one physical handle per granule). */
  flb_cuda_status (*vm_granularity)(void* self, int32_t device, size_t* granularity);
  flb_cuda_status (*reserve_va)(void* self, int32_t device, size_t size, void** base);
  flb_cuda_status (*release_va)(void* self, int32_t device, void* base, size_t size);
  flb_cuda_status (*map)(void* self, int32_t device, void* addr, size_t size);
  flb_cuda_status (*unmap)(void* self, int32_t device, void* addr, size_t size);
} flb_cuda_device_api;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FLAMBEAU_CUDA_DEVICE_API_H_ */
