// The one copy kernel: any dtype to any dtype, any strides.
#include <cstdint>
#include <cstring>

#include "cpu/copy_transpose.h"
#include "cpu/loops.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"

namespace flambeau {

namespace {

// An unsigned integer of N bytes: what a same-dtype copy moves per element.
template <size_t N>
struct Bits {
  struct type {
    uint64_t lo, hi;
  };
};
template <>
struct Bits<1> {
  using type = uint8_t;
};
template <>
struct Bits<2> {
  using type = uint16_t;
};
template <>
struct Bits<4> {
  using type = uint32_t;
};
template <>
struct Bits<8> {
  using type = uint64_t;
};

// Same-dtype copy of one run: memcpy when both sides are dense, a fill when the source
// is one value broadcast (expand(), the gradient of a sum), else one fixed-size (so
// register-sized) move per element.
template <size_t N>
void copy_run(char** data, const int64_t* s, int64_t n) {
  if (s[0] == static_cast<int64_t>(N) && s[1] == static_cast<int64_t>(N)) {
    std::memcpy(data[0], data[1], static_cast<size_t>(n) * N);
    return;
  }
  if (s[0] == static_cast<int64_t>(N) && s[1] == 0) {
    using B = typename Bits<N>::type;
    B v;
    std::memcpy(&v, data[1], N);
    B* out = reinterpret_cast<B*>(data[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = v;
    return;
  }
  char* out = data[0];
  const char* in = data[1];
  for (int64_t i = 0; i < n; ++i) std::memcpy(out + i * s[0], in + i * s[1], N);
}

void copy_kernel(const Tensor& dst, const Tensor& src) {
  Tensor ops[] = {dst, src};
  auto it = TensorIterator::build(Span<Tensor>(ops, 2));
  if (dst->dtype() == src->dtype()) {
    if (blocked_transpose_copy(it, dst->itemsize())) return;
    switch (dst->itemsize()) {
      case 1:
        return it.for_each(copy_run<1>);
      case 2:
        return it.for_each(copy_run<2>);
      case 4:
        return it.for_each(copy_run<4>);
      case 8:
        return it.for_each(copy_run<8>);
      default:
        return it.for_each(copy_run<16>);
    }
  }
  visit_dtype<kValueTypes>(dst->dtype(), "copy_", [&](auto out_tag) {
    using Out = typename decltype(out_tag)::type;
    visit_dtype<kValueTypes>(src->dtype(), "copy_", [&](auto in_tag) {
      using In = typename decltype(in_tag)::type;
      cpu_kernel<Out, In, 1>(it, [](In v) { return convert<Out>(v); });
    });
  });
}

void fill_kernel(const Tensor& dst, const Scalar& value) {
  Tensor ops[] = {dst};
  auto it = TensorIterator::build(Span<Tensor>(ops, 1));
  if (is_shell(dst->dtype())) {
    // A shell dtype has no values, only bytes: zeros (as PyTorch's zeros) is the one fill.
    FLB_CHECK_T(NotImplementedError, value.to<double>() == 0 && !value.is_complex(),
                "fill_: not implemented for dtype ", dtype_name(dst->dtype()),
                " (only zero-filling a shell dtype is supported)");
    it.for_each([n_bytes = static_cast<int64_t>(dst->itemsize())](char** data, const int64_t* s,
                                                                  int64_t n) {
      for (int64_t i = 0; i < n; ++i) std::memset(data[0] + i * s[0], 0, n_bytes);
    });
    return;
  }
  visit_dtype<kValueTypes>(dst->dtype(), "fill_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = value.to<T>();
    it.for_each([v](char** data, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(T)) {
        T* __restrict__ out = reinterpret_cast<T*>(data[0]);
        for (int64_t i = 0; i < n; ++i) out[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(data[0] + i * s[0]) = v;
      }
    });
  });
}

}  // namespace

FLB_REGISTER_KERNEL(copy_, kCPU, copy_kernel);
FLB_REGISTER_KERNEL(fill_, kCPU, fill_kernel);

}  // namespace flambeau
