/* "testdev": a flambeau device backend written against flambeau/backend_abi.h
 * alone. Its memory is host memory, but kept in its own caching arena (blocks
 * freed go to a per-device cache until empty_cache), so allocator statistics
 * move as a GPU's would; copies are real memcpys; kernels are its own code.
 * Like a GPU's, its memory cannot be read by the host: blocks are mapped
 * PROT_NONE except while one of its own copies or kernels runs, so core code
 * that reads a device tensor's memory directly faults here instead of passing.
 * Compiled twice: as _testdev, and as _testdev_next with a bumped ABI major. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <flambeau/backend_abi.h>
#include <flambeau/backend_python.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NUM_DEVICES 2
#define ALIGN 256
#define CONCAT_(a, b) a##b
#define CONCAT(a, b) CONCAT_(a, b)
#define STR_(a) #a
#define STR(a) STR_(a)

static const flb_core_api* core;

/* ---- the arena: a list of blocks per device, reused first-fit ---------------- */

typedef struct block {
  struct block* next;
  void* ptr;
  size_t size;   /* what the statistics count: the request rounded to ALIGN */
  size_t mapped; /* whole pages: mprotect's unit */
  int in_use;
  int device;
} block;

typedef struct arena {
  pthread_mutex_t lock;
  block* blocks;
  flb_allocator_stats stats;
} arena;

static arena arenas[NUM_DEVICES];
static int current = 0;

/* ---- host access: open only inside the backend's own copies and kernels ---------- */

static pthread_mutex_t access_lock = PTHREAD_MUTEX_INITIALIZER;

static void protect_all(int prot) {
  for (int d = 0; d < NUM_DEVICES; ++d) {
    pthread_mutex_lock(&arenas[d].lock);
    for (block* b = arenas[d].blocks; b; b = b->next) mprotect(b->ptr, b->mapped, prot);
    pthread_mutex_unlock(&arenas[d].lock);
  }
}
static void open_memory(void) {
  pthread_mutex_lock(&access_lock);
  protect_all(PROT_READ | PROT_WRITE);
}
static void close_memory(void) {
  protect_all(PROT_NONE);
  pthread_mutex_unlock(&access_lock);
}
static size_t page_size(void) {
  static size_t p = 0;
  if (!p) p = (size_t)sysconf(_SC_PAGESIZE);
  return p;
}

static void add_peak(flb_allocator_stats* s) {
  if (s->allocated_bytes > s->peak_allocated_bytes) s->peak_allocated_bytes = s->allocated_bytes;
  if (s->reserved_bytes > s->peak_reserved_bytes) s->peak_reserved_bytes = s->reserved_bytes;
}

static flb_status td_allocate(void* self, int32_t device, size_t nbytes, void** ptr, void** ctx) {
  (void)self;
  if (device < 0 || device >= NUM_DEVICES) {
    core->set_error(FLB_INVALID_ARGUMENT, "no such testdev device");
    return FLB_INVALID_ARGUMENT;
  }
  size_t size = (nbytes + ALIGN - 1) / ALIGN * ALIGN;
  if (size == 0) size = ALIGN;
  size_t page = page_size(), mapped = (size + page - 1) / page * page;
  arena* a = &arenas[device];
  pthread_mutex_lock(&a->lock);
  block* found = NULL;
  for (block* b = a->blocks; b; b = b->next)
    if (!b->in_use && b->size >= size && (!found || b->size < found->size)) found = b;
  if (!found) {
    found = calloc(1, sizeof(block));
    if (found) {
      found->ptr = mmap(NULL, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (found->ptr == MAP_FAILED) found->ptr = NULL;
    }
    if (!found || !found->ptr) {
      free(found);
      pthread_mutex_unlock(&a->lock);
      core->set_error(FLB_OUT_OF_MEMORY, "testdev arena exhausted");
      return FLB_OUT_OF_MEMORY;
    }
    found->size = size;
    found->mapped = mapped;
    found->device = device;
    found->next = a->blocks;
    a->blocks = found;
    a->stats.reserved_bytes += (int64_t)size;
  }
  found->in_use = 1;
  a->stats.allocated_bytes += (int64_t)found->size;
  a->stats.allocations += 1;
  add_peak(&a->stats);
  pthread_mutex_unlock(&a->lock);
  *ptr = found->ptr;
  *ctx = found;
  return FLB_OK;
}

static void td_free(void* self, void* ptr, void* ctx) {
  (void)self;
  (void)ptr;
  block* b = ctx;
  arena* a = &arenas[b->device];
  pthread_mutex_lock(&a->lock);
  b->in_use = 0; /* cached until empty_cache */
  a->stats.allocated_bytes -= (int64_t)b->size;
  a->stats.allocations -= 1;
  pthread_mutex_unlock(&a->lock);
}

static flb_status td_stats(void* self, int32_t device, flb_allocator_stats* out) {
  (void)self;
  arena* a = &arenas[device];
  pthread_mutex_lock(&a->lock);
  size_t n = out->struct_size < sizeof(flb_allocator_stats) ? out->struct_size
                                                            : sizeof(flb_allocator_stats);
  size_t caller_size = out->struct_size;
  memcpy(out, &a->stats, n); /* only the fields the caller's struct has */
  out->struct_size = caller_size;
  pthread_mutex_unlock(&a->lock);
  return FLB_OK;
}

static flb_status td_reset_peak(void* self, int32_t device) {
  (void)self;
  arena* a = &arenas[device];
  pthread_mutex_lock(&a->lock);
  a->stats.peak_allocated_bytes = a->stats.allocated_bytes;
  a->stats.peak_reserved_bytes = a->stats.reserved_bytes;
  pthread_mutex_unlock(&a->lock);
  return FLB_OK;
}

static flb_status td_empty_cache(void* self, int32_t device) {
  (void)self;
  arena* a = &arenas[device];
  pthread_mutex_lock(&a->lock);
  block** link = &a->blocks;
  while (*link) {
    block* b = *link;
    if (b->in_use) {
      link = &b->next;
      continue;
    }
    *link = b->next;
    a->stats.reserved_bytes -= (int64_t)b->size;
    munmap(b->ptr, b->mapped);
    free(b);
  }
  pthread_mutex_unlock(&a->lock);
  return FLB_OK;
}

/* ---- devices and copies ---------------------------------------------------------- */

static int32_t td_device_count(void* self) {
  (void)self;
  return NUM_DEVICES;
}
static int32_t td_current_device(void* self) {
  (void)self;
  return current;
}
static flb_status td_set_device(void* self, int32_t index) {
  (void)self;
  if (index < 0 || index >= NUM_DEVICES) {
    core->set_error(FLB_INVALID_ARGUMENT, "invalid testdev device index");
    return FLB_INVALID_ARGUMENT;
  }
  current = index;
  return FLB_OK;
}

/* Host copies the core asked to run non_blocking (the tests read the count). */
static long non_blocking_copies = 0;

static flb_status td_copy_from_host(void* self, void* dst, const void* src, size_t n, int32_t dev,
                                    flb_stream s, int32_t non_blocking) {
  (void)self, (void)dev, (void)s;
  if (non_blocking) ++non_blocking_copies;
  open_memory();
  memcpy(dst, src, n);
  close_memory();
  return FLB_OK;
}
static flb_status td_copy_to_host(void* self, void* dst, const void* src, size_t n, int32_t dev,
                                  flb_stream s, int32_t non_blocking) {
  (void)self, (void)dev, (void)s;
  if (non_blocking) ++non_blocking_copies;
  open_memory();
  memcpy(dst, src, n);
  close_memory();
  return FLB_OK;
}
static flb_status td_copy_on_device(void* self, void* dst, const void* src, size_t n, int32_t dev,
                                    flb_stream s) {
  (void)self, (void)dev, (void)s;
  open_memory();
  memmove(dst, src, n);
  close_memory();
  return FLB_OK;
}

/* ---- kernels: strided loops over float32, float64, int32 and int64 ------------- */

static int supported(int32_t dtype) {
  return dtype == FLB_FLOAT32 || dtype == FLB_FLOAT64 || dtype == FLB_INT32 || dtype == FLB_INT64;
}
static int is_float(int32_t dtype) { return dtype == FLB_FLOAT32 || dtype == FLB_FLOAT64; }

/* Element `linear` (row-major over sizes) of t. */
static char* at(const flb_tensor* t, int64_t linear) {
  int64_t offset = 0;
  for (int d = t->ndim - 1; d >= 0; --d) {
    int64_t size = t->sizes[d];
    offset += (linear % size) * t->strides[d];
    linear /= size;
  }
  size_t item = t->dtype == FLB_FLOAT64 || t->dtype == FLB_INT64 ? 8 : t->dtype == FLB_BOOL ? 1 : 4;
  return (char*)t->data + offset * (int64_t)item;
}
static double get_f(const flb_tensor* t, int64_t i) {
  char* p = at(t, i);
  switch (t->dtype) {
    case FLB_FLOAT32:
      return *(float*)p;
    case FLB_FLOAT64:
      return *(double*)p;
    case FLB_INT32:
      return *(int32_t*)p;
    case FLB_BOOL:
      return *(uint8_t*)p != 0;
    default:
      return (double)*(int64_t*)p;
  }
}
static int64_t get_i(const flb_tensor* t, int64_t i) {
  char* p = at(t, i);
  switch (t->dtype) {
    case FLB_FLOAT32:
      return (int64_t)*(float*)p;
    case FLB_FLOAT64:
      return (int64_t)*(double*)p;
    case FLB_INT32:
      return *(int32_t*)p;
    case FLB_BOOL:
      return *(uint8_t*)p != 0;
    default:
      return *(int64_t*)p;
  }
}
static void set(const flb_tensor* t, int64_t i, double f, int64_t n) {
  char* p = at(t, i);
  switch (t->dtype) {
    case FLB_FLOAT32:
      *(float*)p = (float)f;
      break;
    case FLB_FLOAT64:
      *(double*)p = f;
      break;
    case FLB_INT32:
      *(int32_t*)p = (int32_t)n;
      break;
    default:
      *(int64_t*)p = n;
  }
}
static int64_t numel(const flb_tensor* t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; ++d) n *= t->sizes[d];
  return n;
}
static double scalar_f(const flb_scalar* s) {
  return s->kind == FLB_SCALAR_FLOAT || s->kind == FLB_SCALAR_COMPLEX ? s->real : (double)s->i;
}
static int64_t scalar_i(const flb_scalar* s) {
  return s->kind == FLB_SCALAR_FLOAT || s->kind == FLB_SCALAR_COMPLEX ? (int64_t)s->real : s->i;
}

static flb_status unsupported(const flb_kernel_call* c) {
  char msg[160];
  snprintf(msg, sizeof msg, "testdev kernel '%s' got a dtype it does not support", c->op);
  core->set_error(FLB_NOT_IMPLEMENTED, msg);
  return FLB_NOT_IMPLEMENTED;
}

/* add: out = a + alpha * b; mul: out = a * b. Inputs arrive broadcast to out's shape. */
static flb_status k_binary(void* ctx, const flb_kernel_call* c) {
  int is_add = ctx != NULL;
  const flb_tensor *out = &c->tensors[0], *a = &c->tensors[1], *b = &c->tensors[2];
  if (!supported(out->dtype) || !supported(a->dtype) || !supported(b->dtype)) return unsupported(c);
  int64_t n = numel(out);
  if (is_float(out->dtype)) {
    double alpha = is_add && c->n_scalars > 0 ? scalar_f(&c->scalars[0]) : 1.0;
    for (int64_t i = 0; i < n; ++i) {
      double x = get_f(a, i), y = get_f(b, i);
      set(out, i, is_add ? x + alpha * y : x * y, 0);
    }
  } else {
    int64_t alpha = is_add && c->n_scalars > 0 ? scalar_i(&c->scalars[0]) : 1;
    for (int64_t i = 0; i < n; ++i) {
      int64_t x = get_i(a, i), y = get_i(b, i);
      set(out, i, 0, is_add ? x + alpha * y : x * y);
    }
  }
  return FLB_OK;
}

/* sum: out has in's shape with the reduced dims (ints) kept as size 1. */
static flb_status k_sum(void* ctx, const flb_kernel_call* c) {
  (void)ctx;
  const flb_tensor *out = &c->tensors[0], *in = &c->tensors[1];
  if (!supported(out->dtype) || !supported(in->dtype)) return unsupported(c);
  int64_t n_out = numel(out), n_in = numel(in);
  int fl = is_float(out->dtype);
  for (int64_t o = 0; o < n_out; ++o) set(out, o, 0.0, 0);
  /* Each input element adds into the output element with its reduced coordinates at 0. */
  for (int64_t i = 0; i < n_in; ++i) {
    int64_t rest = i, o = 0, scale = 1;
    for (int d = in->ndim - 1; d >= 0; --d) {
      int64_t coord = rest % in->sizes[d];
      rest /= in->sizes[d];
      if (out->sizes[d] != 1) o += coord * scale;
      scale *= out->sizes[d];
    }
    if (fl)
      set(out, o, get_f(out, o) + get_f(in, i), 0);
    else
      set(out, o, 0, get_i(out, o) + get_i(in, i));
  }
  return FLB_OK;
}

/* bmm: out (B, M, N) = a (B, M, K) @ b (B, K, N). */
static flb_status k_bmm(void* ctx, const flb_kernel_call* c) {
  (void)ctx;
  const flb_tensor *out = &c->tensors[0], *a = &c->tensors[1], *b = &c->tensors[2];
  if (!is_float(out->dtype)) return unsupported(c);
  int64_t B = a->sizes[0], M = a->sizes[1], K = a->sizes[2], N = b->sizes[2];
  for (int64_t p = 0; p < B; ++p)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += get_f(a, (p * M + i) * K + k) * get_f(b, (p * K + k) * N + j);
        set(out, (p * M + i) * N + j, acc, 0);
      }
  return FLB_OK;
}

/* fill_: self = value. */
static flb_status k_fill(void* ctx, const flb_kernel_call* c) {
  (void)ctx;
  const flb_tensor* self = &c->tensors[0];
  if (!supported(self->dtype)) return unsupported(c);
  double f = scalar_f(&c->scalars[0]);
  int64_t v = scalar_i(&c->scalars[0]);
  int64_t n = numel(self);
  for (int64_t i = 0; i < n; ++i) set(self, i, f, v);
  return FLB_OK;
}

/* copy_ within the device: dst = src (same shape; src may be a broadcast view and
 * of another dtype). */
static flb_status k_copy(void* ctx, const flb_kernel_call* c) {
  (void)ctx;
  const flb_tensor *dst = &c->tensors[0], *src = &c->tensors[1];
  if (!supported(dst->dtype) || !supported(src->dtype)) return unsupported(c);
  int64_t n = numel(dst);
  for (int64_t i = 0; i < n; ++i) set(dst, i, get_f(src, i), get_i(src, i));
  return FLB_OK;
}

/* avg_pool (ABI 1.2, a kernel with an argument struct): out and input are
 * contiguous (planes, D, H, W); call->structs[0] is the flb_pool_geometry. Each
 * output averages its window clipped to the input; the divisor is the override,
 * else the window with padding (count_include_pad) or without. */
static flb_status k_avg_pool(void* ctx, const flb_kernel_call* c) {
  (void)ctx;
  if (c->n_structs != 1 || c->n_tensors != 2) {
    core->set_error(FLB_INVALID_ARGUMENT, "avg_pool: expected 2 tensors and a flb_pool_geometry");
    return FLB_INVALID_ARGUMENT;
  }
  const flb_pool_geometry* g = (const flb_pool_geometry*)c->structs[0];
  const flb_tensor *out = &c->tensors[0], *in = &c->tensors[1];
  if (!is_float(out->dtype)) return unsupported(c);
  const int64_t in_plane = g->in[0] * g->in[1] * g->in[2];
  const int64_t out_plane = g->out[0] * g->out[1] * g->out[2];
  for (int64_t p = 0; p < g->planes; ++p)
    for (int64_t o = 0; o < out_plane; ++o) {
      int64_t pos[3] = {o / (g->out[1] * g->out[2]), (o / g->out[2]) % g->out[1], o % g->out[2]};
      int64_t lo[3], hi[3], padded = 1, inside = 1;
      for (int i = 0; i < 3; ++i) {
        int64_t start = pos[i] * g->stride[i] - g->pad[i];
        int64_t end = start + g->kernel[i];
        if (end > g->in[i] + g->pad[i]) end = g->in[i] + g->pad[i];
        padded *= end - start;
        lo[i] = start < 0 ? 0 : start;
        hi[i] = end > g->in[i] ? g->in[i] : end;
        inside *= hi[i] > lo[i] ? hi[i] - lo[i] : 0;
      }
      double acc = 0;
      for (int64_t d = lo[0]; d < hi[0]; ++d)
        for (int64_t h = lo[1]; h < hi[1]; ++h)
          for (int64_t w = lo[2]; w < hi[2]; ++w)
            acc += get_f(in, p * in_plane + (d * g->in[1] + h) * g->in[2] + w);
      int64_t count = g->divisor ? g->divisor : g->count_include_pad ? padded : inside;
      set(out, p * out_plane + o, count ? acc / (double)count : 0.0, 0);
    }
  return FLB_OK;
}

/* ---- LU factorization and solve, unblocked (ABI 1.2 kernel table), float32/64 ----
 * The core hands each a batch of column-major work copies: a (B, n, m) holds B
 * matrices of m rows and n columns, element (i, j) of matrix b at [b][j][i]. Pivots
 * are 1-based row interchanges and info LAPACK's (0, or the failing column + 1),
 * both written here, on the device, for the core to read back. */
#define COLMAJOR(t, b, rows, cols, i, j) ((b) * (rows) * (cols) + (j) * (rows) + (i))

/* linalg_getrf: tensors [a, pivots, info]; LU with partial pivoting in place. */
static flb_status k_getrf(void* ctx, const flb_kernel_call* c) {
  (void)ctx;
  const flb_tensor *a = &c->tensors[0], *piv = &c->tensors[1], *info = &c->tensors[2];
  if (!is_float(a->dtype)) return unsupported(c);
  const int64_t B = a->sizes[0], n = a->sizes[1], m = a->sizes[2], k = m < n ? m : n;
  for (int64_t b = 0; b < B; ++b) {
#define E(i, j) COLMAJOR(a, b, m, n, i, j)
    int64_t failed = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t p = j;
      for (int64_t i = j + 1; i < m; ++i)
        if (fabs(get_f(a, E(i, j))) > fabs(get_f(a, E(p, j)))) p = i;
      set(piv, b * k + j, 0, p + 1);
      const double pivot = get_f(a, E(p, j));
      if (pivot == 0.0) {
        if (!failed) failed = j + 1;
        continue;
      }
      for (int64_t col = 0; col < n && p != j; ++col) {
        const double t = get_f(a, E(j, col));
        set(a, E(j, col), get_f(a, E(p, col)), 0);
        set(a, E(p, col), t, 0);
      }
      for (int64_t i = j + 1; i < m; ++i) set(a, E(i, j), get_f(a, E(i, j)) / pivot, 0);
      for (int64_t col = j + 1; col < n; ++col)
        for (int64_t i = j + 1; i < m; ++i)
          set(a, E(i, col), get_f(a, E(i, col)) - get_f(a, E(i, j)) * get_f(a, E(j, col)), 0);
    }
    set(info, b, 0, failed);
#undef E
  }
  return FLB_OK;
}

/* linalg_getrs: tensors [lu, pivots, rhs], ints [trans]: solves A x = rhs ('N') or
 * A^T x = rhs ('T', 'C' for real A) in place, A = P^T L U from getrf; rhs (B, k, n). */
static flb_status k_getrs(void* ctx, const flb_kernel_call* c) {
  (void)ctx;
  const flb_tensor *lu = &c->tensors[0], *piv = &c->tensors[1], *x = &c->tensors[2];
  if (!is_float(lu->dtype)) return unsupported(c);
  const int transpose = c->ints[0] != 'N';
  const int64_t B = lu->sizes[0], n = lu->sizes[1], k = x->sizes[1];
  for (int64_t b = 0; b < B; ++b)
    for (int64_t r = 0; r < k; ++r) {
#define L(i, j) get_f(lu, COLMAJOR(lu, b, n, n, i, j))
#define X(i) COLMAJOR(x, b, n, k, i, r)
#define SWAP(i)                                    \
  do {                                             \
    const int64_t q = get_i(piv, b * n + (i)) - 1; \
    const double t = get_f(x, X(i));               \
    set(x, X(i), get_f(x, X(q)), 0);               \
    set(x, X(q), t, 0);                            \
  } while (0)
      if (!transpose) {
        for (int64_t i = 0; i < n; ++i) SWAP(i);
        for (int64_t i = 0; i < n; ++i) /* L y = P rhs, L unit lower */
          for (int64_t j = 0; j < i; ++j)
            set(x, X(i), get_f(x, X(i)) - L(i, j) * get_f(x, X(j)), 0);
        for (int64_t i = n - 1; i >= 0; --i) { /* U x = y */
          for (int64_t j = i + 1; j < n; ++j)
            set(x, X(i), get_f(x, X(i)) - L(i, j) * get_f(x, X(j)), 0);
          set(x, X(i), get_f(x, X(i)) / L(i, i), 0);
        }
      } else {
        for (int64_t i = 0; i < n; ++i) { /* U^T y = rhs */
          for (int64_t j = 0; j < i; ++j)
            set(x, X(i), get_f(x, X(i)) - L(j, i) * get_f(x, X(j)), 0);
          set(x, X(i), get_f(x, X(i)) / L(i, i), 0);
        }
        for (int64_t i = n - 1; i >= 0; --i) /* L^T z = y */
          for (int64_t j = i + 1; j < n; ++j)
            set(x, X(i), get_f(x, X(i)) - L(j, i) * get_f(x, X(j)), 0);
        for (int64_t i = n - 1; i >= 0; --i) SWAP(i); /* x = P^T z */
      }
#undef SWAP
#undef X
#undef L
    }
  return FLB_OK;
}

/* Results whose size depends on the data, in the core's two steps: _nonzero_count
 * (an integer result), then nonzero or masked_select into the output the core
 * allocated on this device from that count. */
static int nonzero_at(const flb_tensor* t, int64_t i) {
  return is_float(t->dtype) ? get_f(t, i) != 0.0 : get_i(t, i) != 0;
}

static flb_status k_nonzero_count(void* ctx, const flb_kernel_call* c) {
  (void)ctx;
  const flb_tensor* in = &c->tensors[0];
  if (!supported(in->dtype) && in->dtype != FLB_BOOL) return unsupported(c);
  int64_t n = numel(in), count = 0;
  for (int64_t i = 0; i < n; ++i) count += nonzero_at(in, i);
  *c->int_result = count;
  return FLB_OK;
}

/* nonzero: out (count, in.ndim) int64, the indices of in's non-zeros in row-major order. */
static flb_status k_nonzero(void* ctx, const flb_kernel_call* c) {
  (void)ctx;
  const flb_tensor *out = &c->tensors[0], *in = &c->tensors[1];
  if (!supported(in->dtype) && in->dtype != FLB_BOOL) return unsupported(c);
  int64_t n = numel(in), row = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!nonzero_at(in, i)) continue;
    int64_t rest = i;
    for (int d = in->ndim - 1; d >= 0; --d) {
      set(out, row * in->ndim + d, 0, rest % in->sizes[d]);
      rest /= in->sizes[d];
    }
    ++row;
  }
  return FLB_OK;
}

/* masked_select: out gets in's elements where mask (of in's shape) is true. */
static flb_status k_masked_select(void* ctx, const flb_kernel_call* c) {
  (void)ctx;
  const flb_tensor *out = &c->tensors[0], *in = &c->tensors[1], *mask = &c->tensors[2];
  if (!supported(in->dtype) || mask->dtype != FLB_BOOL) return unsupported(c);
  int64_t n = numel(in), j = 0;
  for (int64_t i = 0; i < n; ++i)
    if (get_i(mask, i)) set(out, j++, get_f(in, i), get_i(in, i));
  return FLB_OK;
}

/* Each kernel runs with the device's memory open to it, as a GPU's kernels reach theirs. */
#define GUARDED(fn)                                                     \
  static flb_status fn##_guarded(void* ctx, const flb_kernel_call* c) { \
    open_memory();                                                      \
    flb_status status = fn(ctx, c);                                     \
    close_memory();                                                     \
    return status;                                                      \
  }
GUARDED(k_binary)
GUARDED(k_sum)
GUARDED(k_bmm)
GUARDED(k_fill)
GUARDED(k_copy)
GUARDED(k_avg_pool)
GUARDED(k_getrf)
GUARDED(k_getrs)
GUARDED(k_nonzero_count)
GUARDED(k_nonzero)
GUARDED(k_masked_select)

/* ---- registration ----------------------------------------------------------------- */

static flb_backend backend = {
    .struct_size = sizeof(flb_backend),
    .abi_major = FLB_ABI_MAJOR,
    .abi_minor = FLB_ABI_MINOR,
    .name = TESTDEV_NAME,
    .version = "0.1.0",
    .self = NULL,
    .device_count = td_device_count,
    .current_device = td_current_device,
    .set_device = td_set_device,
    .allocate = td_allocate,
    .free = td_free,
    .allocator_stats = td_stats,
    .reset_peak_stats = td_reset_peak,
    .empty_cache = td_empty_cache,
    .copy_from_host = td_copy_from_host,
    .copy_to_host = td_copy_to_host,
    .copy_on_device = td_copy_on_device,
    /* Synchronous: no streams, events, pinned memory or IPC. */
};

static int fail_from_core(const char* what) {
  PyErr_Format(PyExc_ImportError, "flambeau-testdev: %s failed: %s", what, core->last_error());
  return -1;
}

static int32_t device_type = -1; /* ours, from register_backend */

static int register_all(void) {
  int32_t type = core->register_backend(&backend);
  if (type < 0) return fail_from_core("register_backend");
  device_type = type;
  static const int32_t dtypes[] = {FLB_FLOAT32, FLB_FLOAT64, FLB_INT32, FLB_INT64};
  static int add_tag;
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; ++i) {
    int32_t d = dtypes[i];
    if (core->register_kernel(type, "add", d, k_binary_guarded, &add_tag) != FLB_OK ||
        core->register_kernel(type, "mul", d, k_binary_guarded, NULL) != FLB_OK ||
        core->register_kernel(type, "sum", d, k_sum_guarded, NULL) != FLB_OK ||
        core->register_kernel(type, "fill_", d, k_fill_guarded, NULL) != FLB_OK ||
        core->register_kernel(type, "copy_", d, k_copy_guarded, NULL) != FLB_OK ||
        core->register_kernel(type, "_nonzero_count", d, k_nonzero_count_guarded, NULL) != FLB_OK ||
        core->register_kernel(type, "masked_select", d, k_masked_select_guarded, NULL) != FLB_OK)
      return fail_from_core("register_kernel");
  }
  /* The count and nonzero take any of our dtypes or bool; nonzero is found by its
   * output's dtype (int64), the count by its input's. */
  if (core->register_kernel(type, "_nonzero_count", FLB_BOOL, k_nonzero_count_guarded, NULL) !=
          FLB_OK ||
      core->register_kernel(type, "nonzero", FLB_INT64, k_nonzero_guarded, NULL) != FLB_OK)
    return fail_from_core("register_kernel");
  if (core->register_kernel(type, "bmm", FLB_FLOAT32, k_bmm_guarded, NULL) != FLB_OK ||
      core->register_kernel(type, "bmm", FLB_FLOAT64, k_bmm_guarded, NULL) != FLB_OK ||
      core->register_kernel(type, "avg_pool", FLB_FLOAT32, k_avg_pool_guarded, NULL) != FLB_OK ||
      core->register_kernel(type, "avg_pool", FLB_FLOAT64, k_avg_pool_guarded, NULL) != FLB_OK)
    return fail_from_core("register_kernel");
  /* LAPACK kernels, whose pivots and info the core reads back from the device. */
  const int32_t floats[] = {FLB_FLOAT32, FLB_FLOAT64};
  for (int i = 0; i < 2; ++i)
    if (core->register_kernel(type, "linalg_getrf", floats[i], k_getrf_guarded, NULL) != FLB_OK ||
        core->register_kernel(type, "linalg_getrs", floats[i], k_getrs_guarded, NULL) != FLB_OK)
      return fail_from_core("register_kernel");
  /* sum is declared nondeterministic, as a GPU's reduction by atomic adds would
   * be, so the tests see a plugin's mark (ABI 1.1). */
  if (core->declare_nondeterministic(type, "sum") != FLB_OK)
    return fail_from_core("declare_nondeterministic");
  return 0;
}

/* For the tests of the ABI's checks: registers k_fill under `name` for float32
 * on testdev and returns the core's error message, or None when accepted. */
static PyObject* try_register_kernel(PyObject* self, PyObject* arg) {
  (void)self;
  const char* name = PyUnicode_AsUTF8(arg);
  if (!name) return NULL;
  if (core->register_kernel(device_type, name, FLB_FLOAT32, k_fill_guarded, NULL) == FLB_OK)
    Py_RETURN_NONE;
  return PyUnicode_FromString(core->last_error());
}

static PyObject* get_non_blocking_copies(PyObject* self, PyObject* unused) {
  (void)self, (void)unused;
  return PyLong_FromLong(non_blocking_copies);
}

static PyMethodDef methods[] = {
    {"try_register_kernel", try_register_kernel, METH_O, "Registers a kernel name; the error."},
    {"non_blocking_copies", get_non_blocking_copies, METH_NOARGS,
     "How many host copies the core asked to run non_blocking."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, STR(TESTDEV_MODULE),
                                    "The testdev backend's registration.", -1, methods};

PyMODINIT_FUNC CONCAT(PyInit_, TESTDEV_MODULE)(void) {
  core = flb_import_core_api("flambeau-testdev", "0.1.0");
  if (!core) return NULL;
  for (int i = 0; i < NUM_DEVICES; ++i) pthread_mutex_init(&arenas[i].lock, NULL);
  for (int i = 0; i < NUM_DEVICES; ++i) arenas[i].stats.struct_size = sizeof(flb_allocator_stats);
  if (register_all() < 0) return NULL;
  return PyModule_Create(&module);
}
