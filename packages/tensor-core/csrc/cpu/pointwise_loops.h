// Dispatch helpers shared by the pointwise kernel files: pick the compute type
// of the (already promoted) inputs, build the iterator and run a functor that
// is written once over the compute type (float for the 16-bit floats).
#pragma once
#include <type_traits>

#include "cpu/loops.h"
#include "dispatch/dispatcher.h"

namespace flambeau {

// What a pointwise functor returns for compute type C.
enum class OutKind { Same, Bool, Real };

template <class C>
struct real_of {
  using type = C;
};
template <class R>
struct real_of<std::complex<R>> {
  using type = R;
};

template <class C, OutKind K>
using out_of =
    std::conditional_t<K == OutKind::Bool, bool,
                       std::conditional_t<K == OutKind::Real, typename real_of<C>::type, C>>;

// A contiguous-run routine (see cpu/vec_math.h): out[i] = f(in[i]).
template <class T>
using VecFn = void (*)(const T*, T*, int64_t);

// Runs out = f(in) where make(Tag<C>{}) builds f for compute type C. vec32/vec64
// replace the loop on contiguous float32/float64 runs (vectorized math).
template <uint32_t Mask, OutKind K = OutKind::Same, class Make>
void unary_op(const Tensor& out, const Tensor& in, const char* name, const Make& make,
              VecFn<float> vec32 = nullptr, VecFn<double> vec64 = nullptr) {
  Tensor ops[] = {out, in};
  auto it = TensorIterator::build(Span<Tensor>(ops, 2));
  visit_dtype<Mask>(in->dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    using R0 = out_of<C, K>;
    auto f = make(Tag<C>{});
    auto g = lift<T>([f](C x) -> R0 { return static_cast<R0>(f(x)); });
    using R = decltype(g(std::declval<T>()));
    VecFn<T> vec = nullptr;
    if constexpr (std::is_same_v<T, float> && std::is_same_v<R, T>) vec = vec32;
    if constexpr (std::is_same_v<T, double> && std::is_same_v<R, T>) vec = vec64;
    if constexpr (std::is_same_v<R, T>) {
      if (vec) {
        it.for_each([&](char** d, const int64_t* s, int64_t n) {
          if (s[0] == sizeof(T) && s[1] == sizeof(T)) {
            vec(reinterpret_cast<const T*>(d[1]), reinterpret_cast<T*>(d[0]), n);
          } else {
            detail::strided_run<T, T>(d, s, n, g, std::make_index_sequence<1>{});
          }
        });
        return;
      }
    }
    cpu_kernel<R, T, 1>(it, g);
  });
}

// out = f(a, b, ...) over N inputs of the same compute type.
template <uint32_t Mask, OutKind K = OutKind::Same, size_t N = 2, class Make>
void nary_op(const Tensor& out, Span<Tensor> in, const char* name, const Make& make) {
  Tensor ops[N + 1];
  ops[0] = out;
  for (size_t i = 0; i < N; ++i) ops[i + 1] = in[i];
  auto it = TensorIterator::build(Span<Tensor>(ops, N + 1));
  visit_dtype<Mask>(in[0]->dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    using R0 = out_of<C, K>;
    auto f = make(Tag<C>{});
    auto g = lift<T>([f](auto... x) -> R0 { return static_cast<R0>(f(static_cast<C>(x)...)); });
    using R = std::conditional_t<K == OutKind::Bool, bool, T>;
    cpu_kernel<R, T, N>(it, g);
  });
}

template <uint32_t Mask, OutKind K = OutKind::Same, class Make>
void binary_op(const Tensor& out, Span<Tensor> in, const char* name, const Make& make) {
  nary_op<Mask, K, 2>(out, in, name, make);
}

}  // namespace flambeau
