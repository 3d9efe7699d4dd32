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
// Interleaves the low (high) halves of two registers in N-byte lanes.
template <size_t N>
inline __m128i unpack_lo(__m128i a, __m128i b) {
  if constexpr (N == 1) return _mm_unpacklo_epi8(a, b);
  if constexpr (N == 2) return _mm_unpacklo_epi16(a, b);
  if constexpr (N == 4) return _mm_unpacklo_epi32(a, b);
  return _mm_unpacklo_epi64(a, b);
}
template <size_t N>
inline __m128i unpack_hi(__m128i a, __m128i b) {
  if constexpr (N == 1) return _mm_unpackhi_epi8(a, b);
  if constexpr (N == 2) return _mm_unpackhi_epi16(a, b);
  if constexpr (N == 4) return _mm_unpackhi_epi32(a, b);
  return _mm_unpackhi_epi64(a, b);
}

// A B x B block of N-byte elements (B = 16 / N: one register per row) through
// registers: log2(B) rounds of pairing row i with row i + B/2 and interleaving
// their halves leave the transpose. Lanes are moved, never interpreted.
template <size_t N>
inline void block(char* out, int64_t os, const char* in, int64_t is) {
  constexpr int B = static_cast<int>(16 / N);
  __m128i x[B], y[B];
  for (int i = 0; i < B; ++i) x[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i * is));
  for (int round = 1; round < B; round *= 2) {
    for (int i = 0; i < B / 2; ++i) {
      y[2 * i] = unpack_lo<N>(x[i], x[i + B / 2]);
      y[2 * i + 1] = unpack_hi<N>(x[i], x[i + B / 2]);
    }
    for (int i = 0; i < B; ++i) x[i] = y[i];
  }
  for (int j = 0; j < B; ++j) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j * os), x[j]);
}
#endif

// Whole register blocks, then the ragged right and bottom strips element-wise.
template <size_t N>
void tile(char* out, int64_t os, const char* in, int64_t is, int64_t nj, int64_t ni) {
#if defined(__SSE2__)
  if constexpr (N <= 8) {
    constexpr int64_t B = 16 / N, n = N;
    const int64_t bj = nj - nj % B, bi = ni - ni % B;
    for (int64_t j = 0; j < bj; j += B)
      for (int64_t i = 0; i < bi; i += B)
        block<N>(out + j * os + i * n, os, in + i * is + j * n, is);
    if (bi < ni) tile_scalar<N>(out + bi * n, os, in + bi * is, is, bj, ni - bi);
    if (bj < nj) tile_scalar<N>(out + bj * os, os, in + bj * n, is, nj - bj, ni);
    return;
  }
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
