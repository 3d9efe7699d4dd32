#include "ops/common.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "cpu/parallel.h"
#include "ops/uninitialized.h"

namespace flambeau {

namespace {

ScalarType combine_categories(ScalarType higher, ScalarType lower) {
  if (higher == ScalarType::Undefined) return lower;
  if (lower == ScalarType::Undefined) return higher;
  if (is_complex(higher)) return higher;
  if (is_complex(lower)) return is_floating(higher) ? to_complex(higher) : lower;
  if (is_floating(higher)) return higher;
  if (higher == ScalarType::Bool || is_floating(lower)) return promote_types(higher, lower);
  return higher;
}

// A Python number promotes as the default type of its category.
ScalarType wrapped_type(ScalarType t) {
  if (is_floating(t)) return default_dtype();
  if (is_complex(t)) return default_complex_dtype();
  return t;
}

template <class It>
ScalarType result_type_impl(It first, It last) {
  ScalarType dim = ScalarType::Undefined, zero = ScalarType::Undefined,
             wrapped = ScalarType::Undefined;
  for (It it = first; it != last; ++it) {
    const Tensor& t = *it;
    if (!t) continue;
    if (t->is_wrapped_number()) {
      wrapped = promote_types(wrapped, wrapped_type(t->dtype()));
    } else if (t->dim() == 0) {
      zero = promote_types(zero, t->dtype());
    } else {
      dim = promote_types(dim, t->dtype());
    }
  }
  return combine_categories(dim, combine_categories(zero, wrapped));
}

struct DerefIt {
  const Tensor* const* p;
  const Tensor& operator*() const { return **p; }
  DerefIt& operator++() {
    ++p;
    return *this;
  }
  bool operator!=(const DerefIt& o) const { return p != o.p; }
};

}  // namespace

ScalarType result_type(std::initializer_list<const Tensor*> tensors) {
  return result_type_impl(DerefIt{tensors.begin()}, DerefIt{tensors.end()});
}
ScalarType result_type(Span<Tensor> tensors) {
  return result_type_impl(tensors.begin(), tensors.end());
}

Tensor scalar_tensor(const Scalar& s, ScalarType dtype) {
  Tensor t = empty({}, dtype);
  visit_dtype<kAllTypes>(dtype, "scalar_tensor", [&](auto tag) {
    using T = typename decltype(tag)::type;
    *t->data_as<T>() = s.to<T>();
  });
  return t;
}

Tensor wrapped_scalar(const Scalar& s) {
  Tensor t = scalar_tensor(s, s.natural_dtype());
  t->set_wrapped_number(true);
  return t;
}

Tensor to_dtype(const Tensor& t, ScalarType dtype) {
  if (t->dtype() == dtype) return t;
  Tensor out = empty(t->sizes(), dtype, t->device());
  copy_into(out, t);
  return out;
}

Tensor expand_to(const Tensor& t, IntList shape, const char* op) {
  if (t->sizes() == shape) return t;
  int64_t nd = static_cast<int64_t>(shape.size()), td = t->dim();
  FLB_CHECK(td <= nd, op, ": cannot broadcast shape ", shape_str(t->sizes()), " to ",
            shape_str(shape));
  DimVector strides(nd, 0);
  for (int64_t i = 0; i < td; ++i) {
    int64_t d = nd - td + i;
    int64_t size = t->sizes()[i];
    FLB_CHECK(size == shape[d] || size == 1, op, ": cannot broadcast shape ", shape_str(t->sizes()),
              " to ", shape_str(shape));
    strides[d] = size == 1 ? 0 : t->strides()[i];
  }
  return make_view(t, shape, strides, t->offset());
}

void resize_out(const Tensor& t, IntList sizes) {
  if (t->sizes() == sizes) return;
  size_t need = checked_nbytes(sizes, t->dtype(), "resize");
  size_t have = t->storage()->nbytes() - static_cast<size_t>(t->offset()) * t->itemsize();
  if (need > have) {
    t->set_storage(make_ref<StorageImpl>(need, t->device(), allocator_for(t->device().type)));
    t->set_geometry(sizes, contiguous_strides(sizes), 0);
    ops::maybe_fill_uninitialized(t);
  } else {
    t->set_geometry(sizes, contiguous_strides(sizes), t->offset());
  }
}

void check_out_tuple(const std::vector<Tensor>& out, size_t n, const char* op) {
  FLB_CHECK_T(TypeError, out.empty() || out.size() == n, op, "(): out= must be a tuple of ", n,
              " tensors, got ", out.size());
}

Tensor write_out(const std::vector<Tensor>& out, size_t i, const Tensor& result, const char* op) {
  if (out.empty()) return result;
  const Tensor& t = out[i];
  FLB_CHECK(t->dtype() == result->dtype(), op, "(): expected out tensor ", i, " to have dtype ",
            dtype_name(result->dtype()), ", but got ", dtype_name(t->dtype()));
  Tensor dest =
      prepare_out(OutArg::into(t), result->sizes(), result->dtype(), result->device(), op);
  copy_into(dest, result);
  return dest;
}

Tensor write_out(const OutArg& out, const Tensor& result, const char* op) {
  if (!out.given()) return result;
  Tensor dest = prepare_out(out, result->sizes(), result->dtype(), result->device(), op);
  copy_into(dest, result);
  return dest;
}

Tensor prepare_out(const OutArg& out, IntList shape, ScalarType result, Device device,
                   const char* op) {
  if (!out.given()) return empty(shape, result, device);
  const Tensor& t = out.tensor;
  FLB_CHECK(t->device() == device, op, ": expected the output on device ", device.str(),
            ", but it is on ", t->device().str());
  FLB_CHECK(can_cast(result, t->dtype()), op, ": result type ", dtype_name(result),
            " can't be cast to the desired output type ", dtype_name(t->dtype()));
  if (out.inplace || out.aliases_input) {
    FLB_CHECK(t->sizes() == shape, op, ": output with shape ", shape_str(t->sizes()),
              " doesn't match the broadcast shape ", shape_str(shape));
  } else {
    resize_out(t, shape);
  }
  check_no_internal_overlap(t, op);
  t->bump_version();
  return t;
}

void check_no_internal_overlap(const Tensor& t, const char* op) {
  for (int64_t d = 0; d < t->dim(); ++d)
    FLB_CHECK(t->strides()[d] != 0 || t->sizes()[d] <= 1, op ? op : "", op ? ": " : "",
              "unsupported operation: more than one element of the written-to tensor refers to "
              "a single memory location. Please clone() the tensor before performing the "
              "operation.");
}

// Strides laying out `t`'s dims in the same memory order as t, when t covers its
// shape densely (a permutation of a contiguous layout); else nothing.
std::optional<DimVector> dense_layout_of(const Tensor& t) {
  const int64_t nd = t->dim();
  DimVector order(static_cast<size_t>(nd));
  for (int64_t d = 0; d < nd; ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return t->strides()[x] > t->strides()[y]; });
  DimVector strides(static_cast<size_t>(nd));
  int64_t expected = 1;
  for (int64_t i = nd - 1; i >= 0; --i) {
    const int64_t d = order[i], size = t->sizes()[d];
    if (size != 1 && t->strides()[d] != expected) return std::nullopt;
    strides[d] = expected;
    expected *= std::max<int64_t>(size, 1);
  }
  return strides;
}

void check_no_partial_overlap(const Tensor& written, const Tensor& read, const char* op) {
  if (written->storage() != read->storage() || written->numel() == 0 || read->numel() == 0) return;
  if (written->offset() == read->offset() && written->sizes() == read->sizes() &&
      written->strides() == read->strides() && written->dtype() == read->dtype())
    return;  // the same elements: each is read before it is written
  // Only dense tensors are compared (each spans [offset, offset + numel) exactly); for the
  // others overlap is too costly to decide, as in PyTorch.
  if (!dense_layout_of(written) || !dense_layout_of(read)) return;
  auto span = [](const Tensor& t) {
    const int64_t begin = t->offset() * static_cast<int64_t>(t->itemsize());
    return std::pair<int64_t, int64_t>{begin,
                                       begin + t->numel() * static_cast<int64_t>(t->itemsize())};
  };
  auto [wb, we] = span(written);
  auto [rb, re] = span(read);
  FLB_CHECK(we <= rb || re <= wb, op,
            ": unsupported operation: some elements of the input tensor and the written-to "
            "tensor refer to a single memory location. Please clone() the tensor before "
            "performing the operation.");
}

namespace {

// An elementwise result takes the memory order of its first input that spans the
// whole shape densely, as PyTorch's does: x.t() + y.t() comes out transposed and
// every operand is walked contiguously (a row-major result made it 4x slower).
Tensor empty_in_layout_of(Span<Tensor> inputs, IntList shape, ScalarType dtype, Device device) {
  for (const Tensor& t : inputs) {
    if (t->is_wrapped_number() || !(t->sizes() == shape)) continue;
    if (!t->is_contiguous() && t->dim() > 1) {
      if (auto strides = dense_layout_of(t)) return empty_strided(shape, *strides, dtype, device);
    }
    break;
  }
  return empty(shape, dtype, device);
}

// Operands of another dtype than the computation's are cast a block at a time into a
// buffer that stays in cache, instead of into a converted copy of the whole tensor
// first (f32 + i32 then reads the int32 tensor once and writes nothing extra), when
// the result and every operand are contiguous with the result's shape or single
// values. Returns false (nothing done) otherwise.
constexpr int64_t kCastBlock = 65536;

bool cast_in_blocks(const KernelRef<ElementwiseKernel>& kernel, const Tensor& target,
                    Span<Tensor> inputs, ScalarType compute, Span<Scalar> scalars) {
  const int64_t numel = target->numel();
  if (!target->device().is_cpu() || !target->is_contiguous() || numel < 4 * kCastBlock)
    return false;
  bool mixed = false;
  for (const Tensor& t : inputs) {
    if (t->numel() == 1) continue;
    if (!t->is_contiguous() || !(t->sizes() == target->sizes())) return false;
    mixed = mixed || t->dtype() != compute;
  }
  if (!mixed || inputs.size() > kMaxElementwiseInputs) return false;
  Tensor whole[kMaxElementwiseInputs];
  const size_t n = inputs.size();
  for (size_t i = 0; i < n; ++i)  // single values: converted once
    whole[i] = inputs[i]->numel() == 1 ? to_dtype(inputs[i], compute) : inputs[i];
  const int64_t blocks = (numel + kCastBlock - 1) / kCastBlock;
  parallel_for(0, blocks, 1, [&](int64_t lo, int64_t hi) {
    Tensor buffer[kMaxElementwiseInputs], part[kMaxElementwiseInputs];
    for (int64_t b = lo; b < hi; ++b) {
      const int64_t start = b * kCastBlock, len = std::min(kCastBlock, numel - start);
      const DimVector size{len}, step{1}, same{0};
      for (size_t i = 0; i < n; ++i) {
        const Tensor& t = whole[i];
        if (t->numel() == 1) {
          part[i] = make_view(t, size, same, t->offset());
          continue;
        }
        Tensor block = make_view(t, size, step, t->offset() + start);
        if (t->dtype() == compute) {
          part[i] = block;
          continue;
        }
        if (!buffer[i]) buffer[i] = empty(DimVector{kCastBlock}, compute, t->device());
        part[i] = make_view(buffer[i], size, step, 0);
        copy_into(part[i], block);
      }
      kernel(make_view(target, size, step, target->offset() + start), Span<Tensor>(part, n),
             scalars);
    }
  });
  return true;
}

}  // namespace

Device operand_device(Span<Tensor> inputs, const char* name) {
  // As in PyTorch, a 0-dim CPU tensor goes with tensors of any device, as a number
  // would (a plugin's kernel call copies it over); any other must share the device.
  auto cpu_scalar = [](const Tensor& t) { return t->dim() == 0 && t->device().is_cpu(); };
  const Tensor* first = nullptr;
  for (const Tensor& t : inputs) {
    if (t->is_wrapped_number()) continue;
    if (!first || (cpu_scalar(*first) && !cpu_scalar(t))) first = &t;
  }
  for (const Tensor& t : inputs) {
    if (t->is_wrapped_number() || cpu_scalar(t)) continue;
    FLB_CHECK(t->device() == (*first)->device(), name,
              ": expected all tensors to be on the same device, but found at least two "
              "devices, ",
              (*first)->device().str(), " and ", t->device().str());
  }
  return first ? (*first)->device() : Device{};
}

Tensor elementwise(const KernelHandle<ElementwiseKernel>& op, const ElementwiseSpec& spec,
                   std::initializer_list<Tensor> inputs, std::initializer_list<Scalar> args,
                   const OutArg& out) {
  const char* name = spec.name;
  const Device device = operand_device(Span<Tensor>(inputs.begin(), inputs.size()), name);

  ScalarType compute = result_type(Span<Tensor>(inputs.begin(), inputs.size()));
  ScalarType result = compute;
  switch (spec.promote) {
    case Promote::IntToFloat:
      if (is_integral(compute, true)) compute = result = default_dtype();
      break;
    case Promote::BoolOut:
      result = ScalarType::Bool;
      break;
    case Promote::ComplexToReal:
      result = to_real(compute);
      break;
    case Promote::Default:
      break;
  }
  if (FLB_UNLIKELY(!(spec.dtypes & dtype_bit(compute)))) fail_dtype(name, compute);

  DimVector shape;
  for (const Tensor& t : inputs) shape = broadcast_shapes(shape, t->sizes(), name);

  const Span<Tensor> operands(inputs.begin(), inputs.size());
  Tensor dest = out.given() ? prepare_out(out, shape, result, device, name)
                            : empty_in_layout_of(operands, shape, result, device);
  if (out.given())
    for (const Tensor& t : inputs) check_no_partial_overlap(dest, t, name);
  Tensor target =
      dest->dtype() == result ? dest : empty_in_layout_of(operands, shape, result, device);

  Scalar scalars[4];
  size_t ns = 0;
  for (const Scalar& s : args) scalars[ns++] = s;
  if (target->numel() > 0) {
    auto k = kernel_for(op, device);
    if (!cast_in_blocks(k, target, operands, compute, Span<Scalar>(scalars, ns))) {
      Tensor prepared[kMaxElementwiseInputs];
      size_t n = 0;
      for (const Tensor& t : inputs) {
        FLB_CHECK(n < kMaxElementwiseInputs, name, ": too many inputs");
        prepared[n++] = expand_to(to_dtype(t, compute), shape, name);
      }
      k(target, Span<Tensor>(prepared, n), Span<Scalar>(scalars, ns));
    }
  }
  if (target != dest) copy_into(dest, target);
  return dest;
}

}  // namespace flambeau
