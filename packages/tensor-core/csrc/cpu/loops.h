// Elementwise loops over a TensorIterator. cpu_kernel<T>(it, f) applies
// f(in0, in1, ...) -> out with every operand of type T (callers cast inputs to
// the compute type first); the out type may differ (comparisons write bool).
// Contiguous and broadcast-scalar runs take plain pointer loops the compiler
// vectorizes; anything else walks byte strides.
#pragma once
#include <utility>

#include "cpu/tensor_iterator.h"

namespace flambeau {

namespace detail {

template <class Out, class In, class F, size_t... I>
inline void strided_run(char** data, const int64_t* s, int64_t n, const F& f,
                        std::index_sequence<I...>) {
  char* out = data[0];
  char* in[] = {data[I + 1]...};
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<Out*>(out + i * s[0]) =
        f(*reinterpret_cast<const In*>(in[I] + i * s[I + 1])...);
  }
}

template <class Out, class In, class F, size_t... I>
inline void contiguous_run(char** data, int64_t n, const F& f, std::index_sequence<I...>) {
  Out* __restrict__ out = reinterpret_cast<Out*>(data[0]);
  const In* in[] = {reinterpret_cast<const In*>(data[I + 1])...};
  for (int64_t i = 0; i < n; ++i) out[i] = f(in[I][i]...);
}

}  // namespace detail

// Applies f to every element; N inputs of type In, output of type Out.
template <class Out, class In, size_t N, class F>
void cpu_kernel(const TensorIterator& it, const F& f) {
  using Seq = std::make_index_sequence<N>;
  it.for_each([&](char** data, const int64_t* s, int64_t n) {
    bool contiguous = s[0] == sizeof(Out);
    for (size_t i = 1; i <= N; ++i) contiguous = contiguous && s[i] == sizeof(In);
    if (contiguous) return detail::contiguous_run<Out, In>(data, n, f, Seq{});
    if constexpr (N == 2) {
      // One side broadcast (tensor op scalar): hoist the scalar out of the loop.
      if (s[0] == sizeof(Out) && s[1] == sizeof(In) && s[2] == 0) {
        const In b = *reinterpret_cast<const In*>(data[2]);
        Out* __restrict__ out = reinterpret_cast<Out*>(data[0]);
        const In* __restrict__ a = reinterpret_cast<const In*>(data[1]);
        for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b);
        return;
      }
      if (s[0] == sizeof(Out) && s[1] == 0 && s[2] == sizeof(In)) {
        const In a = *reinterpret_cast<const In*>(data[1]);
        Out* __restrict__ out = reinterpret_cast<Out*>(data[0]);
        const In* __restrict__ b = reinterpret_cast<const In*>(data[2]);
        for (int64_t i = 0; i < n; ++i) out[i] = f(a, b[i]);
        return;
      }
    }
    detail::strided_run<Out, In>(data, s, n, f, Seq{});
  });
}

// For 16-bit floats: lift f over float so kernels are written once.
template <class T, class F>
auto lift(const F& f) {
  if constexpr (std::is_same_v<T, compute_t<T>>) {
    return f;
  } else {
    return [f](auto... x) {
      auto r = f(static_cast<float>(x)...);
      if constexpr (std::is_same_v<decltype(r), float>)
        return T(r);
      else
        return r;
    };
  }
}

}  // namespace flambeau
