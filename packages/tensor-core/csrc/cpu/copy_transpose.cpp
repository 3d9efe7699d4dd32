#include "cpu/copy_transpose.h"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace flambeau {

namespace {

// An opaque element of N bytes (values are moved, never interpreted).
template <size_t N>
struct Bytes {
  unsigned char b[N];
};

// out[j * os + i] = in[i * is + j] for j < nj, i < ni (strides in bytes, elements of N bytes).
template <size_t N>
void tile_scalar(char* out, int64_t os, const char* in, int64_t is, int64_t nj, int64_t ni) {
  for (int64_t j = 0; j < nj; ++j) {
    char* o = out + j * os;
    const char* s = in + j * static_cast<int64_t>(N);
    for (int64_t i = 0; i < ni; ++i) std::memcpy(o + i * N, s + i * is, N);
  }
}

#if defined(__SSE2__)
// A 4x4 block of 4-byte elements through registers (shuffles keep every bit pattern).
inline void block4x4(char* out, int64_t os, const char* in, int64_t is) {
  __m128 r0 = _mm_loadu_ps(reinterpret_cast<const float*>(in));
  __m128 r1 = _mm_loadu_ps(reinterpret_cast<const float*>(in + is));
  __m128 r2 = _mm_loadu_ps(reinterpret_cast<const float*>(in + 2 * is));
  __m128 r3 = _mm_loadu_ps(reinterpret_cast<const float*>(in + 3 * is));
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _mm_storeu_ps(reinterpret_cast<float*>(out), r0);
  _mm_storeu_ps(reinterpret_cast<float*>(out + os), r1);
  _mm_storeu_ps(reinterpret_cast<float*>(out + 2 * os), r2);
  _mm_storeu_ps(reinterpret_cast<float*>(out + 3 * os), r3);
}

// A 2x2 block of 8-byte elements.
inline void block2x2(char* out, int64_t os, const char* in, int64_t is) {
  __m128d r0 = _mm_loadu_pd(reinterpret_cast<const double*>(in));
  __m128d r1 = _mm_loadu_pd(reinterpret_cast<const double*>(in + is));
  _mm_storeu_pd(reinterpret_cast<double*>(out), _mm_unpacklo_pd(r0, r1));
  _mm_storeu_pd(reinterpret_cast<double*>(out + os), _mm_unpackhi_pd(r0, r1));
}

// Whole B x B register blocks, then the ragged right and bottom strips element-wise.
template <size_t N, int B, class Block>
void tile_blocks(char* out, int64_t os, const char* in, int64_t is, int64_t nj, int64_t ni,
                 const Block& block) {
  const int64_t bj = nj - nj % B, bi = ni - ni % B;
  for (int64_t j = 0; j < bj; j += B)
    for (int64_t i = 0; i < bi; i += B)
      block(out + j * os + i * static_cast<int64_t>(N), os,
            in + i * is + j * static_cast<int64_t>(N), is);
  if (bi < ni) tile_scalar<N>(out + bi * N, os, in + bi * is, is, bj, ni - bi);
  if (bj < nj) tile_scalar<N>(out + bj * os, os, in + bj * N, is, nj - bj, ni);
}
#endif

template <size_t N>
void tile(char* out, int64_t os, const char* in, int64_t is, int64_t nj, int64_t ni) {
#if defined(__SSE2__)
  if constexpr (N == 4) return tile_blocks<4, 4>(out, os, in, is, nj, ni, block4x4);
  if constexpr (N == 8) return tile_blocks<8, 2>(out, os, in, is, nj, ni, block2x2);
#endif
  tile_scalar<N>(out, os, in, is, nj, ni);
}

// Tile edge in elements: a few cache lines per tile row, both tiles well inside L1.
constexpr int64_t tile_edge(size_t n) { return n <= 2 ? 64 : n == 4 ? 32 : 16; }

template <size_t N>
void run(const TensorIterator& it, int j) {
  const int nd = it.ndim(), i = nd - 1;
  const int64_t ni = it.shape()[i], nj = it.shape()[j];
  const int64_t os = it.stride(0, j), is = it.stride(1, i);
  // The remaining dims, walked outside the tiles.
  DimVector sizes, out_strides, in_strides;
  for (int d = 0; d < i; ++d) {
    if (d == j) continue;
    sizes.push_back(it.shape()[d]);
    out_strides.push_back(it.stride(0, d));
    in_strides.push_back(it.stride(1, d));
  }
  constexpr int64_t E = tile_edge(N);
  const int64_t ti = (ni + E - 1) / E, tj = (nj + E - 1) / E;
  const int64_t tiles = ti * tj;
  int64_t outer = 1;
  for (int64_t s : sizes) outer *= s;
  char* const out = it.base(0);
  const char* const in = it.base(1);
  parallel_for(0, outer * tiles, std::max<int64_t>(1, kGrainSize / (E * E)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t w = lo; w < hi; ++w) {
                   int64_t rem = w / tiles, o_off = 0, i_off = 0;
                   for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
                     const int64_t k = rem % sizes[d];
                     rem /= sizes[d];
                     o_off += k * out_strides[d];
                     i_off += k * in_strides[d];
                   }
                   const int64_t j0 = (w % tiles) / ti * E, i0 = (w % tiles) % ti * E;
                   tile<N>(out + o_off + j0 * os + i0 * static_cast<int64_t>(N), os,
                           in + i_off + i0 * is + j0 * static_cast<int64_t>(N), is,
                           std::min(E, nj - j0), std::min(E, ni - i0));
                 }
               });
}

}  // namespace

bool blocked_transpose_copy(const TensorIterator& it, size_t itemsize) {
  const int nd = it.ndim();
  if (nd < 2 || it.ntensors() != 2) return false;
  const int64_t n = static_cast<int64_t>(itemsize);
  const int i = nd - 1;
  if (it.stride(0, i) != n || it.stride(1, i) == n) return false;
  int j = -1;  // the dim the source runs along contiguously
  for (int d = 0; d < i && j < 0; ++d)
    if (it.stride(1, d) == n) j = d;
  // Thin transposes (a few rows or columns) already stream through whole cache lines.
  if (j < 0 || it.shape()[i] < 8 || it.shape()[j] < 8) return false;
  switch (itemsize) {
    case 1:
      return run<1>(it, j), true;
    case 2:
      return run<2>(it, j), true;
    case 4:
      return run<4>(it, j), true;
    case 8:
      return run<8>(it, j), true;
    case 16:
      return run<16>(it, j), true;
    default:
      return false;
  }
}

}  // namespace flambeau
