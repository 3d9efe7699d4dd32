// The packed right-hand matrix and its register-tiled product (see packed_gemm.h).
#include "cpu/packed_gemm.h"

#include <algorithm>
#include <cstring>

#include "cpu/cpu_capability.h"
#include "cpu/parallel.h"

namespace flambeau {

namespace {

// A vector of BYTES bytes of T: the widest register of the copy being compiled (see
// FLB_MULTIVERSION_VECTOR); a panel row is kVectors of them.
template <class T, int BYTES>
struct Vector {
  typedef T type __attribute__((vector_size(BYTES)));
  static constexpr int64_t kLanes = BYTES / static_cast<int64_t>(sizeof(T));
  static constexpr int kPerRow = 64 / BYTES;
};

constexpr int kTileRows = 6;  // rows per tile: 6 x 64 bytes of sums fit the 16 AVX2 registers

// Rows [0, ROWS) of a times the panel: sums kept in registers over the whole of k.
template <class T, int BYTES, int ROWS>
FLB_MULTIVERSION_BODY void tile(int64_t k, const T* a, int64_t lda, const T* panel, int64_t width,
                                const T* init, int64_t ld_init, T* out, int64_t ld_out) {
  using V = typename Vector<T, BYTES>::type;
  constexpr int kPerRow = Vector<T, BYTES>::kPerRow;
  constexpr int64_t kLanes = Vector<T, BYTES>::kLanes, kWidth = PackedMatrix<T>::kWidth;
  V sum[ROWS][kPerRow];
  for (int r = 0; r < ROWS; ++r)
    for (int v = 0; v < kPerRow; ++v) {
      sum[r][v] = V{};
      if (!init) continue;
      if (width == kWidth) {
        std::memcpy(&sum[r][v], init + r * ld_init + v * kLanes, sizeof(V));
      } else {
        for (int64_t l = 0; l < kLanes && v * kLanes + l < width; ++l)
          sum[r][v][l] = init[r * ld_init + v * kLanes + l];
      }
    }
  for (int64_t kk = 0; kk < k; ++kk) {
    V w[kPerRow];
    for (int v = 0; v < kPerRow; ++v)
      std::memcpy(&w[v], panel + kk * kWidth + v * kLanes, sizeof(V));
    for (int r = 0; r < ROWS; ++r) {
      const T x = a[r * lda + kk];
      for (int v = 0; v < kPerRow; ++v) sum[r][v] += x * w[v];  // contracted to FMA
    }
  }
  for (int r = 0; r < ROWS; ++r)
    for (int v = 0; v < kPerRow; ++v) {
      if (width == kWidth) {
        std::memcpy(out + r * ld_out + v * kLanes, &sum[r][v], sizeof(V));
      } else {
        for (int64_t l = 0; l < kLanes && v * kLanes + l < width; ++l)
          out[r * ld_out + v * kLanes + l] = sum[r][v][l];
      }
    }
}

template <class T, int BYTES>
FLB_MULTIVERSION_BODY void panel_rows(int64_t m, int64_t k, const T* a, int64_t lda, const T* panel,
                                      int64_t width, const T* init, int64_t ld_init, T* out,
                                      int64_t ld_out) {
  // Full tiles, but a remainder of 1 or 2 rows (weak tiles: few sums per weight
  // loaded) takes 2 rows or 1 from the last full tile instead: 32 rows = 6x4 + 4 + 4.
  int64_t full = m / kTileRows;
  if (full > 0 && m % kTileRows > 0 && m % kTileRows < 3) --full;
  int64_t r = 0;
  for (; r < full * kTileRows; r += kTileRows)
    tile<T, BYTES, kTileRows>(k, a + r * lda, lda, panel, width,
                              init ? init + r * ld_init : nullptr, ld_init, out + r * ld_out,
                              ld_out);
  a += r * lda;
  init = init ? init + r * ld_init : nullptr;
  out += r * ld_out;
  if (m - r > kTileRows) {  // 7 or 8 rows: two tiles of 4 and 3 or 4
    tile<T, BYTES, 4>(k, a, lda, panel, width, init, ld_init, out, ld_out);
    a += 4 * lda;
    init = init ? init + 4 * ld_init : nullptr;
    out += 4 * ld_out;
    r += 4;
  }
  switch (m - r) {
    case 5:
      return tile<T, BYTES, 5>(k, a, lda, panel, width, init, ld_init, out, ld_out);
    case 4:
      return tile<T, BYTES, 4>(k, a, lda, panel, width, init, ld_init, out, ld_out);
    case 3:
      return tile<T, BYTES, 3>(k, a, lda, panel, width, init, ld_init, out, ld_out);
    case 2:
      return tile<T, BYTES, 2>(k, a, lda, panel, width, init, ld_init, out, ld_out);
    case 1:
      return tile<T, BYTES, 1>(k, a, lda, panel, width, init, ld_init, out, ld_out);
    default:
      return;
  }
}

template <int BYTES>
FLB_MULTIVERSION_BODY void panel_rows_f32_body(int64_t m, int64_t k, const float* a, int64_t lda,
                                               const float* panel, int64_t width, const float* init,
                                               int64_t ld_init, float* out, int64_t ld_out) {
  panel_rows<float, BYTES>(m, k, a, lda, panel, width, init, ld_init, out, ld_out);
}
FLB_MULTIVERSION_VECTOR(void, panel_rows_f32,
                        (int64_t m, int64_t k, const float* a, int64_t lda, const float* panel,
                         int64_t width, const float* init, int64_t ld_init, float* out,
                         int64_t ld_out),
                        (m, k, a, lda, panel, width, init, ld_init, out, ld_out))

template <int BYTES>
FLB_MULTIVERSION_BODY void panel_rows_f64_body(int64_t m, int64_t k, const double* a, int64_t lda,
                                               const double* panel, int64_t width,
                                               const double* init, int64_t ld_init, double* out,
                                               int64_t ld_out) {
  panel_rows<double, BYTES>(m, k, a, lda, panel, width, init, ld_init, out, ld_out);
}
FLB_MULTIVERSION_VECTOR(void, panel_rows_f64,
                        (int64_t m, int64_t k, const double* a, int64_t lda, const double* panel,
                         int64_t width, const double* init, int64_t ld_init, double* out,
                         int64_t ld_out),
                        (m, k, a, lda, panel, width, init, ld_init, out, ld_out))

}  // namespace

template <class T>
PackedMatrix<T>::PackedMatrix(const T* b, int64_t ldb, bool trans, int64_t k,
                              std::vector<Panel> panels)
    : k_(k),
      panels_(std::move(panels)),
      data_(static_cast<size_t>(
          std::max<int64_t>(1, k * kWidth * static_cast<int64_t>(panels_.size())))) {
  for (int64_t p = 0; p < this->panels(); ++p) {
    const Panel& pn = panel(p);
    T* dst = data_.data() + p * k * kWidth;  // zeroed by Scratch: the padding lanes stay 0
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t l = 0; l < pn.width; ++l) {
        const int64_t j = pn.first + l;
        dst[kk * kWidth + l] = trans ? b[j * ldb + kk] : b[kk * ldb + j];
      }
  }
}

template <class T>
std::vector<typename PackedMatrix<T>::Panel> PackedMatrix<T>::consecutive(int64_t n) {
  std::vector<Panel> panels;
  for (int64_t j = 0; j < n; j += kWidth) panels.push_back({j, std::min(kWidth, n - j)});
  return panels;
}

template <class T>
void packed_panel_product(const T* a, int64_t lda, int64_t m, const PackedMatrix<T>& b, int64_t p,
                          const T* init, int64_t ld_init, T* out, int64_t ld_out) {
  const int64_t width = b.panel(p).width;
  if constexpr (std::is_same_v<T, float>) {
    panel_rows_f32(m, b.k(), a, lda, b.data(p), width, init, ld_init, out, ld_out);
  } else {
    panel_rows_f64(m, b.k(), a, lda, b.data(p), width, init, ld_init, out, ld_out);
  }
}

template <class T>
void packed_gemm(const T* a, int64_t lda, int64_t m, const PackedMatrix<T>& b, bool accumulate,
                 T* c, int64_t ldc) {
  // A panel's product is worth a thread from a few thousand multiply-adds.
  const int64_t per_panel = std::max<int64_t>(1, m * b.k() * PackedMatrix<T>::kWidth);
  parallel_for(0, b.panels(), std::max<int64_t>(1, 8192 / per_panel), [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      T* out = c + b.panel(p).first;
      packed_panel_product(a, lda, m, b, p, accumulate ? out : nullptr, ldc, out, ldc);
    }
  });
}

template class PackedMatrix<float>;
template class PackedMatrix<double>;
template void packed_panel_product<float>(const float*, int64_t, int64_t,
                                          const PackedMatrix<float>&, int64_t, const float*,
                                          int64_t, float*, int64_t);
template void packed_panel_product<double>(const double*, int64_t, int64_t,
                                           const PackedMatrix<double>&, int64_t, const double*,
                                           int64_t, double*, int64_t);
template void packed_gemm<float>(const float*, int64_t, int64_t, const PackedMatrix<float>&, bool,
                                 float*, int64_t);
template void packed_gemm<double>(const double*, int64_t, int64_t, const PackedMatrix<double>&,
                                  bool, double*, int64_t);

}  // namespace flambeau
