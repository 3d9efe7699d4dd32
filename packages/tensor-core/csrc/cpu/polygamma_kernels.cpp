// CPU kernel of polygamma(n, x); args[0] is n. Inputs arrive promoted to a
// float type; 16-bit types compute in double like digamma.
#include "cpu/pointwise_loops.h"
#include "cpu/polygamma.h"
#include "generated/kernels.h"

namespace flambeau {

namespace {
void polygamma_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar> args) {
  const int64_t n = args[0].to_int();
  unary_op<kFloatTypes>(out, in[0], "polygamma", [n](auto tag) {
    using C = typename decltype(tag)::type;
    return [n](C x) -> C { return C(special::polygamma(n, static_cast<double>(x))); };
  });
}
}  // namespace

FLB_REGISTER_KERNEL(polygamma, kCPU, polygamma_kernel);

}  // namespace flambeau
