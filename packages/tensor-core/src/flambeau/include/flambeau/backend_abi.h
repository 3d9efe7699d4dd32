/* flambeau backend ABI: the C contract between flambeau's core and a device
 * backend shipped as a separate package (docs/design/backends.rst).
 *
 * Only C types cross: the core exports one flb_core_api table from its
 * extension as the capsule FLB_ABI_CAPSULE; a backend fills one flb_backend
 * table and hands it to core->register_backend. Versioning:
 *   - FLB_ABI_MAJOR changes only when an existing entry changes meaning; a
 *     backend built for another major refuses to load.
 *   - FLB_ABI_MINOR grows when entries are appended to a struct. Every struct
 *     starts with its size; a reader touches a field only when the size it was
 *     given covers it, so old backends run on newer cores and the reverse.
 */
#ifndef FLAMBEAU_BACKEND_ABI_H_
#define FLAMBEAU_BACKEND_ABI_H_

#include <stddef.h>
#include <stdint.h>

#include "backend_kernels.h" /* the kernels and their argument structs */

#ifdef __cplusplus
extern "C" {
#endif

/* A backend may define FLB_ABI_MAJOR itself only to test the mismatch path. */
#ifndef FLB_ABI_MAJOR
#define FLB_ABI_MAJOR 1
#endif
#define FLB_ABI_MINOR 2
#define FLB_ABI_CAPSULE "flambeau._C._backend_abi"

/* Whether a struct of size `size` holds `field` (appended fields of a newer minor). */
#define FLB_HAS_FIELD(ptr, type, field) \
  ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* Element types, numbered as flambeau's dtypes. */
typedef enum flb_dtype {
  FLB_BOOL = 0,
  FLB_UINT8 = 1,
  FLB_INT8 = 2,
  FLB_INT16 = 3,
  FLB_INT32 = 4,
  FLB_INT64 = 5,
  FLB_FLOAT16 = 6,
  FLB_BFLOAT16 = 7,
  FLB_FLOAT32 = 8,
  FLB_FLOAT64 = 9,
  FLB_COMPLEX64 = 10,
  FLB_COMPLEX128 = 11,
  FLB_ANY_DTYPE = -1 /* register_kernel: the kernel takes every dtype */
} flb_dtype;

/* Results of every hook. On failure a hook calls core->set_error first. */
typedef enum flb_status {
  FLB_OK = 0,
  FLB_ERROR = 1,            /* -> RuntimeError */
  FLB_NOT_IMPLEMENTED = 2,  /* -> NotImplementedError */
  FLB_OUT_OF_MEMORY = 3,    /* -> RuntimeError "out of memory" */
  FLB_INVALID_ARGUMENT = 4, /* -> ValueError */
  FLB_VERSION_MISMATCH = 5  /* -> ImportError */
} flb_status;

/* A strided view. data points at the first element (storage offset applied);
 * sizes and strides (in elements) have ndim entries; device_index is the
 * ordinal on the backend's device type, or -1 for host (CPU) memory. An absent
 * tensor (an optional argument not given; ABI 1.2) has data NULL, ndim -1. */
typedef struct flb_tensor {
  size_t struct_size;
  void* data;
  int32_t dtype;
  int32_t ndim;
  const int64_t* sizes;
  const int64_t* strides;
  int32_t device_index;
} flb_tensor;

typedef enum flb_scalar_kind {
  FLB_SCALAR_BOOL,
  FLB_SCALAR_INT,
  FLB_SCALAR_FLOAT,
  FLB_SCALAR_COMPLEX
} flb_scalar_kind;

typedef struct flb_scalar {
  int32_t kind;      /* flb_scalar_kind */
  int64_t i;         /* bool and int */
  double real, imag; /* float (imag 0) and complex */
} flb_scalar;

/* Opaque handles. A stream or event is whatever the backend says it is
 * (cudaStream_t for CUDA); the core only passes it back. */
typedef void* flb_stream;
typedef void* flb_event;
typedef struct flb_generator flb_generator; /* the core's counter-based Philox generator */

/* One kernel invocation. The arguments are those of the core's kernel for the
 * operator, in order, sorted by kind: tensors (outputs first), scalars, and
 * integers (dims, int64 and bool arguments). The per-operator conventions are
 * in docs/design/backends.rst. */
typedef struct flb_kernel_call {
  size_t struct_size;
  const char* op;
  int32_t device_index;
  flb_stream stream;
  int32_t n_tensors;
  const flb_tensor* tensors;
  int32_t n_scalars;
  const flb_scalar* scalars;
  int32_t n_ints;
  const int64_t* ints;
  flb_generator* generator; /* random operators only, else NULL */
  /* ABI 1.2. The kernel's argument structs, in order, each of the C type that
   * flambeau/backend_kernels.h gives (flb_pool_geometry, ...). */
  int32_t n_structs;
  const void* const* structs;
  /* ABI 1.2. Where a kernel that returns an integer writes it, else NULL. */
  int64_t* int_result;
} flb_kernel_call;

typedef flb_status (*flb_kernel_fn)(void* kernel_ctx, const flb_kernel_call* call);

typedef struct flb_allocator_stats {
  size_t struct_size;
  int64_t allocated_bytes;      /* in live blocks */
  int64_t reserved_bytes;       /* held from the device, cached blocks included */
  int64_t peak_allocated_bytes; /* since the last reset_peak_stats */
  int64_t peak_reserved_bytes;
  int64_t allocations; /* live blocks */
} flb_allocator_stats;

/* The table a backend fills. Every hook gets `self` (the backend's own state)
 * first. Hooks marked optional may be NULL. */
typedef struct flb_backend {
  size_t struct_size; /* sizeof(flb_backend) as the backend compiled it */
  uint32_t abi_major; /* FLB_ABI_MAJOR the backend compiled against */
  uint32_t abi_minor;
  const char* name;    /* device type, e.g. "cuda"; as its entry point is named */
  const char* version; /* the backend distribution's version, for messages */
  void* self;

  /* Devices. */
  int32_t (*device_count)(void* self);
  int32_t (*current_device)(void* self);
  flb_status (*set_device)(void* self, int32_t index);

  /* Device memory. allocate returns the block in *ptr and a token in *ctx
   * that free gets back (e.g. the block's size or its allocator entry). A
   * block is freed on the thread that drops the last tensor using it; stream
   * ordering is the backend's business (as CUDA's caching allocator does it). */
  flb_status (*allocate)(void* self, int32_t device_index, size_t nbytes, void** ptr, void** ctx);
  void (*free)(void* self, void* ptr, void* ctx);
  flb_status (*allocator_stats)(void* self, int32_t device_index, flb_allocator_stats* out);
  flb_status (*reset_peak_stats)(void* self, int32_t device_index);
  flb_status (*empty_cache)(void* self, int32_t device_index);

  /* Copies of contiguous bytes. Blocking unless non_blocking is set, in which
   * case they are ordered on `stream` (host memory should then be pinned). */
  flb_status (*copy_from_host)(void* self, void* dst, const void* src, size_t nbytes,
                               int32_t device_index, flb_stream stream, int32_t non_blocking);
  flb_status (*copy_to_host)(void* self, void* dst, const void* src, size_t nbytes,
                             int32_t device_index, flb_stream stream, int32_t non_blocking);
  flb_status (*copy_on_device)(void* self, void* dst, const void* src, size_t nbytes,
                               int32_t device_index, flb_stream stream);

  /* Streams and events (optional for backends without asynchrony). */
  flb_stream (*current_stream)(void* self, int32_t device_index);
  flb_status (*synchronize)(void* self, int32_t device_index);
  flb_status (*event_create)(void* self, int32_t device_index, flb_event* out);
  flb_status (*event_destroy)(void* self, flb_event event);
  flb_status (*event_record)(void* self, flb_event event, flb_stream stream);
  flb_status (*stream_wait_event)(void* self, flb_stream stream, flb_event event);
  flb_status (*event_synchronize)(void* self, flb_event event);

  /* Page-locked host memory for asynchronous copies (optional). */
  flb_status (*host_allocate)(void* self, size_t nbytes, void** ptr, void** ctx);
  void (*host_free)(void* self, void* ptr, void* ctx);

  /* Sharing a block with another process (optional): export writes at most
   * *size bytes of handle and sets *size; import maps it in that process. */
  flb_status (*ipc_export)(void* self, void* ptr, void* ctx, void* handle, size_t* size);
  flb_status (*ipc_import)(void* self, int32_t device_index, const void* handle, size_t size,
                           void** ptr, void** ctx);
} flb_backend;

/* The table the core exports. */
typedef struct flb_core_api {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char* core_version; /* flambeau-tensor-core's version */

  /* Registers a backend (copied by the core; self must live for the whole
   * process). Returns its device type id, or -1 after set_error. */
  int32_t (*register_backend)(const flb_backend* backend);
  /* A kernel for operator `op` (the core's name, e.g. "add") on device type
   * `device_type`, for tensors of `dtype` (the first tensor argument's), or
   * FLB_ANY_DTYPE. Later registrations replace earlier ones. */
  flb_status (*register_kernel)(int32_t device_type, const char* op, int32_t dtype,
                                flb_kernel_fn fn, void* kernel_ctx);
  /* Records the message of a failing hook (per thread; the core raises it). */
  void (*set_error)(flb_status status, const char* message);
  /* The message of the last failure on this thread (register_backend's, say). */
  const char* (*last_error)(void);
  /* Counter-based random numbers: reserves `blocks` Philox counters of
   * generator g (4 x 32 bits each) and returns the seed and the first one. */
  void (*generator_reserve)(flb_generator* g, uint64_t blocks, uint64_t* seed, uint64_t* offset);

  /* ABI 1.1. Declares that the backend's kernels for operator `op` (a name of
   * the operator table, e.g. "index_add") are not deterministic, so calls of it
   * on `device_type` raise (or warn) under flambeau.use_deterministic_algorithms
   * (True). Operators the table already marks for the device type need no
   * declaration (docs/design/backends.rst). */
  flb_status (*declare_nondeterministic)(int32_t device_type, const char* op);
} flb_core_api;

#ifdef __cplusplus
}
#endif

#endif /* FLAMBEAU_BACKEND_ABI_H_ */
