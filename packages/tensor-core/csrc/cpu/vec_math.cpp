// Vectorized contiguous loops for float32/float64 math functions.
//
// GCC vectorizes a loop that calls expf when expf is declared with the `simd`
// attribute: it then calls glibc's libmvec (_ZGVdN8v_expf for AVX2, _ZGVeN16v_expf
// for AVX-512 and so on), which keeps the scalar functions' NaN/inf semantics. glibc
// only declares the attribute under -ffast-math, which would break NaN handling
// elsewhere, so we declare it here. Each loop is built for every CPU capability
// (FLB_MULTIVERSION, cpu/cpu_capability.h) and calls nothing inline from other
// headers, so the wide copies cannot leak into code run on older CPUs.
#include "cpu/vec_math.h"

#include <math.h>

#include "cpu/cpu_capability.h"

#if defined(__x86_64__) && defined(__GLIBC__) && !defined(__clang__)
#define FLB_SIMD __attribute__((simd("notinbranch")))
#if __GLIBC_PREREQ(2, 22)
#define FLB_SIMD_V22 FLB_SIMD
#endif
#if __GLIBC_PREREQ(2, 35)
#define FLB_SIMD_V35 FLB_SIMD
#endif
#endif
#ifndef FLB_SIMD_V22
#define FLB_SIMD_V22
#endif
#ifndef FLB_SIMD_V35
#define FLB_SIMD_V35
#endif

// Re-declarations that add the simd attribute (libmvec variants exist for these).
extern "C" {
#define FLB_DECL(attr, name)          \
  float name##f(float) noexcept attr; \
  double name(double) noexcept attr;
FLB_DECL(FLB_SIMD_V22, exp)
FLB_DECL(FLB_SIMD_V22, log)
FLB_DECL(FLB_SIMD_V22, sin)
FLB_DECL(FLB_SIMD_V22, cos)
FLB_DECL(FLB_SIMD_V35, exp2)
FLB_DECL(FLB_SIMD_V35, expm1)
FLB_DECL(FLB_SIMD_V35, log1p)
FLB_DECL(FLB_SIMD_V35, log2)
FLB_DECL(FLB_SIMD_V35, log10)
FLB_DECL(FLB_SIMD_V35, tan)
FLB_DECL(FLB_SIMD_V35, asin)
FLB_DECL(FLB_SIMD_V35, acos)
FLB_DECL(FLB_SIMD_V35, atan)
FLB_DECL(FLB_SIMD_V35, sinh)
FLB_DECL(FLB_SIMD_V35, cosh)
FLB_DECL(FLB_SIMD_V35, tanh)
FLB_DECL(FLB_SIMD_V35, asinh)
FLB_DECL(FLB_SIMD_V35, acosh)
FLB_DECL(FLB_SIMD_V35, atanh)
FLB_DECL(FLB_SIMD_V35, erf)
FLB_DECL(FLB_SIMD_V35, erfc)
#undef FLB_DECL
}

namespace flambeau::vec {

#define FLB_VEC_LOOP(name, T, expr)                                                        \
  FLB_MULTIVERSION_BODY void name##_body(const T* __restrict__ in, T* __restrict__ out,    \
                                         int64_t n) {                                      \
    for (int64_t i = 0; i < n; ++i) {                                                      \
      T x = in[i];                                                                         \
      out[i] = (expr);                                                                     \
    }                                                                                      \
  }                                                                                        \
  FLB_MULTIVERSION(void, name, (const T* __restrict__ in, T* __restrict__ out, int64_t n), \
                   (in, out, n))
#define FLB_VEC_LIBM(name)                    \
  FLB_VEC_LOOP(name##_f32, float, name##f(x)) \
  FLB_VEC_LOOP(name##_f64, double, name(x))

FLB_VEC_LIBM(exp)
FLB_VEC_LIBM(exp2)
FLB_VEC_LIBM(expm1)
FLB_VEC_LIBM(log)
FLB_VEC_LIBM(log1p)
FLB_VEC_LIBM(log2)
FLB_VEC_LIBM(log10)
FLB_VEC_LIBM(sqrt)
// libmvec's vector sinf can land one ulp past +-1 (sinf(777.5442f) = -1.0000001f), which
// breaks asin(sin(x)) and any bound a caller relies on: results are held to [-1, 1], NaN
// kept (the comparisons are false for NaN).
#define FLB_UNIT(T, v)                         \
  ({                                           \
    T u = (v);                                 \
    u > T(1) ? T(1) : (u < T(-1) ? T(-1) : u); \
  })
FLB_VEC_LOOP(sin_f32, float, FLB_UNIT(float, sinf(x)))
FLB_VEC_LOOP(sin_f64, double, FLB_UNIT(double, sin(x)))
FLB_VEC_LOOP(cos_f32, float, FLB_UNIT(float, cosf(x)))
FLB_VEC_LOOP(cos_f64, double, FLB_UNIT(double, cos(x)))
#undef FLB_UNIT
FLB_VEC_LIBM(tan)
FLB_VEC_LIBM(asin)
FLB_VEC_LIBM(acos)
FLB_VEC_LIBM(atan)
FLB_VEC_LIBM(sinh)
FLB_VEC_LIBM(cosh)
FLB_VEC_LIBM(tanh)
FLB_VEC_LIBM(asinh)
FLB_VEC_LIBM(acosh)
FLB_VEC_LIBM(atanh)
FLB_VEC_LIBM(erf)
FLB_VEC_LIBM(erfc)

FLB_VEC_LOOP(rsqrt_f32, float, 1.0f / sqrtf(x))
FLB_VEC_LOOP(rsqrt_f64, double, 1.0 / sqrt(x))
FLB_VEC_LOOP(sigmoid_f32, float, 1.0f / (1.0f + expf(-x)))
FLB_VEC_LOOP(sigmoid_f64, double, 1.0 / (1.0 + exp(-x)))
FLB_VEC_LOOP(reciprocal_f32, float, 1.0f / x)
FLB_VEC_LOOP(reciprocal_f64, double, 1.0 / x)
// NaN propagates (x > 0 is false for NaN, and NaN is kept), as in PyTorch.
FLB_VEC_LOOP(relu_f32, float, x > 0.0f ? x : (x != x ? x : 0.0f))
FLB_VEC_LOOP(relu_f64, double, x > 0.0 ? x : (x != x ? x : 0.0))

// Activations of the nn kernels (cpu/nn_activation_kernels.cpp).
FLB_VEC_LOOP(gelu_f32, float, 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)))
FLB_VEC_LOOP(gelu_f64, double, 0.5 * x * (1.0 + erf(x * 0.70710678118654752440)))
FLB_VEC_LOOP(gelu_tanh_f32, float,
             0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x))))
FLB_VEC_LOOP(gelu_tanh_f64, double,
             0.5 * x * (1.0 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x))))
FLB_VEC_LOOP(silu_f32, float, x / (1.0f + expf(-x)))
FLB_VEC_LOOP(silu_f64, double, x / (1.0 + exp(-x)))

// LSTM's cell over n lanes (cpu/nn_rnn_layer_kernels.cpp): one pass, five libmvec calls
// per vector, instead of a pass per activation and per product.
#define FLB_VEC_LSTM_CELL(name, T, EXP, TANH)                                                \
  FLB_MULTIVERSION_BODY void name##_body(T* __restrict__ gates, T* __restrict__ c,           \
                                         T* __restrict__ h, int64_t n) {                     \
    T* __restrict__ gi = gates;                                                              \
    T* __restrict__ gf = gates + n;                                                          \
    T* __restrict__ gg = gates + 2 * n;                                                      \
    T* __restrict__ go = gates + 3 * n;                                                      \
    for (int64_t e = 0; e < n; ++e) {                                                        \
      const T i = T(1) / (T(1) + EXP(-gi[e])), f = T(1) / (T(1) + EXP(-gf[e]));              \
      const T g = TANH(gg[e]), o = T(1) / (T(1) + EXP(-go[e]));                              \
      const T cell = f * c[e] + i * g;                                                       \
      gi[e] = i;                                                                             \
      gf[e] = f;                                                                             \
      gg[e] = g;                                                                             \
      go[e] = o;                                                                             \
      c[e] = cell;                                                                           \
      h[e] = o * TANH(cell);                                                                 \
    }                                                                                        \
  }                                                                                          \
  FLB_MULTIVERSION(void, name,                                                               \
                   (T* __restrict__ gates, T* __restrict__ c, T* __restrict__ h, int64_t n), \
                   (gates, c, h, n))
FLB_VEC_LSTM_CELL(lstm_cell_f32, float, expf, tanhf)
FLB_VEC_LSTM_CELL(lstm_cell_f64, double, exp, tanh)
#undef FLB_VEC_LSTM_CELL

// Softmax's middle pass: out = exp(in - shift), returning the sum of out.
#define FLB_VEC_EXP_SHIFT_SUM(name, T, EXP)                                                      \
  FLB_MULTIVERSION_BODY T name##_body(const T* __restrict__ in, T* __restrict__ out, int64_t n,  \
                                      T shift) {                                                 \
    T s = 0;                                                                                     \
    _Pragma("omp simd reduction(+ : s)") for (int64_t i = 0; i < n; ++i) {                       \
      T e = EXP(in[i] - shift);                                                                  \
      out[i] = e;                                                                                \
      s += e;                                                                                    \
    }                                                                                            \
    return s;                                                                                    \
  }                                                                                              \
  FLB_MULTIVERSION(T, name, (const T* __restrict__ in, T* __restrict__ out, int64_t n, T shift), \
                   (in, out, n, shift))
FLB_VEC_EXP_SHIFT_SUM(exp_shift_sum_f32, float, expf)
FLB_VEC_EXP_SHIFT_SUM(exp_shift_sum_f64, double, exp)
#undef FLB_VEC_EXP_SHIFT_SUM

}  // namespace flambeau::vec
