// Products of many small left-hand matrices with one right-hand matrix packed once: a
// recurrent layer's per-step GEMMs (the running state times w_hh, 32 rows against a
// 256 x 1024 weight). OpenBLAS repacks the weight on every call, which costs as much as
// a fifth of such a product; here it is packed once per layer call, in panels that a
// register-tiled kernel (compiled per CPU capability, see cpu_capability.h) streams.
//
// A panel is kWidth consecutive columns of B (64 bytes of each row, 16 floats or 8
// doubles), stored k x kWidth contiguous, padded with zeros past its valid columns.
// The caller chooses which columns each panel holds, so a recurrent layer can put the
// four gates of the same hidden units side by side (see nn_rnn_layer_kernels.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "core/scratch.h"

namespace flambeau {

template <class T>
class PackedMatrix {
 public:
  static constexpr int64_t kWidth = 64 / static_cast<int64_t>(sizeof(T));

  struct Panel {
    int64_t first;  // B's column of the panel's first lane
    int64_t width;  // valid lanes, 1..kWidth
  };

  // Panels of the k x n matrix B, where B(kk, j) = trans ? b[j * ldb + kk] : b[kk * ldb + j].
  PackedMatrix(const T* b, int64_t ldb, bool trans, int64_t k, std::vector<Panel> panels);

  // The panels of B's columns in order: [0, kWidth), [kWidth, 2 kWidth), ...
  static std::vector<Panel> consecutive(int64_t n);

  int64_t k() const { return k_; }
  int64_t panels() const { return static_cast<int64_t>(panels_.size()); }
  const Panel& panel(int64_t p) const { return panels_[static_cast<size_t>(p)]; }
  const T* data(int64_t p) const { return data_.data() + p * k_ * kWidth; }

 private:
  int64_t k_;
  std::vector<Panel> panels_;
  Scratch<T> data_;
};

// For q < count and the panels p + q (all of one width): out_q[r * ld_out + lane] =
// init_q[r * ld_init + lane] (0 without init) + sum over kk of a[r * lda + kk] *
// B(kk, panel (p + q)'s first + lane), for r < m and lane < the width, where init_q =
// init + q * init_step and out_q = out + q * out_step. Runs on the calling thread; init
// may equal out. AVX-512 builds read four panels side by side.
template <class T>
void packed_panel_product(const T* a, int64_t lda, int64_t m, const PackedMatrix<T>& b, int64_t p,
                          int64_t count, const T* init, int64_t ld_init, int64_t init_step, T* out,
                          int64_t ld_out, int64_t out_step);

// C = A @ B (accumulate: C += A @ B) for A m x k (lda) and B packed by `consecutive`, on
// the calling thread.
template <class T>
void packed_product(const T* a, int64_t lda, int64_t m, const PackedMatrix<T>& b, bool accumulate,
                    T* c, int64_t ldc);

// packed_product with B's panels spread over the thread pool.
template <class T>
void packed_gemm(const T* a, int64_t lda, int64_t m, const PackedMatrix<T>& b, bool accumulate,
                 T* c, int64_t ldc);

}  // namespace flambeau
