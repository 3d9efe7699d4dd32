// Winograd F(2x2, 3x3) convolution (see conv_winograd.h). The output is cut into 2x2
// tiles, the tiles into blocks that fit the L2 cache, and each thread takes whole
// blocks: the block's input tiles are transformed into V (16 points x tiles x in
// channels), multiplied by the transformed weights U (per point: in x out channels,
// packed once per call), and the products M (16 points x tiles x out channels) are
// transformed back into the output.
//
// With the transform matrices
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
//   G   = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
//   A^T = [1 1 1 0; 0 1 -1 -1]
// a 2x2 output tile is A^T [(G g G^T) * (B^T d B)] A for its 4x4 input tile d.
#include "cpu/conv_winograd.h"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "core/scratch.h"
#include "cpu/packed_gemm.h"
#include "cpu/parallel.h"

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

// U: per point, G g G^T as an in_ch x out_ch matrix, packed. tap(o, c, a, b) is the
// weight from input channel c to output channel o at kernel position (a, b).
template <class T, class Tap>
std::vector<PackedMatrix<T>> transform_weights(const Plan& p, const Tap& tap) {
  const int64_t C = p.in_ch, O = p.out_ch;
  Scratch<T> u(static_cast<size_t>(kPoints * C * O));
  for (int64_t o = 0; o < O; ++o)
    for (int64_t c = 0; c < C; ++c) {
      T gg[4][3];  // G g
      for (int b = 0; b < 3; ++b) {
        const T g0 = tap(o, c, 0, b), g1 = tap(o, c, 1, b), g2 = tap(o, c, 2, b);
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
  std::vector<PackedMatrix<T>> packed;
  packed.reserve(kPoints);
  for (int x = 0; x < kPoints; ++x)
    packed.emplace_back(u.data() + x * C * O, O, false, C, PackedMatrix<T>::consecutive(O));
  return packed;
}

// V[x][t - t0][c] = (B^T d B)[x] for the input tiles t0 <= t < t1 of one sample.
template <class T>
void transform_input(const Plan& p, const T* in, int64_t t0, int64_t t1, T* v) {
  const int64_t C = p.in_ch, rows = t1 - t0, plane = p.h * p.w, tw = p.tiles_w();
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t r0 = 2 * (t / tw) - p.pad_h, c0 = 2 * (t % tw) - p.pad_w;
    const bool inside = r0 >= 0 && r0 + 4 <= p.h && c0 >= 0 && c0 + 4 <= p.w;
    T* dst = v + (t - t0) * C;
    for (int64_t c = 0; c < C; ++c) {
      const T* src = in + c * plane;
      T d[4][4];
      if (inside) {
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j) d[i][j] = src[(r0 + i) * p.w + c0 + j];
      } else {
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j) {
            const int64_t r = r0 + i, col = c0 + j;
            d[i][j] = r >= 0 && r < p.h && col >= 0 && col < p.w ? src[r * p.w + col] : T(0);
          }
      }
      T bd[4][4];  // B^T d
      for (int j = 0; j < 4; ++j) {
        bd[0][j] = d[0][j] - d[2][j];
        bd[1][j] = d[1][j] + d[2][j];
        bd[2][j] = d[2][j] - d[1][j];
        bd[3][j] = d[1][j] - d[3][j];
      }
      for (int i = 0; i < 4; ++i) {  // (B^T d) B
        T* out = dst + c + i * 4 * rows * C;
        out[0] = bd[i][0] - bd[i][2];
        out[rows * C] = bd[i][1] + bd[i][2];
        out[2 * rows * C] = bd[i][2] - bd[i][1];
        out[3 * rows * C] = bd[i][1] - bd[i][3];
      }
    }
  }
}

// The output tiles t0 <= t < t1 of one sample: A^T M A plus the bias.
template <class T>
void transform_output(const Plan& p, const T* m, const T* bias, int64_t t0, int64_t t1, T* out) {
  const int64_t O = p.out_ch, rows = t1 - t0, plane = p.out_h * p.out_w, tw = p.tiles_w();
  const int64_t point = rows * O;  // distance between points in M
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t r0 = 2 * (t / tw), c0 = 2 * (t % tw);
    const bool full = r0 + 2 <= p.out_h && c0 + 2 <= p.out_w;
    const T* src = m + (t - t0) * O;
    for (int64_t o = 0; o < O; ++o) {
      T am[2][4];  // A^T M
      for (int j = 0; j < 4; ++j) {
        const T m0 = src[o + j * point], m1 = src[o + (4 + j) * point];
        const T m2 = src[o + (8 + j) * point], m3 = src[o + (12 + j) * point];
        am[0][j] = m0 + m1 + m2;
        am[1][j] = m1 - m2 - m3;
      }
      const T b = bias ? bias[o] : T(0);
      T y[2][2];
      for (int i = 0; i < 2; ++i) {  // (A^T M) A
        y[i][0] = b + am[i][0] + am[i][1] + am[i][2];
        y[i][1] = b + am[i][1] - am[i][2] - am[i][3];
      }
      T* dst = out + o * plane + r0 * p.out_w + c0;
      if (full) {
        dst[0] = y[0][0];
        dst[1] = y[0][1];
        dst[p.out_w] = y[1][0];
        dst[p.out_w + 1] = y[1][1];
        continue;
      }
      for (int i = 0; i < 2 && r0 + i < p.out_h; ++i)
        for (int j = 0; j < 2 && c0 + j < p.out_w; ++j) dst[i * p.out_w + j] = y[i][j];
    }
  }
}

template <class T>
void run(const Plan& p, const T* in, const std::vector<PackedMatrix<T>>& u, const T* bias, T* out) {
  const int64_t C = p.in_ch, O = p.out_ch, tiles = p.tiles();
  // Tiles per block: a multiple of the GEMM kernel's 6 rows, V and M within the budget.
  int64_t block = kBlockBytes / (kPoints * (C + O) * static_cast<int64_t>(sizeof(T)));
  block = std::max<int64_t>(6, block / 6 * 6);
  block = std::min(block, tiles);
  const int64_t per_sample = (tiles + block - 1) / block, blocks = p.batch * per_sample;
  auto work = [&](T* v, T* m, int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) {
      const int64_t n = b / per_sample, t0 = b % per_sample * block;
      const int64_t t1 = std::min(tiles, t0 + block), rows = t1 - t0;
      transform_input(p, in + n * C * p.h * p.w, t0, t1, v);
      for (int x = 0; x < kPoints; ++x)
        for (int64_t panel = 0; panel < u[x].panels(); ++panel)
          packed_panel_product(v + x * rows * C, C, rows, u[x], panel,
                               static_cast<const T*>(nullptr), 0,
                               m + x * rows * O + u[x].panel(panel).first, O);
      transform_output(p, m, bias, t0, t1, out + n * O * p.out_h * p.out_w);
    }
  };
  const size_t v_size = static_cast<size_t>(kPoints * block * C);
  const size_t m_size = static_cast<size_t>(kPoints * block * O);
  const int threads =
      omp_in_parallel() ? 1 : static_cast<int>(std::min<int64_t>(get_num_threads(), blocks));
  if (threads <= 1) {
    Scratch<T> v(v_size), m(m_size);
    work(v.data(), m.data(), 0, blocks);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    Scratch<T> v(v_size), m(m_size);
    const int64_t id = omp_get_thread_num(), n = omp_get_num_threads();
    work(v.data(), m.data(), blocks * id / n, blocks * (id + 1) / n);
  }
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
void winograd_forward(const T* input, const T* weight, const T* bias, T* out,
                      const ConvGeometry& g) {
  const Plan p{g.batch,  g.in_channels, g.out_channels, g.in[1], g.in[2],
               g.out[1], g.out[2],      g.pad[1],       g.pad[2]};
  const auto u = transform_weights<T>(p, [&](int64_t o, int64_t c, int a, int b) {
    return weight[((o * p.in_ch + c) * 3 + a) * 3 + b];
  });
  run(p, input, u, bias, out);
}

template <class T>
void winograd_backward_input(const T* grad_output, const T* weight, const T* bias, T* grad_input,
                             const ConvGeometry& g) {
  const Plan p{g.batch, g.out_channels, g.in_channels, g.out[1],    g.out[2],
               g.in[1], g.in[2],        2 - g.pad[1],  2 - g.pad[2]};
  // Output channel o of this convolution is the forward's input channel.
  const auto u = transform_weights<T>(p, [&](int64_t o, int64_t c, int a, int b) {
    return weight[((c * p.out_ch + o) * 3 + (2 - a)) * 3 + (2 - b)];
  });
  run(p, grad_output, u, bias, grad_input);
}

template void winograd_forward<float>(const float*, const float*, const float*, float*,
                                      const ConvGeometry&);
template void winograd_forward<double>(const double*, const double*, const double*, double*,
                                       const ConvGeometry&);
template void winograd_backward_input<float>(const float*, const float*, const float*, float*,
                                             const ConvGeometry&);
template void winograd_backward_input<double>(const double*, const double*, const double*, double*,
                                              const ConvGeometry&);

}  // namespace flambeau
