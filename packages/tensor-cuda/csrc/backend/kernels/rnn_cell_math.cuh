// One hidden unit of the fused LSTM and GRU cells and their backwards, with the
// CPU's formulas and workspace layout (cpu/nn_rnn_kernels.cpp): the cell kernels
// (rnn_cell_ops.cu) run one thread per (row, unit). Gates are rows of k * h
// values, the chunks side by side; a missing bias is a null pointer.
#pragma once
#include <cstdint>

namespace flambeau::cuda::kernels {

template <class T>
__device__ inline T sigmoid_of(T x) {
  return T(1) / (T(1) + exp(-x));
}

template <class T>
__device__ inline T bias_at(const T* b, int64_t j) {
  return b ? b[j] : T(0);
}

// LSTM: workspace row r holds the gates i, f, g, o; cy = f * cx + i * g,
// hy = o * tanh(cy).
template <class T>
__device__ inline void lstm_cell_unit(const T* ig, const T* hg, const T* c0, const T* bi,
                                      const T* bh, T* h1, T* c1, T* ws, int64_t r, int64_t j,
                                      int64_t h) {
  const T *a = ig + r * 4 * h, *b = hg + r * 4 * h;
  T* w = ws + r * 4 * h;
  T gate[4];
  for (int q = 0; q < 4; ++q) {
    const int64_t col = q * h + j;
    const T pre = a[col] + b[col] + bias_at(bi, col) + bias_at(bh, col);
    gate[q] = q == 2 ? tanh(pre) : sigmoid_of(pre);
    w[col] = gate[q];
  }
  const T c = gate[1] * c0[r * h + j] + gate[0] * gate[2];
  c1[r * h + j] = c;
  h1[r * h + j] = tanh(c) * gate[3];
}

template <class T>
__device__ inline void lstm_cell_backward_unit(const T* ghy, const T* gcy, const T* c0, const T* c1,
                                               const T* ws, T* gg, T* gc0, int64_t r, int64_t j,
                                               int64_t h) {
  const T* w = ws + r * 4 * h;
  T* out = gg + r * 4 * h;
  const int64_t e = r * h + j;
  const T i = w[j], f = w[h + j], g = w[2 * h + j], o = w[3 * h + j];
  const T tc = tanh(c1[e]);
  const T dh = ghy ? ghy[e] : T(0);
  const T dc = dh * o * (T(1) - tc * tc) + (gcy ? gcy[e] : T(0));
  out[j] = dc * g * i * (T(1) - i);
  out[h + j] = dc * c0[e] * f * (T(1) - f);
  out[2 * h + j] = dc * i * (T(1) - g * g);
  out[3 * h + j] = dh * tc * o * (T(1) - o);
  gc0[e] = dc * f;
}

// GRU: workspace row r holds r, z, n, hn (the hidden new-gate part with its
// bias) and hx; hy = (1 - z) * n + z * hx.
template <class T>
__device__ inline void gru_cell_unit(const T* ig, const T* hg, const T* h0, const T* bi,
                                     const T* bh, T* h1, T* ws, int64_t r, int64_t j, int64_t h) {
  const T *a = ig + r * 3 * h, *b = hg + r * 3 * h;
  T* w = ws + r * 5 * h;
  const T reset = sigmoid_of(a[j] + bias_at(bi, j) + b[j] + bias_at(bh, j));
  const T update = sigmoid_of(a[h + j] + bias_at(bi, h + j) + b[h + j] + bias_at(bh, h + j));
  const T hn = b[2 * h + j] + bias_at(bh, 2 * h + j);
  const T n = tanh(a[2 * h + j] + bias_at(bi, 2 * h + j) + reset * hn);
  const T prev = h0[r * h + j];
  w[j] = reset;
  w[h + j] = update;
  w[2 * h + j] = n;
  w[3 * h + j] = hn;
  w[4 * h + j] = prev;
  h1[r * h + j] = (T(1) - update) * n + update * prev;
}

template <class T>
__device__ inline void gru_cell_backward_unit(const T* ghy, const T* ws, T* gi, T* ghg, T* gh0,
                                              int64_t r, int64_t j, int64_t h) {
  const T* w = ws + r * 5 * h;
  T *di = gi + r * 3 * h, *dh = ghg + r * 3 * h;
  const T reset = w[j], update = w[h + j], n = w[2 * h + j], hn = w[3 * h + j], prev = w[4 * h + j];
  const T g = ghy[r * h + j];
  const T dn = g * (T(1) - update) * (T(1) - n * n);
  const T dz = g * (prev - n) * update * (T(1) - update);
  const T dr = dn * hn * reset * (T(1) - reset);
  di[j] = dr;
  di[h + j] = dz;
  di[2 * h + j] = dn;
  dh[j] = dr;
  dh[h + j] = dz;
  dh[2 * h + j] = dn * reset;
  gh0[r * h + j] = g * update;
}

}  // namespace flambeau::cuda::kernels
