// The packed right-hand matrix and its register-tiled product (see packed_gemm.h).
#include "cpu/packed_gemm.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
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

// Panels one tile reads side by side, and its rows. With AVX-512's 32 registers: 6 rows
// x 4 panels of sums (24 chains of FMAs, enough to cover their latency on two FMA units,
// and 10 loads per 24 FMAs), or 12 rows x 2 panels, or 12 rows of one panel (12 chains;
// 6 rows of one panel, 6 chains and 7 loads, ran at about two thirds of 6 x 4). The
// narrower copies hold a panel row in 2 or 4 registers and take one panel of 6 rows.
template <int BYTES>
constexpr int kTilePanels = BYTES == 64 ? 4 : 1;
template <int BYTES, int PANELS>
constexpr int kWideTileRows = BYTES == 64 && PANELS < 4 ? 12 : kTileRows;

// Where a group of panels reads and writes: panel q's init at init + q * init_step and
// its out at out + q * out_step (a row of each ld_init, ld_out apart).
template <class T>
struct PanelGroup {
  const T* data;  // the first panel; the next ones follow it, k x kWidth each
  int64_t width;  // valid lanes of every panel of the group
  const T* init;
  int64_t ld_init, init_step;
  T* out;
  int64_t ld_out, out_step;

  PanelGroup rows_from(int64_t r) const {
    PanelGroup g = *this;
    g.init = init ? init + r * ld_init : nullptr;
    g.out = out + r * ld_out;
    return g;
  }
};

// Rows [0, ROWS) of a times PANELS panels of the group: sums kept in registers over the
// whole of k.
template <class T, int BYTES, int ROWS, int PANELS>
FLB_MULTIVERSION_BODY void tile(int64_t k, const T* a, int64_t lda, const PanelGroup<T>& g) {
  using V = typename Vector<T, BYTES>::type;
  constexpr int kPerRow = Vector<T, BYTES>::kPerRow, kVectors = PANELS * kPerRow;
  constexpr int64_t kLanes = Vector<T, BYTES>::kLanes, kWidth = PackedMatrix<T>::kWidth;
  const int64_t width = g.width;
  V sum[ROWS][kVectors];
  for (int r = 0; r < ROWS; ++r)
    for (int v = 0; v < kVectors; ++v) {
      sum[r][v] = V{};
      if (!g.init) continue;
      const T* from = g.init + r * g.ld_init + (v / kPerRow) * g.init_step + (v % kPerRow) * kLanes;
      if (width == kWidth) {
        std::memcpy(&sum[r][v], from, sizeof(V));
      } else {
        for (int64_t l = 0; l < kLanes && (v % kPerRow) * kLanes + l < width; ++l)
          sum[r][v][l] = from[l];
      }
    }
  for (int64_t kk = 0; kk < k; ++kk) {
    V w[kVectors];
    for (int v = 0; v < kVectors; ++v)
      std::memcpy(&w[v], g.data + (v / kPerRow) * k * kWidth + kk * kWidth + (v % kPerRow) * kLanes,
                  sizeof(V));
    for (int r = 0; r < ROWS; ++r) {
      const T x = a[r * lda + kk];
      for (int v = 0; v < kVectors; ++v) sum[r][v] += x * w[v];  // contracted to FMA
    }
  }
  for (int r = 0; r < ROWS; ++r)
    for (int v = 0; v < kVectors; ++v) {
      T* to = g.out + r * g.ld_out + (v / kPerRow) * g.out_step + (v % kPerRow) * kLanes;
      if (width == kWidth) {
        std::memcpy(to, &sum[r][v], sizeof(V));
      } else {
        for (int64_t l = 0; l < kLanes && (v % kPerRow) * kLanes + l < width; ++l)
          to[l] = sum[r][v][l];
      }
    }
}

// m rows of a times PANELS panels of the group.
template <class T, int BYTES, int PANELS>
FLB_MULTIVERSION_BODY void panel_rows(int64_t m, int64_t k, const T* a, int64_t lda,
                                      PanelGroup<T> g) {
  constexpr int kWide = kWideTileRows<BYTES, PANELS>;
  if constexpr (kWide > kTileRows) {  // wide tiles while there are rows for them
    int64_t r = 0;
    for (; r + kWide <= m; r += kWide)
      tile<T, BYTES, kWide, PANELS>(k, a + r * lda, lda, g.rows_from(r));
    a += r * lda;
    g = g.rows_from(r);
    m -= r;
  }
  // Full tiles, but a remainder of 1 or 2 rows (weak tiles: few sums per weight
  // loaded) takes 2 rows or 1 from the last full tile instead: 32 rows = 6x4 + 4 + 4.
  int64_t full = m / kTileRows;
  if (full > 0 && m % kTileRows > 0 && m % kTileRows < 3) --full;
  int64_t r = 0;
  for (; r < full * kTileRows; r += kTileRows)
    tile<T, BYTES, kTileRows, PANELS>(k, a + r * lda, lda, g.rows_from(r));
  if (m - r > kTileRows) {  // 7 or 8 rows: two tiles of 4 and 3 or 4
    tile<T, BYTES, 4, PANELS>(k, a + r * lda, lda, g.rows_from(r));
    r += 4;
  }
  const PanelGroup<T> rest = g.rows_from(r);
  a += r * lda;
  switch (m - r) {
    case 5:
      return tile<T, BYTES, 5, PANELS>(k, a, lda, rest);
    case 4:
      return tile<T, BYTES, 4, PANELS>(k, a, lda, rest);
    case 3:
      return tile<T, BYTES, 3, PANELS>(k, a, lda, rest);
    case 2:
      return tile<T, BYTES, 2, PANELS>(k, a, lda, rest);
    case 1:
      return tile<T, BYTES, 1, PANELS>(k, a, lda, rest);
    default:
      return;
  }
}

// m rows of a times the `count` panels of the group: kTilePanels at a time, then two, then
// one.
template <class T, int BYTES>
FLB_MULTIVERSION_BODY void panel_group_rows(int64_t m, int64_t k, const T* a, int64_t lda,
                                            PanelGroup<T> g, int64_t count) {
  constexpr int kPanels = kTilePanels<BYTES>;
  auto next = [&](int64_t panels) {
    g.data += panels * k * PackedMatrix<T>::kWidth;
    g.init = g.init ? g.init + panels * g.init_step : nullptr;
    g.out += panels * g.out_step;
    count -= panels;
  };
  if constexpr (kPanels > 1) {
    for (; count >= kPanels; next(kPanels)) panel_rows<T, BYTES, kPanels>(m, k, a, lda, g);
    if (count >= 2) {
      panel_rows<T, BYTES, 2>(m, k, a, lda, g);
      next(2);
    }
  }
  for (; count > 0; next(1)) panel_rows<T, BYTES, 1>(m, k, a, lda, g);
}

template <int BYTES, class T>
FLB_MULTIVERSION_BODY void run_group_body(int64_t m, int64_t k, const T* a, int64_t lda,
                                          const PanelGroup<T>& g, int64_t count) {
  panel_group_rows<T, BYTES>(m, k, a, lda, g, count);
}
// run_group(m, k, a, lda, g, count) for float and double: panel_group_rows built per
// capability.
#define FLB_RUN_GROUP(T)                                                                      \
  FLB_MULTIVERSION_VECTOR(                                                                    \
      void, run_group,                                                                        \
      (int64_t m, int64_t k, const T* a, int64_t lda, const PanelGroup<T>& g, int64_t count), \
      (m, k, a, lda, g, count))
FLB_RUN_GROUP(float)
FLB_RUN_GROUP(double)
#undef FLB_RUN_GROUP

// Panels [lo, hi) of a matrix packed by `consecutive`: its full panels as one group
// (adjacent columns), the last, narrower one apart.
template <class T>
void consecutive_product(const T* a, int64_t lda, int64_t m, const PackedMatrix<T>& b, int64_t lo,
                         int64_t hi, bool accumulate, T* c, int64_t ldc) {
  constexpr int64_t kWidth = PackedMatrix<T>::kWidth;
  int64_t full = lo;
  while (full < hi && b.panel(full).width == kWidth) ++full;
  auto group = [&](int64_t p, int64_t width) {
    T* out = c + b.panel(p).first;
    return PanelGroup<T>{b.data(p), width, accumulate ? out : nullptr, ldc, kWidth, out,
                         ldc,       kWidth};
  };
  if (full > lo) run_group(m, b.k(), a, lda, group(lo, kWidth), full - lo);
  for (int64_t p = full; p < hi; ++p) run_group(m, b.k(), a, lda, group(p, b.panel(p).width), 1);
}

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
                          int64_t count, const T* init, int64_t ld_init, int64_t init_step, T* out,
                          int64_t ld_out, int64_t out_step) {
  const int64_t width = b.panel(p).width;
  for (int64_t q = 1; q < count; ++q)
    FLB_CHECK(b.panel(p + q).width == width, "packed_panel_product: panels ", p, "..",
              p + count - 1, " differ in width");
  run_group(m, b.k(), a, lda,
            PanelGroup<T>{b.data(p), width, init, ld_init, init_step, out, ld_out, out_step},
            count);
}

template <class T>
void packed_product(const T* a, int64_t lda, int64_t m, const PackedMatrix<T>& b, bool accumulate,
                    T* c, int64_t ldc) {
  consecutive_product(a, lda, m, b, 0, b.panels(), accumulate, c, ldc);
}

template <class T>
void packed_gemm(const T* a, int64_t lda, int64_t m, const PackedMatrix<T>& b, bool accumulate,
                 T* c, int64_t ldc) {
  // A panel's product is worth a thread from a few thousand multiply-adds; threads take
  // runs of whole tile groups where there are enough panels.
  const int64_t per_panel = std::max<int64_t>(1, m * b.k() * PackedMatrix<T>::kWidth);
  parallel_for(0, b.panels(), std::max<int64_t>(1, 8192 / per_panel), [&](int64_t lo, int64_t hi) {
    consecutive_product(a, lda, m, b, lo, hi, accumulate, c, ldc);
  });
}

template class PackedMatrix<float>;
template class PackedMatrix<double>;
template void packed_panel_product<float>(const float*, int64_t, int64_t,
                                          const PackedMatrix<float>&, int64_t, int64_t,
                                          const float*, int64_t, int64_t, float*, int64_t, int64_t);
template void packed_panel_product<double>(const double*, int64_t, int64_t,
                                           const PackedMatrix<double>&, int64_t, int64_t,
                                           const double*, int64_t, int64_t, double*, int64_t,
                                           int64_t);
template void packed_product<float>(const float*, int64_t, int64_t, const PackedMatrix<float>&,
                                    bool, float*, int64_t);
template void packed_product<double>(const double*, int64_t, int64_t, const PackedMatrix<double>&,
                                     bool, double*, int64_t);
template void packed_gemm<float>(const float*, int64_t, int64_t, const PackedMatrix<float>&, bool,
                                 float*, int64_t);
template void packed_gemm<double>(const double*, int64_t, int64_t, const PackedMatrix<double>&,
                                  bool, double*, int64_t);

}  // namespace flambeau
