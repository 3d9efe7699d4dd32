// What the recurrent kernels (nn_rnn_kernels.cpp: the cells; nn_rnn_layer_kernels.cpp:
// whole layers) share: their dtypes, in-place vectorized activations, optional
// tensors and biases, and the row split of the gate arithmetic.
#pragma once
#include <algorithm>
#include <cstdint>

#include "core/tensor.h"
#include "cpu/parallel.h"
#include "cpu/vec_math.h"
#include "dispatch/dispatcher.h"

namespace flambeau::rnn {

constexpr uint32_t kSingleOrDouble =
    dtype_bit(ScalarType::Float32) | dtype_bit(ScalarType::Float64);

// Vectorized activations; in may equal out.
inline void sigmoid_n(const float* in, float* out, int64_t n) { vec::sigmoid_f32(in, out, n); }
inline void sigmoid_n(const double* in, double* out, int64_t n) { vec::sigmoid_f64(in, out, n); }
inline void tanh_n(const float* in, float* out, int64_t n) { vec::tanh_f32(in, out, n); }
inline void tanh_n(const double* in, double* out, int64_t n) { vec::tanh_f64(in, out, n); }
// LSTM's cell over n lanes in place (vec_math.h): gates i f g o activated, c updated, h
// written.
inline void lstm_cell(float* gates, float* c, float* h, int64_t n) {
  vec::lstm_cell_f32(gates, c, h, n);
}
inline void lstm_cell(double* gates, double* c, double* h, int64_t n) {
  vec::lstm_cell_f64(gates, c, h, n);
}

// An optional tensor's data, or nullptr.
template <class T>
const T* data_or_null(const Tensor& t) {
  return t ? t->data_as<T>() : nullptr;
}

// Element j of an optional bias, or 0 without one.
template <class T>
T bias_at(const T* b, int64_t j) {
  return b ? b[j] : T(0);
}

// Rows in parallel; a row of `width` gates costs several transcendental functions each.
template <class F>
void for_rows(int64_t rows, int64_t width, const F& f) {
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / 8 / std::max<int64_t>(width, 1)), f);
}

}  // namespace flambeau::rnn
