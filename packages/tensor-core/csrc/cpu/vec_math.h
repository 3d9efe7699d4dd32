// Contiguous float32/float64 loops of transcendental functions, vectorized
// through glibc's libmvec (see vec_math.cpp). vec_<name>_f32(in, out, n) writes
// out[i] = name(in[i]); in may equal out (in-place), but must not partly overlap.
#pragma once
#include <cstdint>

namespace flambeau::vec {

#define FLB_VEC_MATH_OPS(X) \
  X(exp)                    \
  X(exp2)                   \
  X(expm1)                  \
  X(log)                    \
  X(log1p)                  \
  X(log2)                   \
  X(log10)                  \
  X(sqrt)                   \
  X(rsqrt)                  \
  X(sin)                    \
  X(cos)                    \
  X(tan)                    \
  X(asin)                   \
  X(acos)                   \
  X(atan)                   \
  X(sinh)                   \
  X(cosh)                   \
  X(tanh)                   \
  X(asinh)                  \
  X(acosh)                  \
  X(atanh)                  \
  X(sigmoid)                \
  X(erf)                    \
  X(erfc)                   \
  X(reciprocal)             \
  X(relu)

#define FLB_VEC_DECLARE(name)                              \
  void name##_f32(const float* in, float* out, int64_t n); \
  void name##_f64(const double* in, double* out, int64_t n);
FLB_VEC_MATH_OPS(FLB_VEC_DECLARE)
#undef FLB_VEC_DECLARE

// Activations and softmax's fused pass (used by the nn kernels); in may equal out.
#define FLB_VEC_NN_OPS(X) \
  X(gelu)                 \
  X(gelu_tanh)            \
  X(silu)
#define FLB_VEC_DECLARE(name)                              \
  void name##_f32(const float* in, float* out, int64_t n); \
  void name##_f64(const double* in, double* out, int64_t n);
FLB_VEC_NN_OPS(FLB_VEC_DECLARE)
#undef FLB_VEC_DECLARE
// LSTM's cell over n lanes, in place: gates holds the pre-activations of i, f, g and o
// (n each, in turn) and becomes sigmoid(i), sigmoid(f), tanh(g), sigmoid(o); c becomes
// f c + i g; h (not overlapping either) gets o tanh(c).
void lstm_cell_f32(float* gates, float* c, float* h, int64_t n);
void lstm_cell_f64(double* gates, double* c, double* h, int64_t n);
// out[i] = exp(in[i] - shift); returns the sum of out. in may equal out.
float exp_shift_sum_f32(const float* in, float* out, int64_t n, float shift);
double exp_shift_sum_f64(const double* in, double* out, int64_t n, double shift);

}  // namespace flambeau::vec
