// CPU kernels of binary arithmetic operators.
#include "cpu/loops.h"
#include "dispatch/dispatcher.h"

namespace flambeau {

namespace {

template <uint32_t Mask, class MakeOp>
void binary(const Tensor& out, Span<Tensor> in, Span<Scalar> args, const char* name,
            const MakeOp& make_op) {
  Tensor ops[] = {out, in[0], in[1]};
  auto it = TensorIterator::build(Span<Tensor>(ops, 3));
  visit_dtype<Mask>(in[0]->dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    cpu_kernel<T, T, 2>(it, lift<T>(make_op(Tag<C>{}, args)));
  });
}

void add_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar> args) {
  binary<kAllTypes>(out, in, args, "add", [](auto tag, Span<Scalar> a) {
    using C = typename decltype(tag)::type;
    if constexpr (std::is_same_v<C, bool>) {
      bool alpha = a[0].to<bool>();
      return [alpha](bool x, bool y) { return x || (alpha && y); };
    } else {
      C alpha = a[0].to<C>();
      return [alpha](C x, C y) { return C(x + alpha * y); };
    }
  });
}

void sub_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar> args) {
  binary<kRealTypes | kComplexTypes>(out, in, args, "sub", [](auto tag, Span<Scalar> a) {
    using C = typename decltype(tag)::type;
    C alpha = a[0].to<C>();
    return [alpha](C x, C y) { return C(x - alpha * y); };
  });
}

void mul_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar> args) {
  binary<kAllTypes>(out, in, args, "mul", [](auto tag, Span<Scalar>) {
    using C = typename decltype(tag)::type;
    if constexpr (std::is_same_v<C, bool>) return [](bool x, bool y) { return x && y; };
    else return [](C x, C y) { return C(x * y); };
  });
}

}  // namespace

FLB_REGISTER_KERNEL("add", kCPU, add_kernel);
FLB_REGISTER_KERNEL("sub", kCPU, sub_kernel);
FLB_REGISTER_KERNEL("mul", kCPU, mul_kernel);

}  // namespace flambeau
