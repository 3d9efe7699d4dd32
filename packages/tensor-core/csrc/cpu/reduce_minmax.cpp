// CPU kernels of max/min reductions: amax/amin (values), argmax/argmin and
// max/min along a dim (values and first index), and the elementwise max/min of
// two tensors. NaN propagates, and the first NaN wins an index race, as in
// PyTorch.
#include "cpu/loops.h"
#include "cpu/reduce.h"
#include "dispatch/dispatcher.h"
#include "generated/kernels.h"
#include "ops/reduce_util.h"

namespace flambeau {

namespace {

constexpr uint32_t kMinMaxTypes = kRealTypes | kBoolTypes;

template <bool IsMax, class C>
C pick(C a, C x) {
  if constexpr (std::is_same_v<C, bool>) {
    return IsMax ? (a || x) : (a && x);
  } else if constexpr (IsMax) {
    return ((x > a) | (x != x)) ? x : a;  // branchless, so it vectorizes
  } else {
    return ((x < a) | (x != x)) ? x : a;
  }
}

template <bool IsMax, class C>
C lowest() {
  if constexpr (std::is_same_v<C, bool>)
    return !IsMax;
  else if constexpr (std::is_integral_v<C>) {
    return IsMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
  } else {
    return IsMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
  }
}

template <bool IsMax>
void extreme_kernel(const Tensor& out, const Tensor& in, IntList, Span<Scalar>) {
  visit_dtype<kMinMaxTypes>(in->dtype(), IsMax ? "amax" : "amin", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    AccBuffer<C> buf(out->sizes(), lowest<IsMax, C>());
    auto f = [](C a, C x) { return pick<IsMax>(a, x); };
    reduce_into<T, C>(buf, in, [](C a, T v) { return pick<IsMax>(a, static_cast<C>(v)); }, f);
    finish<T>(out, buf, [](C a) { return static_cast<T>(a); });
  });
}

template <class C>
struct ValIdx {
  C v;
  int64_t i;  // -1: nothing seen yet
};

// Whether b beats a: larger (smaller), NaN first, earlier index on ties.
template <bool IsMax, class C>
bool better(const ValIdx<C>& b, const ValIdx<C>& a) {
  if (a.i < 0) return b.i >= 0;
  if (b.i < 0) return false;
  bool an = a.v != a.v, bn = b.v != b.v;
  if (an || bn) return bn && (!an || b.i < a.i);
  if (b.v == a.v) return b.i < a.i;
  return IsMax ? b.v > a.v : b.v < a.v;
}

// values may be null (argmax); both are contiguous with `in`'s shape and dim kept as 1.
template <bool IsMax>
void arg_kernel(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim) {
  visit_dtype<kMinMaxTypes>(in->dtype(), IsMax ? "argmax" : "argmin", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    using A = ValIdx<C>;
    AccBuffer<A> buf(indices->sizes(), A{C(0), -1});
    reduce_into2<T, int64_t, A>(
        buf, in, positions_along(in, dim),
        [](A a, T v, int64_t i) {
          A c{static_cast<C>(v), i};
          return better<IsMax>(c, a) ? c : a;
        },
        [](A a, A b) { return better<IsMax>(b, a) ? b : a; });
    finish<int64_t>(indices, buf, [](A a) { return a.i; });
    if (values) finish<T>(values, buf, [](A a) { return static_cast<T>(a.v); });
  });
}

template <bool IsMax>
void binary_kernel(const Tensor& out, Span<Tensor> in, Span<Scalar>) {
  Tensor ops[] = {out, in[0], in[1]};
  auto it = TensorIterator::build(Span<Tensor>(ops, 3));
  visit_dtype<kMinMaxTypes>(in[0]->dtype(), IsMax ? "maximum" : "minimum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    cpu_kernel<T, T, 2>(it, lift<T>([](C a, C b) {
                          if constexpr (std::is_same_v<C, bool>) {
                            return IsMax ? (a || b) : (a && b);
                          } else {
                            if (a != a) return a;
                            return pick<IsMax>(a, b);
                          }
                        }));
  });
}

}  // namespace

FLB_REGISTER_KERNEL(amax, kCPU, extreme_kernel<true>);
FLB_REGISTER_KERNEL(amin, kCPU, extreme_kernel<false>);
FLB_REGISTER_KERNEL(argmax, kCPU, arg_kernel<true>);
FLB_REGISTER_KERNEL(argmin, kCPU, arg_kernel<false>);
FLB_REGISTER_KERNEL(max_other, kCPU, binary_kernel<true>);
FLB_REGISTER_KERNEL(min_other, kCPU, binary_kernel<false>);

}  // namespace flambeau
