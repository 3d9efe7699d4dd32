// Winograd F(2x2, 3x3) convolution (see conv_winograd.h). The output is cut into 2x2
// tiles, the tiles into blocks that fit the L2 cache, and each thread takes whole
// blocks: the block's input is staged channels-last, its tiles transformed into V
// (16 points x tiles x in channels, vectorized over channels), multiplied by the
// transformed weights U (per point: in x out channels, packed once per call), and the
// products M (16 points x tiles x out channels) transformed back, staged channels-last
// and written to the output planes.
//
// With the transform matrices
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
//   G   = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
//   A^T = [1 1 1 0; 0 1 -1 -1]
// a 2x2 output tile is A^T [(G g G^T) * (B^T d B)] A for its 4x4 input tile d.
#include "cpu/conv_winograd.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/scratch.h"
#include "cpu/blas.h"
#include "cpu/cpu_capability.h"
#include "cpu/packed_gemm.h"
#include "cpu/thread_tasks.h"

namespace flambeau {

namespace {

constexpr int kPoints = 16;                        // a transformed tile is 4x4
constexpr int64_t kBlockBytes = int64_t{1} << 18;  // V and M of one block: within L2

// A 2-D 3x3 stride-1 convolution as the kernels below see it: `in_ch` planes of h x w
// in, `out_ch` planes of out_h x out_w out, zero padding pad_h, pad_w.
struct Plan {
  int64_t batch, in_ch, out_ch, h, w, out_h, out_w, pad_h, pad_w;
  int64_t tiles_h() const { return (out_h + 1) / 2; }
  int64_t tiles_w() const { return (out_w + 1) / 2; }
  int64_t tiles() const { return tiles_h() * tiles_w(); }
};

// The weights as the kernels use them: U, per point G g G^T as an in_ch x out_ch
// matrix, packed for the products; and the plain taps (out, in, 3, 3) for blocks whose
// input is not finite (see direct_block). `usable`: no weight is infinite or NaN, and no
// 3x3 kernel mixes zero and nonzero taps; else U is not built and the caller takes
// im2col, whose sums keep IEEE's results and whose masked taps (PixelCNN's causal masks,
// pruning) add exactly nothing, where the transforms would leak rounding through them.
template <class T>
struct Weights {
  Scratch<T> taps;
  std::vector<PackedMatrix<T>> u;
  bool usable = true;
};

// tap(o, c, a, b) is the weight from input channel c to output channel o at kernel
// position (a, b).
template <class T, class Tap>
Weights<T> prepare_weights(const Plan& p, const Tap& tap) {
  const int64_t C = p.in_ch, O = p.out_ch;
  Weights<T> w{Scratch<T>(static_cast<size_t>(O * C * 9)), {}, true};
  T* taps = w.taps.data();
  for (int64_t o = 0; o < O; ++o)
    for (int64_t c = 0; c < C; ++c)
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
          const T v = tap(o, c, a, b);
          taps[((o * C + c) * 3 + a) * 3 + b] = v;
          w.usable = w.usable && std::isfinite(v);
        }
  for (int64_t k = 0; k < O * C && w.usable; ++k) {
    const int zeros = static_cast<int>(std::count(taps + k * 9, taps + (k + 1) * 9, T(0)));
    w.usable = zeros == 0 || zeros == 9;  // an all-zero kernel transforms to exact zeros
  }
  if (!w.usable) return w;
  Scratch<T> u(static_cast<size_t>(kPoints * C * O));
  for (int64_t o = 0; o < O; ++o)
    for (int64_t c = 0; c < C; ++c) {
      const T* g = taps + (o * C + c) * 9;
      T gg[4][3];  // G g
      for (int b = 0; b < 3; ++b) {
        const T g0 = g[b], g1 = g[3 + b], g2 = g[6 + b];
        gg[0][b] = g0;
        gg[1][b] = T(0.5) * (g0 + g1 + g2);
        gg[2][b] = T(0.5) * (g0 - g1 + g2);
        gg[3][b] = g2;
      }
      for (int r = 0; r < 4; ++r) {  // (G g) G^T
        const T t0 = gg[r][0], t1 = gg[r][1], t2 = gg[r][2];
        const T row[4] = {t0, T(0.5) * (t0 + t1 + t2), T(0.5) * (t0 - t1 + t2), t2};
        for (int s = 0; s < 4; ++s) u[static_cast<size_t>(((r * 4 + s) * C + c) * O + o)] = row[s];
      }
    }
  w.u.reserve(kPoints);
  for (int x = 0; x < kPoints; ++x)
    w.u.emplace_back(u.data() + x * C * O, O, false, C, PackedMatrix<T>::consecutive(O));
  return w;
}

// A block of output tiles: tile rows [ti0, ti1) x tile columns [tj0, tj1), numbered
// row by row. Its input rows and columns are staged channels-last, zero-padded, so the
// transforms run over contiguous channels (vectorized) with no bounds checks, and its
// outputs are staged the same way before going back to the planes.
struct Block {
  int64_t ti0, ti1, tj0, tj1;
  int64_t cols() const { return tj1 - tj0; }
  int64_t tiles() const { return (ti1 - ti0) * cols(); }
  int64_t in_rows() const { return 2 * (ti1 - ti0) + 2; }
  int64_t in_cols() const { return 2 * cols() + 2; }
};

// How a sample's tiles are cut into blocks of at most `target` tiles: whole tile rows
// when a row is shorter than that, else pieces of one row.
struct Blocking {
  int64_t target, tiles_h, tiles_w, rows_per, per_row, per_sample;
  Blocking(const Plan& p, int64_t tgt) : target(tgt), tiles_h(p.tiles_h()), tiles_w(p.tiles_w()) {
    rows_per = tiles_w >= target ? 1 : std::max<int64_t>(1, target / tiles_w);
    per_row = tiles_w >= target ? (tiles_w + target - 1) / target : 1;
    per_sample = tiles_w >= target ? tiles_h * per_row : (tiles_h + rows_per - 1) / rows_per;
  }
  Block at(int64_t b) const {
    if (tiles_w >= target) {
      const int64_t ti = b / per_row, tj0 = b % per_row * target;
      return {ti, ti + 1, tj0, std::min(tiles_w, tj0 + target)};
    }
    return {b * rows_per, std::min(tiles_h, (b + 1) * rows_per), 0, tiles_w};
  }
  int64_t max_rows() const { return rows_per; }
  int64_t max_cols() const { return std::min(tiles_w, target); }
};

// No infinity or NaN among p[0, n): all exponent bits set marks both. Integer
// operations, so that the loop vectorizes; built per CPU capability.
template <class T>
FLB_MULTIVERSION_BODY bool all_finite_body(const T* p, int64_t n) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  constexpr Bits kExponent =
      static_cast<Bits>(sizeof(T) == 4 ? 0x7f800000ull : 0x7ff0000000000000ull);
  Bits special = 0;
  for (int64_t i = 0; i < n; ++i) {
    Bits b;
    std::memcpy(&b, p + i, sizeof(T));
    special |= Bits((b & kExponent) == kExponent);
  }
  return special == 0;
}
FLB_MULTIVERSION(bool, all_finite, (const float* p, int64_t n), (p, n))
FLB_MULTIVERSION(bool, all_finite, (const double* p, int64_t n), (p, n))

// dst[i * dst_i + j] = src[i * src_i + j * src_j] for i < ni, j < nj: the staging
// transposes between planes and channels-last rows, built per CPU capability (the
// AVX-512 copy reads a row of dst's worth of strided values with gathers).
template <class T>
FLB_MULTIVERSION_BODY void strided_copy_body(const T* __restrict src, int64_t src_i, int64_t src_j,
                                             int64_t ni, int64_t nj, T* __restrict dst,
                                             int64_t dst_i) {
  for (int64_t i = 0; i < ni; ++i)
    for (int64_t j = 0; j < nj; ++j) dst[i * dst_i + j] = src[i * src_i + j * src_j];
}
#define FLB_STRIDED_COPY(T)                                                                        \
  FLB_MULTIVERSION(                                                                                \
      void, strided_copy,                                                                          \
      (const T* src, int64_t src_i, int64_t src_j, int64_t ni, int64_t nj, T* dst, int64_t dst_i), \
      (src, src_i, src_j, ni, nj, dst, dst_i))
FLB_STRIDED_COPY(float)
FLB_STRIDED_COPY(double)
#undef FLB_STRIDED_COPY

// stage[(r * in_cols + col) * C + c] = the input at the block's row r, column col (0 in
// the padding): a transpose of the planes' rows the block reads. Returns whether every
// value is finite.
template <class T>
bool stage_input(const Plan& p, const T* in, const Block& b, T* stage) {
  const int64_t C = p.in_ch, plane = p.h * p.w, rows = b.in_rows(), cols = b.in_cols();
  const int64_t r0 = 2 * b.ti0 - p.pad_h, c0 = 2 * b.tj0 - p.pad_w;
  const int64_t lo = std::clamp<int64_t>(-c0, 0, cols),
                hi = std::clamp<int64_t>(p.w - c0, lo, cols);
  for (int64_t r = 0; r < rows; ++r) {
    T* dst = stage + r * cols * C;
    const int64_t row = r0 + r;
    if (row < 0 || row >= p.h) {
      std::fill(dst, dst + cols * C, T(0));
      continue;
    }
    std::fill(dst, dst + lo * C, T(0));
    std::fill(dst + hi * C, dst + cols * C, T(0));
    strided_copy(in + row * p.w + c0 + lo, 1, plane, hi - lo, C, dst + lo * C, C);
  }
  return all_finite(stage, rows * cols * C);
}

// The block's outputs as direct sums, for an input with infinities or NaNs: the
// transforms subtract inputs from one another, and inf - inf would turn an output that
// the direct sum makes infinite (or finite) into NaN.
template <class T>
void direct_block(const Plan& p, const T* in, const T* taps, const T* bias, const Block& b,
                  T* out) {
  const int64_t C = p.in_ch, plane = p.h * p.w, out_plane = p.out_h * p.out_w;
  const int64_t r1 = std::min(2 * b.ti1, p.out_h), c1 = std::min(2 * b.tj1, p.out_w);
  for (int64_t o = 0; o < p.out_ch; ++o)
    for (int64_t r = 2 * b.ti0; r < r1; ++r)
      for (int64_t col = 2 * b.tj0; col < c1; ++col) {
        T sum = bias ? bias[o] : T(0);
        for (int64_t c = 0; c < C; ++c)
          for (int64_t a = 0; a < 3; ++a) {
            const int64_t row = r - p.pad_h + a;
            if (row < 0 || row >= p.h) continue;
            for (int64_t k = 0; k < 3; ++k) {
              const int64_t x = col - p.pad_w + k;
              if (x >= 0 && x < p.w)
                sum += taps[((o * C + c) * 3 + a) * 3 + k] * in[c * plane + row * p.w + x];
            }
          }
        out[o * out_plane + r * p.out_w + col] = sum;
      }
}

// A row (x0, x1, x2, x3) of B^T d times B, to four points `point` apart.
template <class T>
FLB_MULTIVERSION_BODY void times_b(T x0, T x1, T x2, T x3, T* out, int64_t point) {
  out[0] = x0 - x2;
  out[point] = x1 + x2;
  out[2 * point] = x2 - x1;
  out[3 * point] = x1 - x3;
}

// V[x][t][c] = (B^T d B)[x] for the block's tiles t, from the staged input.
template <class T>
FLB_MULTIVERSION_BODY void transform_input_body(int64_t C, int64_t block_rows, int64_t block_cols,
                                                const T* stage, T* v) {
  const int64_t tiles = block_rows * block_cols, in_cols = 2 * block_cols + 2;
  const int64_t point = tiles * C, line = in_cols * C;
  for (int64_t a = 0; a < block_rows; ++a)
    for (int64_t b = 0; b < block_cols; ++b) {
      const T* __restrict d = stage + (2 * a * in_cols + 2 * b) * C;
      T* __restrict out = v + (a * block_cols + b) * C;
      // Written out element by element: inner loops over the 4x4 tile would keep the
      // compiler from vectorizing the loop over channels.
      const T* __restrict d0 = d;
      const T* __restrict d1 = d + line;
      const T* __restrict d2 = d + 2 * line;
      const T* __restrict d3 = d + 3 * line;
      T* __restrict v0 = out;
      T* __restrict v1 = out + 4 * point;
      T* __restrict v2 = out + 8 * point;
      T* __restrict v3 = out + 12 * point;
#pragma GCC ivdep
      for (int64_t c = 0; c < C; ++c) {
        // rows of B^T d: r0 = d0 - d2, r1 = d1 + d2, r2 = d2 - d1, r3 = d1 - d3 (by column)
        const T a0 = d0[c] - d2[c], a1 = d0[C + c] - d2[C + c];
        const T a2 = d0[2 * C + c] - d2[2 * C + c], a3 = d0[3 * C + c] - d2[3 * C + c];
        const T b0 = d1[c] + d2[c], b1 = d1[C + c] + d2[C + c];
        const T b2 = d1[2 * C + c] + d2[2 * C + c], b3 = d1[3 * C + c] + d2[3 * C + c];
        const T e0 = d2[c] - d1[c], e1 = d2[C + c] - d1[C + c];
        const T e2 = d2[2 * C + c] - d1[2 * C + c], e3 = d2[3 * C + c] - d1[3 * C + c];
        const T f0 = d1[c] - d3[c], f1 = d1[C + c] - d3[C + c];
        const T f2 = d1[2 * C + c] - d3[2 * C + c], f3 = d1[3 * C + c] - d3[3 * C + c];
        times_b(a0, a1, a2, a3, v0 + c, point);
        times_b(b0, b1, b2, b3, v1 + c, point);
        times_b(e0, e1, e2, e3, v2 + c, point);
        times_b(f0, f1, f2, f3, v3 + c, point);
      }
    }
}

// staged[(r * 2 block_cols + col) * O + o] = (A^T M A) + bias for the block's tiles.
template <class T>
FLB_MULTIVERSION_BODY void transform_output_body(int64_t O, int64_t block_rows, int64_t block_cols,
                                                 const T* m, const T* bias, T* staged) {
  const int64_t tiles = block_rows * block_cols, point = tiles * O, line = 2 * block_cols * O;
  for (int64_t a = 0; a < block_rows; ++a)
    for (int64_t b = 0; b < block_cols; ++b) {
      const T* __restrict src = m + (a * block_cols + b) * O;
      T* __restrict dst = staged + (2 * a * 2 * block_cols + 2 * b) * O;
      T* __restrict y0 = dst;  // the tile's two output rows, channels-last
      T* __restrict y1 = dst + line;
#pragma GCC ivdep
      for (int64_t o = 0; o < O; ++o) {
        // A^T M: rows m0 + m1 + m2 and m1 - m2 - m3, column by column
        const T* __restrict s0 = src + o;
        const T p0 = s0[0] + s0[4 * point] + s0[8 * point];
        const T p1 = s0[point] + s0[5 * point] + s0[9 * point];
        const T p2 = s0[2 * point] + s0[6 * point] + s0[10 * point];
        const T p3 = s0[3 * point] + s0[7 * point] + s0[11 * point];
        const T q0 = s0[4 * point] - s0[8 * point] - s0[12 * point];
        const T q1 = s0[5 * point] - s0[9 * point] - s0[13 * point];
        const T q2 = s0[6 * point] - s0[10 * point] - s0[14 * point];
        const T q3 = s0[7 * point] - s0[11 * point] - s0[15 * point];
        const T bo = bias ? bias[o] : T(0);
        // times A: x0 + x1 + x2 and x1 - x2 - x3
        y0[o] = bo + p0 + p1 + p2;
        y0[O + o] = bo + p1 - p2 - p3;
        y1[o] = bo + q0 + q1 + q2;
        y1[O + o] = bo + q1 - q2 - q3;
      }
    }
}

// Z[x][t][o] = (A y A^T)[x] for the block's tiles t, from the staged 2x2 tiles y of
// grad_output (the weight gradient's transform: the transpose of the output's).
template <class T>
FLB_MULTIVERSION_BODY void transform_grad_output_body(int64_t O, int64_t block_rows,
                                                      int64_t block_cols, const T* staged, T* z) {
  const int64_t tiles = block_rows * block_cols, point = tiles * O, line = 2 * block_cols * O;
  for (int64_t a = 0; a < block_rows; ++a)
    for (int64_t b = 0; b < block_cols; ++b) {
      const T* __restrict y0 = staged + (2 * a * 2 * block_cols + 2 * b) * O;
      const T* __restrict y1 = y0 + line;
      T* __restrict out = z + (a * block_cols + b) * O;
#pragma GCC ivdep
      for (int64_t o = 0; o < O; ++o) {
        // A y: rows y0, y0 + y1, y0 - y1, -y1 (by column); then each row times A^T
        const T u00 = y0[o], u01 = y0[O + o], u10 = y1[o], u11 = y1[O + o];
        const T rows[4][2] = {
            {u00, u01}, {u00 + u10, u01 + u11}, {u00 - u10, u01 - u11}, {-u10, -u11}};
        for (int i = 0; i < 4; ++i) {
          T* __restrict zi = out + 4 * i * point + o;
          zi[0] = rows[i][0];
          zi[point] = rows[i][0] + rows[i][1];
          zi[2 * point] = rows[i][0] - rows[i][1];
          zi[3 * point] = -rows[i][1];
        }
      }
    }
}

#define FLB_WINOGRAD_TRANSFORMS(T, SUFFIX)                                                         \
  FLB_MULTIVERSION_BODY void transform_input_##SUFFIX##_body(int64_t C, int64_t rows,              \
                                                             int64_t cols, const T* stage, T* v) { \
    transform_input_body<T>(C, rows, cols, stage, v);                                              \
  }                                                                                                \
  FLB_MULTIVERSION(void, transform_input_##SUFFIX,                                                 \
                   (int64_t C, int64_t rows, int64_t cols, const T* stage, T* v),                  \
                   (C, rows, cols, stage, v))                                                      \
  FLB_MULTIVERSION_BODY void transform_output_##SUFFIX##_body(                                     \
      int64_t O, int64_t rows, int64_t cols, const T* m, const T* bias, T* staged) {               \
    transform_output_body<T>(O, rows, cols, m, bias, staged);                                      \
  }                                                                                                \
  FLB_MULTIVERSION(void, transform_output_##SUFFIX,                                                \
                   (int64_t O, int64_t rows, int64_t cols, const T* m, const T* bias, T* staged),  \
                   (O, rows, cols, m, bias, staged))                                               \
  FLB_MULTIVERSION_BODY void transform_grad_output_##SUFFIX##_body(                                \
      int64_t O, int64_t rows, int64_t cols, const T* staged, T* z) {                              \
    transform_grad_output_body<T>(O, rows, cols, staged, z);                                       \
  }                                                                                                \
  FLB_MULTIVERSION(void, transform_grad_output_##SUFFIX,                                           \
                   (int64_t O, int64_t rows, int64_t cols, const T* staged, T* z),                 \
                   (O, rows, cols, staged, z))
FLB_WINOGRAD_TRANSFORMS(float, f32)
FLB_WINOGRAD_TRANSFORMS(double, f64)
#undef FLB_WINOGRAD_TRANSFORMS

// The copies above for T.
template <class T, class F32, class F64, class... Args>
void for_type(F32 f32, F64 f64, Args... args) {
  if constexpr (std::is_same_v<T, float>) {
    f32(args...);
  } else {
    f64(args...);
  }
}
template <class T>
void transform_input(int64_t C, int64_t rows, int64_t cols, const T* stage, T* v) {
  for_type<T>(transform_input_f32, transform_input_f64, C, rows, cols, stage, v);
}
template <class T>
void transform_output(int64_t O, int64_t rows, int64_t cols, const T* m, const T* bias, T* staged) {
  for_type<T>(transform_output_f32, transform_output_f64, O, rows, cols, m, bias, staged);
}
template <class T>
void transform_grad_output(int64_t O, int64_t rows, int64_t cols, const T* staged, T* z) {
  for_type<T>(transform_grad_output_f32, transform_grad_output_f64, O, rows, cols, staged, z);
}

// The staged outputs back to the planes, less the half tiles past an odd edge.
template <class T>
void unstage_output(const Plan& p, const T* staged, const Block& b, T* out) {
  const int64_t O = p.out_ch, plane = p.out_h * p.out_w, line = 2 * b.cols();
  const int64_t r0 = 2 * b.ti0, c0 = 2 * b.tj0;
  const int64_t rows = std::min(2 * (b.ti1 - b.ti0), p.out_h - r0);
  const int64_t cols = std::min(line, p.out_w - c0);
  for (int64_t r = 0; r < rows; ++r)
    strided_copy(staged + r * line * O, 1, O, O, cols, out + (r0 + r) * p.out_w + c0, plane);
}

template <class T>
void run(const Plan& p, const T* in, const Weights<T>& w, const T* bias, T* out) {
  const std::vector<PackedMatrix<T>>& u = w.u;
  const int64_t C = p.in_ch, O = p.out_ch;
  // Tiles per block: a multiple of the GEMM kernel's 6 rows, V and M within the budget.
  int64_t target = kBlockBytes / (kPoints * (C + O) * static_cast<int64_t>(sizeof(T)));
  target = std::max<int64_t>(6, target / 6 * 6);
  const Blocking blocking(p, target);
  const int64_t most = blocking.max_rows() * blocking.max_cols();
  const int64_t blocks = p.batch * blocking.per_sample;
  const size_t v_size = static_cast<size_t>(kPoints * most * C);
  const size_t m_size = static_cast<size_t>(kPoints * most * O);
  const size_t in_stage =
      static_cast<size_t>((2 * blocking.max_rows() + 2) * (2 * blocking.max_cols() + 2) * C);
  const size_t out_stage = static_cast<size_t>(4 * most * O);
  auto work = [&](int64_t lo, int64_t hi) {
    Scratch<T> v(v_size), m(m_size), staged_in(in_stage), staged_out(out_stage);
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t n = i / blocking.per_sample;
      const Block b = blocking.at(i % blocking.per_sample);
      const int64_t rows = b.tiles();
      const T* sample = in + n * C * p.h * p.w;
      T* sample_out = out + n * O * p.out_h * p.out_w;
      if (!stage_input(p, sample, b, staged_in.data())) {
        direct_block(p, sample, w.taps.data(), bias, b, sample_out);
        continue;
      }
      transform_input(C, b.ti1 - b.ti0, b.cols(), staged_in.data(), v.data());
      for (int x = 0; x < kPoints; ++x)
        packed_product(v.data() + x * rows * C, C, rows, u[x], false, m.data() + x * rows * O, O);
      transform_output(O, b.ti1 - b.ti0, b.cols(), m.data(), bias, staged_out.data());
      unstage_output(p, staged_out.data(), b, sample_out);
    }
  };
  run_tasks(blocks, task_threads(blocks), TaskOrder::kContiguous, false,
            [&](int, int64_t lo, int64_t hi) { work(lo, hi); });
}

// stage[(r * 2 cols + col) * O + o] = grad_output at the block's output row r, column
// col (0 past an odd edge): unstage_output's inverse. Returns whether every value is
// finite.
template <class T>
bool stage_grad_output(const Plan& p, const T* grad_out, const Block& b, T* stage) {
  const int64_t O = p.out_ch, plane = p.out_h * p.out_w, line = 2 * b.cols();
  const int64_t r0 = 2 * b.ti0, c0 = 2 * b.tj0, rows = 2 * (b.ti1 - b.ti0);
  const int64_t cols = std::min(line, p.out_w - c0);
  for (int64_t r = 0; r < rows; ++r) {
    T* dst = stage + r * line * O;
    if (r0 + r >= p.out_h) {
      std::fill(dst, dst + line * O, T(0));
      continue;
    }
    std::fill(dst + cols * O, dst + line * O, T(0));
    strided_copy(grad_out + (r0 + r) * p.out_w + c0, 1, plane, cols, O, dst, O);
  }
  return all_finite(stage, rows * line * O);
}

// grad_weight[o, c] = G^T M[o, c] G, where M[o, c][x] = m[(x * O + o) * C + c].
template <class T>
void fold_weight_gradient(const T* m, int64_t C, int64_t O, T* grad_weight) {
  const int64_t point = O * C;
  for (int64_t o = 0; o < O; ++o)
    for (int64_t c = 0; c < C; ++c) {
      const T* s = m + o * C + c;
      T rows[3][4];  // G^T M: rows m0 + (m1 + m2) / 2, (m1 - m2) / 2, (m1 + m2) / 2 + m3
      for (int j = 0; j < 4; ++j) {
        const T m0 = s[j * point], m1 = s[(4 + j) * point], m2 = s[(8 + j) * point],
                m3 = s[(12 + j) * point];
        rows[0][j] = m0 + T(0.5) * (m1 + m2);
        rows[1][j] = T(0.5) * (m1 - m2);
        rows[2][j] = T(0.5) * (m1 + m2) + m3;
      }
      T* out = grad_weight + (o * C + c) * 9;
      for (int a = 0; a < 3; ++a) {  // times G
        const T* r = rows[a];
        out[a * 3] = r[0] + T(0.5) * (r[1] + r[2]);
        out[a * 3 + 1] = T(0.5) * (r[1] - r[2]);
        out[a * 3 + 2] = T(0.5) * (r[1] + r[2]) + r[3];
      }
    }
}

// Blocks of tiles per thread: V (16 x tiles x C) and Z (16 x tiles x O) of a block, and
// per thread the sums M (16 x O x C) over its blocks, added up at the end. The blocks are
// larger than the forward's: each point's GEMM has the block's tiles as inner dimension.
template <class T>
bool run_weight_gradient(const Plan& p, const T* in, const T* grad_out, T* grad_weight) {
  constexpr int64_t kWeightBlockBytes = int64_t{1} << 20;
  const int64_t C = p.in_ch, O = p.out_ch, sums = kPoints * O * C;
  const int64_t target = std::max<int64_t>(
      6, kWeightBlockBytes / (kPoints * (C + O) * static_cast<int64_t>(sizeof(T))));
  const Blocking blocking(p, target);
  const int64_t most = blocking.max_rows() * blocking.max_cols();
  // Where im2col is faster (measured, docs/design/convolution-algorithms.rst): GEMMs over
  // fewer than 24 tiles (small images, or deep channels: 512 on 7x7 gives 16), or fewer
  // than 16 channels on a side, where the transforms cost more than the products save.
  if (std::min(most, p.tiles()) < 24 || C < 16 || O < 16) return false;
  const int64_t blocks = p.batch * blocking.per_sample;
  const int threads = task_threads(blocks);
  Scratch<T> partial(static_cast<size_t>(threads * sums));
  std::vector<char> finite(static_cast<size_t>(threads), 1);
  auto work = [&](int slot, int64_t lo, int64_t hi) {
    Scratch<T> v(static_cast<size_t>(kPoints * most * C)),
        z(static_cast<size_t>(kPoints * most * O)),
        staged_in(
            static_cast<size_t>((2 * blocking.max_rows() + 2) * (2 * blocking.max_cols() + 2) * C)),
        staged_out(static_cast<size_t>(4 * most * O));
    T* m = partial.data() + slot * sums;  // (Scratch starts zeroed)
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t n = i / blocking.per_sample;
      const Block b = blocking.at(i % blocking.per_sample);
      const int64_t tiles = b.tiles();
      if (!stage_input(p, in + n * C * p.h * p.w, b, staged_in.data()) ||
          !stage_grad_output(p, grad_out + n * O * p.out_h * p.out_w, b, staged_out.data())) {
        finite[static_cast<size_t>(slot)] = 0;
        return;
      }
      transform_input(C, b.ti1 - b.ti0, b.cols(), staged_in.data(), v.data());
      transform_grad_output(O, b.ti1 - b.ti0, b.cols(), staged_out.data(), z.data());
      // M[x] (O x C) += Z[x]^T (O x tiles) V[x] (tiles x C)
      for (int x = 0; x < kPoints; ++x)
        gemm<T>(true, false, O, C, tiles, T(1), z.data() + x * tiles * O, O,
                v.data() + x * tiles * C, C, T(1), m + x * O * C, C);
    }
  };
  run_tasks(blocks, threads, TaskOrder::kContiguous, true, work);
  if (std::find(finite.begin(), finite.end(), 0) != finite.end()) return false;
  T* m = partial.data();
  for (int s = 1; s < threads; ++s)
    for (int64_t i = 0; i < sums; ++i) m[i] += m[s * sums + i];
  fold_weight_gradient(m, C, O, grad_weight);
  return true;
}

}  // namespace

bool winograd_applies(const ConvGeometry& g) {
  const bool plain_2d = g.in[0] == 1 && g.out[0] == 1 && g.kernel[0] == 1 && g.pad[0] == 0;
  const bool k3s1 = g.kernel[1] == 3 && g.kernel[2] == 3 && g.stride[1] == 1 && g.stride[2] == 1 &&
                    g.dilation[1] == 1 && g.dilation[2] == 1;
  // Below 8 channels on either side the GEMMs are too thin to beat im2col's.
  return plain_2d && k3s1 && g.groups == 1 && g.pad[1] <= 2 && g.pad[2] <= 2 &&
         g.in_channels >= 8 && g.out_channels >= 8 && g.out[1] >= 2 && g.out[2] >= 2;
}

template <class T>
bool winograd_forward(const T* input, const T* weight, const T* bias, T* out,
                      const ConvGeometry& g) {
  const Plan p{g.batch,  g.in_channels, g.out_channels, g.in[1], g.in[2],
               g.out[1], g.out[2],      g.pad[1],       g.pad[2]};
  const Weights<T> w = prepare_weights<T>(p, [&](int64_t o, int64_t c, int a, int b) {
    return weight[((o * p.in_ch + c) * 3 + a) * 3 + b];
  });
  if (!w.usable) return false;
  run(p, input, w, bias, out);
  return true;
}

template <class T>
bool winograd_backward_input(const T* grad_output, const T* weight, const T* bias, T* grad_input,
                             const ConvGeometry& g) {
  const Plan p{g.batch, g.out_channels, g.in_channels, g.out[1],    g.out[2],
               g.in[1], g.in[2],        2 - g.pad[1],  2 - g.pad[2]};
  // Output channel o of this convolution is the forward's input channel.
  const Weights<T> w = prepare_weights<T>(p, [&](int64_t o, int64_t c, int a, int b) {
    return weight[((c * p.out_ch + o) * 3 + (2 - a)) * 3 + (2 - b)];
  });
  if (!w.usable) return false;
  run(p, grad_output, w, bias, grad_input);
  return true;
}

template <class T>
bool winograd_backward_weight(const T* grad_output, const T* input, T* grad_weight,
                              const ConvGeometry& g) {
  const Plan p{g.batch,  g.in_channels, g.out_channels, g.in[1], g.in[2],
               g.out[1], g.out[2],      g.pad[1],       g.pad[2]};
  return run_weight_gradient(p, input, grad_output, grad_weight);
}

template bool winograd_forward<float>(const float*, const float*, const float*, float*,
                                      const ConvGeometry&);
template bool winograd_forward<double>(const double*, const double*, const double*, double*,
                                       const ConvGeometry&);
template bool winograd_backward_input<float>(const float*, const float*, const float*, float*,
                                             const ConvGeometry&);
template bool winograd_backward_input<double>(const double*, const double*, const double*, double*,
                                              const ConvGeometry&);

template bool winograd_backward_weight<float>(const float*, const float*, float*,
                                              const ConvGeometry&);
template bool winograd_backward_weight<double>(const double*, const double*, double*,
                                               const ConvGeometry&);

}  // namespace flambeau
