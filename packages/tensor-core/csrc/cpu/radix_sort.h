// Stable LSD radix sort of unsigned keys (optionally carrying an index each),
// over our threads, and the order-preserving map of every sortable dtype onto
// unsigned keys: ascending keys = sort_keys.h's order (NaN last, -0 == 0).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/scratch.h"
#include "cpu/parallel.h"
#include "cpu/sort_keys.h"

namespace flambeau {

// The unsigned key type of a sort key type K.
template <class K>
using radix_key_t =
    std::conditional_t<sizeof(K) == 1, uint8_t,
                       std::conditional_t<sizeof(K) == 2, uint16_t,
                                          std::conditional_t<sizeof(K) == 4, uint32_t, uint64_t>>>;

// k's position in ascending order as an unsigned number. Floats: the sign bit
// flips positives above negatives and the other bits of negatives are
// inverted; -0 maps to +0's key and every NaN to the largest key.
template <class K>
radix_key_t<K> radix_key(K k) {
  using U = radix_key_t<K>;
  constexpr U sign = U(1) << (8 * sizeof(U) - 1);
  if constexpr (std::is_floating_point_v<K>) {
    if (std::isnan(k)) return static_cast<U>(~U(0));
    if (k == 0) k = 0;  // -0 -> +0
    U bits;
    std::memcpy(&bits, &k, sizeof(U));
    return (bits & sign) ? static_cast<U>(~bits) : static_cast<U>(bits | sign);
  } else if constexpr (std::is_signed_v<K>) {
    return static_cast<U>(static_cast<U>(k) ^ sign);
  } else {
    return static_cast<U>(k);
  }
}

// The value of an integral key (the inverse of radix_key for integral K).
template <class K>
K radix_value(radix_key_t<K> u) {
  static_assert(std::is_integral_v<K>);
  using U = radix_key_t<K>;
  if constexpr (std::is_signed_v<K>) return static_cast<K>(u ^ (U(1) << (8 * sizeof(U) - 1)));
  return static_cast<K>(u);
}

// Sorts keys[0, n) ascending and permutes index alike (index may be null);
// equal keys keep their order. Byte digits on which all keys agree are skipped;
// each pass counts, then scatters, one contiguous piece per thread.
template <class U, class I>
void radix_sort(U* keys, I* index, int64_t n) {
  if (n < 2) return;
  const int64_t pieces = std::max<int64_t>(1, std::min<int64_t>(get_num_threads(), n / 65536));
  auto bound = [&](int64_t p) { return n / pieces * p + std::min(p, n % pieces); };
  U any = 0, all = static_cast<U>(~U(0));
  for (int64_t i = 0; i < n; ++i) any |= keys[i], all &= keys[i];
  Scratch<U> key_buf(static_cast<size_t>(n));
  Scratch<I> index_buf(index ? static_cast<size_t>(n) : 0);
  U *src = keys, *dst = key_buf.data();
  I *isrc = index, *idst = index_buf.data();
  std::vector<std::array<int64_t, 256>> offset(static_cast<size_t>(pieces));
  for (int shift = 0; shift < 8 * static_cast<int>(sizeof(U)); shift += 8) {
    if (((any ^ all) >> shift & 0xFF) == 0) continue;  // every key has this digit
    auto digit = [shift](U k) { return static_cast<size_t>(k >> shift & 0xFF); };
    parallel_for(0, pieces, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        offset[p].fill(0);
        for (int64_t i = bound(p); i < bound(p + 1); ++i) ++offset[p][digit(src[i])];
      }
    });
    int64_t at = 0;  // digit-major, then piece: piece p's d's go after piece p-1's
    for (size_t d = 0; d < 256; ++d) {
      for (int64_t p = 0; p < pieces; ++p) {
        const int64_t c = offset[p][d];
        offset[p][d] = at;
        at += c;
      }
    }
    parallel_for(0, pieces, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        auto& off = offset[p];
        for (int64_t i = bound(p); i < bound(p + 1); ++i) {
          const int64_t to = off[digit(src[i])]++;
          dst[to] = src[i];
          if (index) idst[to] = isrc[i];
        }
      }
    });
    std::swap(src, dst);
    std::swap(isrc, idst);
  }
  if (src != keys) {
    std::memcpy(keys, src, static_cast<size_t>(n) * sizeof(U));
    if (index) std::memcpy(index, isrc, static_cast<size_t>(n) * sizeof(I));
  }
}

}  // namespace flambeau
