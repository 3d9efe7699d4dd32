#include "core/tensor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <sstream>
#include <thread>

#include "core/interpreter_lock.h"

namespace flambeau {

void fail_inference_inplace() {
  fail(
      "Inplace update to inference tensor outside InferenceMode is not allowed: make a clone "
      "(a normal tensor) before updating it in place");
}
void fail_inference_requires_grad() {
  fail("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed");
}
void fail_inference_saved() {
  fail(
      "Inference tensors cannot be saved for backward. To work around you can make a clone to "
      "get a normal tensor and use it in autograd.");
}

void (*TensorImpl::first_requires_grad_hook)() = nullptr;

// Runs once, by the first thread to get here; the hook (loading the autograd package)
// releases the interpreter lock while it imports, so other threads that ask meanwhile
// wait for it to finish, without the lock: none may record before the package is in,
// nor hold the lock the import needs. The running thread itself may ask again (the
// package's own import makes tensors that require grad) and goes on.
void TensorImpl::run_first_requires_grad_hook() {
  static std::atomic<int> state{0};  // 0: not run, 1: running, 2: done
  static std::atomic<std::thread::id> runner{};
  int expected = 0;
  if (state.compare_exchange_strong(expected, 1)) {
    runner = std::this_thread::get_id();
    auto hook = first_requires_grad_hook;
    try {
      if (hook) hook();
    } catch (...) {
      first_requires_grad_hook = nullptr;
      state = 2;
      throw;
    }
    first_requires_grad_hook = nullptr;
    state = 2;
    return;
  }
  if (expected == 2 || runner.load() == std::this_thread::get_id()) return;
  ReleaseInterpreterLock unlocked;
  while (state.load() != 2) std::this_thread::sleep_for(std::chrono::microseconds(200));
}

TensorImpl::TensorImpl(Storage storage, IntList sizes, IntList strides, int64_t offset,
                       ScalarType dtype)
    : storage_(std::move(storage)),
      sizes_(sizes),
      strides_(strides),
      offset_(offset),
      dtype_(dtype) {
  refresh();
}

void TensorImpl::set_geometry(IntList sizes, IntList strides, int64_t offset) {
  if (sizes == IntList(sizes_) && strides == IntList(strides_) && offset == offset_) return;
  // sizes may alias sizes_ (t->set_geometry(t->sizes(), ...)): copy before assigning.
  DimVector new_sizes(sizes), new_strides(strides);
  sizes_ = new_sizes;
  strides_ = new_strides;
  offset_ = offset;
  ++metadata_version_;
  refresh();
}

void TensorImpl::set_storage(Storage s, bool count_as_write) {
  // The version this tensor reports keeps counting from where it was.
  const uint64_t before = version();
  storage_ = std::move(s);
  version_bias_ = before + (count_as_write ? 1 : 0) - storage_->version();
}

void TensorImpl::set_dtype(ScalarType dtype) {
  if (dtype == dtype_) return;
  dtype_ = dtype;
  ++metadata_version_;
}

void TensorImpl::refresh() {
  numel_ = numel_of(sizes_);
  // Contiguous: row-major strides, ignoring dims of size 1.
  contiguous_ = true;
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (sizes_[d] == 1) continue;
    if (strides_[d] != expected) {
      contiguous_ = numel_ == 0;
      break;
    }
    expected *= sizes_[d];
  }
}

int64_t TensorImpl::size(int64_t d) const { return sizes_[wrap_dim(d, dim(), "size")]; }
int64_t TensorImpl::stride(int64_t d) const { return strides_[wrap_dim(d, dim(), "stride")]; }

DimVector contiguous_strides(IntList sizes) {
  DimVector strides(sizes.size());
  int64_t s = 1;
  bool overflow = false;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    strides[d] = s;
    // Only an empty tensor gets here with huge sizes (numel_of bounds the rest).
    if (d > 0) overflow |= __builtin_mul_overflow(s, std::max<int64_t>(sizes[d], 1), &s);
  }
  FLB_CHECK(!overflow, "Stride calculation overflowed with sizes ", shape_str(sizes));
  return strides;
}

int64_t numel_of(IntList sizes) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t s : sizes) {
    if (s == 0) return 0;  // an empty shape is empty, however large its other dims
    overflow |= __builtin_mul_overflow(n, s, &n);
  }
  FLB_CHECK(!overflow, "numel: integer multiplication overflow for sizes ", shape_str(sizes));
  return n;
}

std::string shape_str(IntList sizes) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < sizes.size(); ++i) os << (i ? ", " : "") << sizes[i];
  if (sizes.size() == 1) os << ",";
  os << ")";
  return os.str();
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t n = std::max<int64_t>(ndim, 1);  // scalars accept dim 0 and -1
  if (FLB_UNLIKELY(dim < -n || dim >= n)) {
    fail<IndexError>(op, ": dimension out of range (expected to be in range of [", -n, ", ", n - 1,
                     "], but got ", dim, ")");
  }
  return dim < 0 ? dim + n : dim;
}

DimVector broadcast_shapes(IntList a, IntList b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (FLB_UNLIKELY(da != db && da != 1 && db != 1)) {
      fail(op, ": shapes ", shape_str(a), " and ", shape_str(b),
           " cannot be broadcast together (size ", da, " != ", db, " at dimension ", i, ")");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void check_view_bounds(const Tensor& base, IntList sizes, IntList strides, int64_t offset,
                       const char* op) {
  FLB_CHECK(sizes.size() == strides.size(), op, ": sizes ", shape_str(sizes), " and strides ",
            shape_str(strides), " must have the same length");
  FLB_CHECK(offset >= 0, op, ": storage offset must be non-negative, got ", offset);
  int64_t lo = offset, hi = offset;
  bool empty = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    FLB_CHECK(sizes[i] >= 0, op, ": negative size ", sizes[i], " in ", shape_str(sizes));
    if (sizes[i] == 0) empty = true;
    int64_t span = 0;
    bool overflow = __builtin_mul_overflow(std::max<int64_t>(sizes[i] - 1, 0), strides[i], &span) ||
                    __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi);
    FLB_CHECK(!overflow, op, ": view of sizes ", shape_str(sizes), " and strides ",
              shape_str(strides), " overflows the addressable range");
  }
  if (empty) return;
  int64_t capacity = static_cast<int64_t>(base->storage()->nbytes() / base->itemsize());
  FLB_CHECK(lo >= 0 && hi < capacity, op, ": view of sizes ", shape_str(sizes), ", strides ",
            shape_str(strides), " and offset ", offset, " is out of bounds for a storage of ",
            capacity, " elements");
}

size_t checked_nbytes(IntList sizes, ScalarType dtype, const char* op) {
  uint64_t n = itemsize(dtype);
  for (int64_t s : sizes)
    FLB_CHECK(s >= 0, op, ": negative dimension ", s, " in size ", shape_str(sizes));
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) return 0;
  for (int64_t s : sizes) {
    FLB_CHECK(!__builtin_mul_overflow(n, static_cast<uint64_t>(s), &n) &&
                  n <= static_cast<uint64_t>(INT64_MAX),
              op, ": size ", shape_str(sizes), " of ", dtype_name(dtype),
              " is too large to allocate");
  }
  return static_cast<size_t>(n);
}

Tensor empty(IntList sizes, ScalarType dtype, Device device) {
  size_t nbytes = checked_nbytes(sizes, dtype, "empty");
  auto storage = make_ref<StorageImpl>(nbytes, device, allocator_for(device.type));
  return make_ref<TensorImpl>(storage, sizes, contiguous_strides(sizes), 0, dtype);
}

Tensor empty_strided(IntList sizes, IntList strides, ScalarType dtype, Device device) {
  FLB_CHECK(sizes.size() == strides.size(), "empty_strided: sizes ", shape_str(sizes),
            " and strides ", shape_str(strides), " must have the same length");
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    FLB_CHECK(sizes[i] >= 0 && strides[i] >= 0, "empty_strided: negative size or stride");
    if (sizes[i] == 0) extent = 0;
  }
  if (extent) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      int64_t span;
      FLB_CHECK(!__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) &&
                    !__builtin_add_overflow(extent, span, &extent),
                "empty_strided: size ", shape_str(sizes), " with strides ", shape_str(strides),
                " is too large to allocate");
    }
  }
  checked_nbytes({extent}, dtype, "empty_strided");
  auto storage = make_ref<StorageImpl>(static_cast<size_t>(extent) * itemsize(dtype), device,
                                       allocator_for(device.type));
  return make_ref<TensorImpl>(storage, sizes, strides, 0, dtype);
}

Tensor make_view(const Tensor& base, IntList sizes, IntList strides, int64_t offset) {
  auto t = make_ref<TensorImpl>(base->storage(), sizes, strides, offset, base->dtype());
  t->start_version_at(*base);
  return t;
}

Tensor mark_view(Tensor out, const Tensor& input) {
  if (out && out.get() != input.get() && out->storage().get() == input->storage().get() &&
      !inference_mode_enabled()) {
    out->set_view_base(input->view_base() ? input->view_base() : input.get());
  }
  return out;
}

std::vector<Tensor> mark_views(std::vector<Tensor> outs, const Tensor& input) {
  for (Tensor& out : outs) out = mark_view(std::move(out), input);
  return outs;
}

}  // namespace flambeau
