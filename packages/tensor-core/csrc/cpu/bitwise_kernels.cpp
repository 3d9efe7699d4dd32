// CPU kernels of bitwise (integer and bool) and logical (any type) operators.
#include "cpu/pointwise_loops.h"
#include "generated/kernels.h"

namespace flambeau {

namespace {

constexpr uint32_t kIntBool = kIntTypes | kBoolTypes;

#define FLB_BITWISE(NAME, MASK, EXPR)                                    \
  void NAME##_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) { \
    binary_op<MASK>(out, in, #NAME, [](auto tag) {                       \
      using C = typename decltype(tag)::type;                            \
      return [](C a, C b) -> C { return EXPR; };                         \
    });                                                                  \
  }                                                                      \
  FLB_REGISTER_KERNEL(NAME, kCPU, NAME##_kernel);

FLB_BITWISE(bitwise_and, kIntBool, C(a& b))
FLB_BITWISE(bitwise_or, kIntBool, C(a | b))
FLB_BITWISE(bitwise_xor, kIntBool, C(a ^ b))

// Shifts by a negative amount or by the width or more: 0 for left shifts and
// unsigned right shifts, the sign fill for signed right shifts (as PyTorch).
template <class C>
C shift_left(C a, C b) {
  using U = std::make_unsigned_t<C>;
  if (b < 0 || static_cast<int64_t>(b) >= static_cast<int64_t>(sizeof(C) * 8)) return 0;
  return static_cast<C>(static_cast<U>(a) << b);
}
template <class C>
C shift_right(C a, C b) {
  constexpr int64_t bits = sizeof(C) * 8;
  if (b < 0 || static_cast<int64_t>(b) >= bits) {
    if constexpr (std::is_signed_v<C>)
      return a < 0 ? C(-1) : C(0);
    else
      return 0;
  }
  return static_cast<C>(a >> b);
}
FLB_BITWISE(bitwise_left_shift, kIntTypes, shift_left(a, b))
FLB_BITWISE(bitwise_right_shift, kIntTypes, shift_right(a, b))

void bitwise_not_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  unary_op<kIntBool>(out, in[0], "bitwise_not", [](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (std::is_same_v<C, bool>)
      return [](bool x) { return !x; };
    else
      return [](C x) { return C(~x); };
  });
}

template <class C>
inline bool truth(C x) {
  if constexpr (is_complex_t<C>::value)
    return x.real() != 0 || x.imag() != 0;
  else
    return x != C(0);
}

#define FLB_LOGICAL(NAME, EXPR)                                          \
  void NAME##_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) { \
    binary_op<kAllTypes, OutKind::Bool>(out, in, #NAME, [](auto tag) {   \
      using C = typename decltype(tag)::type;                            \
      return [](C a, C b) -> bool { return EXPR; };                      \
    });                                                                  \
  }                                                                      \
  FLB_REGISTER_KERNEL(NAME, kCPU, NAME##_kernel);

FLB_LOGICAL(logical_and, truth(a) && truth(b))
FLB_LOGICAL(logical_or, truth(a) || truth(b))
FLB_LOGICAL(logical_xor, truth(a) != truth(b))

void logical_not_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  unary_op<kAllTypes, OutKind::Bool>(out, in[0], "logical_not", [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C x) -> bool { return !truth(x); };
  });
}

}  // namespace

FLB_REGISTER_KERNEL(bitwise_not, kCPU, bitwise_not_kernel);
FLB_REGISTER_KERNEL(logical_not, kCPU, logical_not_kernel);

}  // namespace flambeau
