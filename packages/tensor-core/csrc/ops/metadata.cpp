// In-place changes of a tensor's metadata (ops/metadata.yaml): set_, resize_ and the
// in-place view operators. They re-point self at a storage and a geometry; values are
// never changed. Each one counts as an in-place operation on self (its version goes
// up), as in PyTorch; `.data =` (python/tensor_bindings.cpp) does not.
#include <algorithm>
#include <cstring>

#include "generated/ops.h"
#include "ops/memory_format.h"
#include "ops/uninitialized.h"

namespace flambeau {

namespace {

// Elements a geometry reaches in its storage: offset + 1 + sum((size - 1) * stride),
// or 0 for an empty one. Sizes and strides are non-negative here.
int64_t storage_elements_needed(IntList sizes, IntList strides, int64_t offset, const char* op) {
  int64_t end = offset;
  bool overflow = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return 0;
    int64_t span = 0;
    overflow |= __builtin_mul_overflow(sizes[i] - 1, strides[i], &span) ||
                __builtin_add_overflow(end, span, &end);
  }
  overflow |= __builtin_add_overflow(end, 1, &end);
  FLB_CHECK(!overflow, op, ": storage size calculation overflowed with sizes ", shape_str(sizes),
            ", strides ", shape_str(strides), " and storage offset ", offset);
  return end;
}

// Grows s to hold at least `elements` elements of `dtype`, keeping its bytes: the new
// memory replaces the old for every tensor sharing s (PyTorch's storage resize). It
// never shrinks.
void grow_storage(const Storage& s, int64_t elements, ScalarType dtype, const char* op) {
  uint64_t nbytes = 0;
  FLB_CHECK(!__builtin_mul_overflow(static_cast<uint64_t>(elements), itemsize(dtype), &nbytes) &&
                nbytes <= static_cast<uint64_t>(INT64_MAX),
            op, ": storage of ", elements, " elements of ", dtype_name(dtype),
            " is too large to allocate");
  const size_t old_nbytes = s->nbytes();
  if (nbytes <= old_nbytes) return;
  FLB_CHECK(s->resizable(), "Trying to resize storage that is not resizable");
  auto fresh = make_ref<StorageImpl>(static_cast<size_t>(nbytes), s->device(), s->allocator());
  if (old_nbytes > 0) {
    const int64_t n = static_cast<int64_t>(old_nbytes);
    Tensor from = make_ref<TensorImpl>(s, IntList{n}, IntList{1}, 0, ScalarType::UInt8);
    Tensor to = make_ref<TensorImpl>(fresh, IntList{n}, IntList{1}, 0, ScalarType::UInt8);
    copy_into(to, from);
  }
  if (FLB_UNLIKELY(should_fill_uninitialized_memory())) {
    // Deterministic mode: the new elements (whole ones past the old bytes) get the fill value.
    const int64_t first =
        static_cast<int64_t>((old_nbytes + itemsize(dtype) - 1) / itemsize(dtype));
    const int64_t count = std::max<int64_t>(elements - first, 0);
    Tensor fresh_part = make_ref<TensorImpl>(fresh, IntList{count}, IntList{1}, first, dtype);
    ops::fill_uninitialized_elements(fresh_part);
  }
  s->take_memory(*fresh);  // fresh now holds the old memory, released with it
}

void check_geometry(IntList sizes, IntList strides, int64_t offset, const char* op) {
  FLB_CHECK(sizes.size() == strides.size(), op, ": unequal size length (", sizes.size(),
            ") and stride length (", strides.size(), ")");
  FLB_CHECK(offset >= 0, op, ": invalid storage offset ", offset);
  for (int64_t s : sizes)
    FLB_CHECK(s >= 0, op, ": negative dimension ", s, " in size ", shape_str(sizes));
  for (int64_t s : strides)
    FLB_CHECK(s >= 0, op, ": negative strides are not supported, got strides ", shape_str(strides));
}

// self views `storage` with the given geometry, after the checks PyTorch makes; the
// storage grows when the geometry reaches past its end.
void point_at(const Tensor& self, const Storage& storage, IntList sizes, IntList strides,
              int64_t offset, const char* op) {
  check_geometry(sizes, strides, offset, op);
  grow_storage(storage, storage_elements_needed(sizes, strides, offset, op), self->dtype(), op);
  self->set_storage(storage);
  self->set_geometry(sizes, strides, offset);
}

// The table's Tensor parameters take Python numbers; these operators take tensors only.
void require_tensor(const Tensor& t, const char* op, const char* arg) {
  if (t->is_wrapped_number())
    fail<TypeError>(op, "(): argument '", arg, "' must be Tensor, not a number");
}

void check_same_kind(const Tensor& self, const Tensor& source, const char* op) {
  require_tensor(source, op, "source");
  FLB_CHECK(source->dtype() == self->dtype(), op, ": could not set tensor of type ",
            dtype_name(source->dtype()), " to a tensor of type ", dtype_name(self->dtype()));
  FLB_CHECK(source->device() == self->device(), op,
            ": attempted to set the storage of a tensor on ", self->device().str(),
            " to a storage on a different device ", source->device().str(),
            "; the devices must match");
}

// An in-place view operator: self takes the geometry of `view`, a view of self.
Tensor become(const Tensor& self, const Tensor& view) {
  self->set_geometry(view->sizes(), view->strides(), view->offset());
  self->bump_own_version();
  return self;
}

}  // namespace

namespace ops {

Tensor set_(const Tensor& self) {
  auto empty = make_ref<StorageImpl>(0, self->device(), allocator_for(self->device().type));
  self->set_storage(empty);
  self->set_geometry({0}, {1}, 0);
  return self;
}

Tensor set__source_Tensor(const Tensor& self, const Tensor& source) {
  check_same_kind(self, source, "set_");
  // source's geometry already fits its storage.
  self->set_storage(source->storage());
  self->set_geometry(source->sizes(), source->strides(), source->offset());
  return self;
}

Tensor set__source_Tensor_storage_offset(const Tensor& self, const Tensor& source,
                                         int64_t storage_offset, IntList size,
                                         const std::optional<DimVector>& stride) {
  check_same_kind(self, source, "set_");
  DimVector strides = stride && !stride->empty() ? *stride : contiguous_strides(size);
  Storage storage = source->storage();  // held: self may be source
  point_at(self, storage, size, strides, storage_offset, "set_");
  return self;
}

bool is_set_to(const Tensor& self, const Tensor& tensor) {
  require_tensor(tensor, "is_set_to", "tensor");
  return self->storage() == tensor->storage() && self->offset() == tensor->offset() &&
         self->sizes() == tensor->sizes() && self->strides() == tensor->strides();
}

Tensor resize_(const Tensor& self, IntList size, MemoryFormat memory_format) {
  FLB_CHECK(!self->requires_grad(), "cannot resize variables that require grad");
  for (int64_t s : size)
    FLB_CHECK(s >= 0, "resize_: negative dimension ", s, " in size ", shape_str(size));
  // None (and preserve_format, which PyTorch refuses here) mean row-major.
  const bool restride =
      memory_format == MemoryFormat::ChannelsLast || memory_format == MemoryFormat::ChannelsLast3d;
  if (self->sizes() == size && !restride) {
    self->bump_own_version();
    return self;
  }
  DimVector strides = contiguous_strides(size);
  if (restride)
    strides = memory_format_strides(make_view(self, size, strides, 0), memory_format, "resize_");
  const int64_t numel = numel_of(size);
  int64_t end = 0;
  FLB_CHECK(!__builtin_add_overflow(self->offset(), numel, &end), "resize_: storage offset ",
            self->offset(), " plus ", numel, " elements overflows");
  if (numel > 0) grow_storage(self->storage(), end, self->dtype(), "resize_");
  self->set_geometry(size, strides, self->offset());
  self->bump_own_version();
  return self;
}

Tensor resize_as_(const Tensor& self, const Tensor& the_template, MemoryFormat memory_format) {
  require_tensor(the_template, "resize_as_", "the_template");
  DimVector size(the_template->sizes());  // the template may be self
  return resize_(self, size, memory_format);
}

Tensor t_(const Tensor& self) { return become(self, t(self)); }

Tensor transpose_(const Tensor& self, int64_t dim0, int64_t dim1) {
  return become(self, transpose(self, dim0, dim1));
}

Tensor swapaxes_(const Tensor& self, int64_t axis0, int64_t axis1) {
  return become(self, transpose(self, axis0, axis1));
}

Tensor swapdims_(const Tensor& self, int64_t dim0, int64_t dim1) {
  return become(self, transpose(self, dim0, dim1));
}

Tensor squeeze_(const Tensor& self, const std::optional<DimVector>& dim) {
  return become(self, squeeze(self, dim));
}

Tensor unsqueeze_(const Tensor& self, int64_t dim) { return become(self, unsqueeze(self, dim)); }

Tensor as_strided_(const Tensor& self, IntList size, IntList stride,
                   std::optional<int64_t> storage_offset) {
  return become(self, as_strided(self, size, stride, storage_offset));
}

}  // namespace ops
}  // namespace flambeau
