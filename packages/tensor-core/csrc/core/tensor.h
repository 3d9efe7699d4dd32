// A tensor is a strided view of a storage: sizes, strides (in elements), a
// storage offset, an element type and a device. Views share the storage.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "core/small_vector.h"
#include "core/storage.h"

namespace flambeau {

// What autograd records about one tensor (its node, its place among that node's
// outputs, a leaf's gradient, its view of a base). The core owns the pointer and
// nothing else: the contents are the Python layer's (python/autograd_meta.h), which
// creates them the first time autograd writes one of them.
struct AutogradMeta {
  virtual ~AutogradMeta() = default;
};

class TensorImpl : public RefCounted {
 public:
  TensorImpl(Storage storage, IntList sizes, IntList strides, int64_t offset, ScalarType dtype);

  const Storage& storage() const { return storage_; }
  IntList sizes() const { return sizes_; }
  IntList strides() const { return strides_; }
  int64_t size(int64_t dim) const;  // dim may be negative
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t offset() const { return offset_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  size_t itemsize() const { return flambeau::itemsize(dtype_); }
  bool is_contiguous() const { return contiguous_; }
  char* data() const { return static_cast<char*>(storage_->data()) + offset_ * itemsize(); }
  template <class T>
  T* data_as() const {
    return reinterpret_cast<T*>(data());
  }

  bool requires_grad() const { return requires_grad_; }
  void set_requires_grad(bool r) {
    if (r && FLB_UNLIKELY(first_requires_grad_hook != nullptr)) run_first_requires_grad_hook();
    requires_grad_ = r;
  }
  // Runs once, the first time any tensor is marked as requiring grad: the
  // Python layer uses it to load the autograd package lazily.
  static void (*first_requires_grad_hook)();
  static void run_first_requires_grad_hook();
  // A tensor made from a Python number: it takes part in type promotion only by
  // category, as in PyTorch.
  bool is_wrapped_number() const { return wrapped_number_; }
  void set_wrapped_number(bool w) { wrapped_number_ = w; }

  // In-place metadata changes (in-place view ops, resize_, set_, `.data =`, out=
  // resizing). The caller checks that the geometry fits the storage. A new
  // storage counts as a write to this tensor (its version goes up) unless
  // count_as_write is false (`.data =`, which PyTorch keeps out of autograd).
  void set_geometry(IntList sizes, IntList strides, int64_t offset);
  void set_storage(Storage s, bool count_as_write = true);
  void set_dtype(ScalarType dtype);

  // The version autograd compares to detect in-place changes: the storage's (which
  // every write bumps, so views share it) plus this tensor's own offset, which
  // keeps counting up when the tensor is re-pointed at another storage and which
  // bump_own_version raises for changes of this tensor's metadata alone.
  uint64_t version() const { return storage_->version() + version_bias_; }
  void bump_version() {
    if (FLB_UNLIKELY(storage_->inference()) && !inference_mode_enabled()) fail_inference_inplace();
    storage_->bump_version();
  }
  bool is_inference() const { return storage_->inference(); }
  void bump_own_version() { ++version_bias_; }
  // A new view starts at its base's version, as in PyTorch (where they share one).
  void start_version_at(const TensorImpl& base) { version_bias_ = base.version_bias_; }
  // Counts changes of this tensor's sizes, strides, offset or dtype: autograd
  // formulas read a recorded input's geometry at backward.
  uint64_t metadata_version() const { return metadata_version_; }

  // The tensor this one is a view of (PyTorch's `_base`), set by view operators:
  // always a tensor that is not itself a view, so chains of views end in one hop.
  TensorImpl* view_base() const { return view_base_.get(); }
  void set_view_base(TensorImpl* base) { view_base_ = base; }

  AutogradMeta* autograd_meta() const { return autograd_meta_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMeta> m) { autograd_meta_ = std::move(m); }
  std::unique_ptr<AutogradMeta> take_autograd_meta() { return std::move(autograd_meta_); }

 private:
  void refresh();
  Storage storage_;
  DimVector sizes_, strides_;
  int64_t offset_;
  int64_t numel_ = 1;
  uint64_t version_bias_ = 0;  // wraps modulo 2^64 like the sum it is added to
  uint64_t metadata_version_ = 0;
  std::unique_ptr<AutogradMeta> autograd_meta_;
  Ref<TensorImpl> view_base_;
  ScalarType dtype_;
  bool contiguous_ = true;
  bool requires_grad_ = false;
  bool wrapped_number_ = false;
};

using Tensor = Ref<TensorImpl>;

// Shape helpers shared by every operator.
DimVector contiguous_strides(IntList sizes);
int64_t numel_of(IntList sizes);
std::string shape_str(IntList sizes);  // "(2, 3)"
// Wraps a possibly negative dim into [0, ndim); IndexError naming op otherwise.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);
// Broadcast shape of two shapes; RuntimeError naming op and both shapes otherwise.
DimVector broadcast_shapes(IntList a, IntList b, const char* op);
// Bytes a view with these sizes/strides/offset touches must fit in the storage.
void check_view_bounds(const Tensor& base, IntList sizes, IntList strides, int64_t offset,
                       const char* op);

// Construction. Sizes are checked: negative or overflowing sizes raise.
size_t checked_nbytes(IntList sizes, ScalarType dtype, const char* op);
Tensor empty(IntList sizes, ScalarType dtype, Device device = {});
Tensor empty_strided(IntList sizes, IntList strides, ScalarType dtype, Device device = {});
Tensor make_view(const Tensor& base, IntList sizes, IntList strides, int64_t offset);
// What a view operator returns: out, marked as a view of input's base (or of input)
// when it shares input's storage and is not input itself. Outside inference mode only,
// as in PyTorch.
Tensor mark_view(Tensor out, const Tensor& input);
std::vector<Tensor> mark_views(std::vector<Tensor> outs, const Tensor& input);

}  // namespace flambeau
