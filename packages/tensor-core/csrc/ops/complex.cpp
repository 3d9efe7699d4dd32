// Frontends of the complex-number operators: float views of complex storage
// (view_as_real, real, imag) and back (view_as_complex), conjugation, polar
// form. Offsets and strides count elements of a tensor's own dtype, so a float
// view of complex storage doubles them (a complex element is two floats).
#include "generated/kernels.h"
#include "generated/ops_complex.h"
#include "generated/ops_shape.h"

namespace flambeau::ops {

namespace {

// The float view of a complex tensor's parts: `last` is (..., 2) for
// view_as_real, else the real (part 0) or imaginary (part 1) parts alone.
Tensor parts_view(const Tensor& input, bool last, int64_t part) {
  DimVector sizes(input->sizes());
  DimVector strides(input->strides());
  for (auto& s : strides) s *= 2;
  if (last) {
    sizes.push_back(2);
    strides.push_back(1);
  }
  return make_ref<TensorImpl>(input->storage(), sizes, strides, input->offset() * 2 + part,
                              to_real(input->dtype()));
}

// complex() and polar(): a complex tensor from two float tensors of one dtype.
template <class K>
Tensor from_parts(const Tensor& a, const Tensor& b, const OutArg& out) {
  const char* name = K::name;
  const ScalarType dt = a->dtype();
  FLB_CHECK((dt == ScalarType::Float32 || dt == ScalarType::Float64) &&
                (b->dtype() == ScalarType::Float32 || b->dtype() == ScalarType::Float64),
            name, ": expected both inputs to be float32 or float64 tensors, but got ",
            dtype_name(dt), " and ", dtype_name(b->dtype()));
  FLB_CHECK(b->dtype() == dt, name, ": expected both inputs to have the same dtype, but got ",
            dtype_name(dt), " and ", dtype_name(b->dtype()));
  FLB_CHECK(a->device() == b->device(), name,
            ": expected both tensors on the same device, but got ", a->device().str(), " and ",
            b->device().str());
  DimVector shape = broadcast_shapes(a->sizes(), b->sizes(), name);
  const ScalarType result = to_complex(dt);
  Tensor dest = prepare_out(out, shape, result, a->device(), name);
  Tensor target = dest->dtype() == result ? dest : flambeau::empty(shape, result, a->device());
  if (target->numel() > 0) {
    Tensor in[] = {expand_to(a, shape, name), expand_to(b, shape, name)};
    auto k = kernel_for(handle<K>(), a->device());
    k(target, Span<Tensor>(in, 2), {});
  }
  if (target != dest) copy_into(dest, target);
  return dest;
}

}  // namespace

Tensor view_as_real(const Tensor& input) {
  FLB_CHECK(is_complex_dtype(input->dtype()),
            "view_as_real is only supported for complex tensors, but got a tensor of dtype ",
            dtype_name(input->dtype()));
  return parts_view(input, true, 0);
}

Tensor view_as_complex(const Tensor& input) {
  const ScalarType dt = input->dtype();
  FLB_CHECK(dt == ScalarType::Float32 || dt == ScalarType::Float64 || dt == ScalarType::Float16,
            "view_as_complex is only supported for float16, float32 and float64 tensors, but "
            "got a tensor of dtype ",
            dtype_name(dt));
  FLB_CHECK(input->dim() > 0, "view_as_complex: Input tensor must have one or more dimensions");
  const int64_t last = input->dim() - 1;
  FLB_CHECK(input->sizes()[last] == 2,
            "view_as_complex: Tensor must have a last dimension of size 2, but got shape ",
            shape_str(input->sizes()));
  // Zero-size tensors have no memory layout to check (as view(dtype)).
  const bool empty = input->numel() == 0;
  FLB_CHECK(empty || input->strides()[last] == 1,
            "view_as_complex: Tensor must have a last dimension with stride 1, but got stride ",
            input->strides()[last]);
  DimVector sizes(input->sizes());
  DimVector strides(input->strides());
  sizes.erase(last);
  strides.erase(last);
  for (int64_t d = 0; d < last; ++d) {
    FLB_CHECK(empty || strides[d] % 2 == 0,
              "view_as_complex: Tensor must have a stride divisible by 2 for all but last "
              "dimension, but got stride ",
              strides[d], " at dim ", d);
    strides[d] /= 2;
  }
  FLB_CHECK(input->offset() % 2 == 0,
            "view_as_complex: Tensor must have a storage_offset divisible by 2, but got ",
            input->offset());
  const ScalarType complex = dt == ScalarType::Float16 ? ScalarType::ComplexHalf : to_complex(dt);
  return make_ref<TensorImpl>(input->storage(), sizes, strides, input->offset() / 2, complex);
}

Tensor real(const Tensor& input) {
  return is_complex_dtype(input->dtype()) ? parts_view(input, false, 0) : input;
}

Tensor imag(const Tensor& input) {
  FLB_CHECK(is_complex_dtype(input->dtype()),
            "imag is not implemented for tensors with non-complex dtypes (got ",
            dtype_name(input->dtype()), ")");
  return parts_view(input, false, 1);
}

Tensor conj(const Tensor& input) {
  return is_complex_dtype(input->dtype()) ? conj_physical(input, OutArg::none()) : input;
}

Tensor conj_physical(const Tensor& input, const OutArg& out) {
  // The conjugate of a real tensor is itself: only out= needs a copy.
  if (!is_complex_dtype(input->dtype()) && (!out.given() || out.inplace)) return input;
  return elementwise(handle<kernels::conj_physical>(), {"conj_physical"}, {input}, {}, out);
}

Tensor resolve_conj(const Tensor& input) { return input; }

bool is_conj(const Tensor&) { return false; }

Tensor angle(const Tensor& input, const OutArg& out) {
  // Integers and bool compute in the default float type, as for other float functions.
  Tensor x = is_integral(input->dtype(), true) ? to_dtype(input, default_dtype()) : input;
  return elementwise(handle<kernels::angle>(),
                     {"angle", Promote::ComplexToReal, kFloatTypes | kComplexTypes}, {x}, {}, out);
}

Tensor polar(const Tensor& abs, const Tensor& angle, const OutArg& out) {
  return from_parts<kernels::polar>(abs, angle, out);
}

Tensor complex(const Tensor& real, const Tensor& imag, const OutArg& out) {
  return from_parts<kernels::complex>(real, imag, out);
}

Tensor adjoint(const Tensor& input) {
  FLB_CHECK(input->dim() >= 2,
            "tensor.adjoint() is only supported on matrices or batches of matrices. Got ",
            input->dim(), "-D tensor.");
  return conj(transpose(input, -2, -1));
}

}  // namespace flambeau::ops
