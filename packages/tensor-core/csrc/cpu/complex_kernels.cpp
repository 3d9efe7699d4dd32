// CPU kernels of the complex-number operators: conj_physical, angle, and
// complex()/polar() (two float inputs, one complex output).
#include <cmath>
#include <complex>

#include "cpu/pointwise_loops.h"
#include "generated/kernels.h"

namespace flambeau {

namespace {

void conj_physical_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  unary_op<kAllTypes>(out, in[0], "conj_physical", [](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (is_complex_t<C>::value) {
      return [](C x) { return std::conj(x); };
    } else {
      return [](C x) { return x; };  // out= of a real tensor: a copy
    }
  });
}

void angle_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  unary_op<kFloatTypes | kComplexTypes, OutKind::Real>(out, in[0], "angle", [](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (is_complex_t<C>::value) {
      return [](C x) { return std::arg(x); };
    } else {
      // pi for negative values, 0 otherwise (-0.0 included); NaN stays NaN.
      return [](C x) { return std::isnan(x) ? x : (x < C(0) ? C(M_PI) : C(0)); };
    }
  });
}

// out (complex) = make(a, b) over float inputs of one dtype.
template <class Make>
void complex_from_parts(const Tensor& out, Span<Tensor> in, const char* name, const Make& make) {
  Tensor ops[] = {out, in[0], in[1]};
  auto it = TensorIterator::build(Span<Tensor>(ops, 3));
  visit_dtype<dtype_bit(ScalarType::Float32) | dtype_bit(ScalarType::Float64)>(
      in[0]->dtype(), name, [&](auto tag) {
        using T = typename decltype(tag)::type;
        cpu_kernel<std::complex<T>, T, 2>(it, make(tag));
      });
}

void complex_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  complex_from_parts(out, in, "complex", [](auto tag) {
    using T = typename decltype(tag)::type;
    return [](T re, T im) { return std::complex<T>(re, im); };
  });
}

void polar_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  complex_from_parts(out, in, "polar", [](auto tag) {
    using T = typename decltype(tag)::type;
    // Not std::polar: it is undefined for negative magnitudes.
    return [](T r, T t) { return std::complex<T>(r * std::cos(t), r * std::sin(t)); };
  });
}

}  // namespace

FLB_REGISTER_KERNEL(conj_physical, kCPU, conj_physical_kernel);
FLB_REGISTER_KERNEL(angle, kCPU, angle_kernel);
FLB_REGISTER_KERNEL(complex, kCPU, complex_kernel);
FLB_REGISTER_KERNEL(polar, kCPU, polar_kernel);

}  // namespace flambeau
