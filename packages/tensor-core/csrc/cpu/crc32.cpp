// CRC-32 with the reflected polynomial 0xEDB88320. A 32-bit state s stands for
// a polynomial of degree < 32 with bit m the coefficient of x^(31 - m); the
// CRC of a message is ~s. Long inputs fold 16-byte blocks with PCLMULQDQ: a
// block R (bit i of the little-endian 128-bit load = coefficient of x^(127-i))
// carried d bits further equals R * x^d mod P, computed as two 64x32-bit
// carry-less products with constants x^k mod P derived below at startup.
#include "cpu/crc32.h"

#include <algorithm>
#include <array>
#include <vector>

#include "cpu/parallel.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define FLB_CRC_CLMUL 1
#endif

namespace flambeau {

namespace {

constexpr uint32_t kPoly = 0xEDB88320u;
constexpr uint32_t kOne = 0x80000000u;  // the polynomial 1

uint32_t times_x(uint32_t v) { return (v & 1) ? (v >> 1) ^ kPoly : v >> 1; }

// a * b mod P.
uint32_t mul_mod(uint32_t a, uint32_t b) {
  uint32_t p = 0;
  for (int d = 0; d < 32; ++d, b = times_x(b))
    if (a & (kOne >> d)) p ^= b;
  return p;
}

// x^k mod P.
uint32_t x_pow(uint64_t k) {
  uint32_t r = kOne, base = kOne >> 1;  // base = x
  for (; k; k >>= 1, base = mul_mod(base, base))
    if (k & 1) r = mul_mod(r, base);
  return r;
}

struct Tables {
  std::array<uint32_t, 256> byte;
  // Folding a block forward by 512 bits (4 blocks) and by 128 bits (1 block):
  // {constant for the low 64 bits, constant for the high 64 bits}.
  uint64_t fold4[2], fold1[2];
  bool clmul = false;
  Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = times_x(c);
      byte[i] = c;
    }
    // The low half H (degrees 64..127) moves by x^(d+64), the high half L by
    // x^d. clmul of two bit-reflected 64-bit operands yields their product
    // times x in the 128-bit block convention, so the constants are
    // x^(d+63) and x^(d-1), placed in the top 32 bits of a 64-bit lane.
    auto lane = [](uint64_t k) { return static_cast<uint64_t>(x_pow(k)) << 32; };
    fold4[0] = lane(512 + 63), fold4[1] = lane(512 - 1);
    fold1[0] = lane(128 + 63), fold1[1] = lane(128 - 1);
#ifdef FLB_CRC_CLMUL
    __builtin_cpu_init();
    clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

// State update, byte by byte.
uint32_t bytes_update(uint32_t s, const uint8_t* p, size_t n) {
  const auto& tb = tables().byte;
  for (size_t i = 0; i < n; ++i) s = tb[(s ^ p[i]) & 0xFF] ^ (s >> 8);
  return s;
}

#ifdef FLB_CRC_CLMUL
__attribute__((target("pclmul,sse4.1"))) inline __m128i fold(__m128i r, __m128i k, __m128i next) {
  __m128i lo = _mm_clmulepi64_si128(r, k, 0x00), hi = _mm_clmulepi64_si128(r, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

// State update for n >= 64: four running blocks folded 64 bytes at a time,
// merged into one, then single blocks; the last block and the tail go
// through the byte table (a block's state is its CRC from state 0).
__attribute__((target("pclmul,sse4.1"))) uint32_t clmul_update(uint32_t s, const uint8_t* p,
                                                               size_t n) {
  const Tables& t = tables();
  auto load = [](const uint8_t* q) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)); };
  const __m128i k4 =
      _mm_set_epi64x(static_cast<long long>(t.fold4[1]), static_cast<long long>(t.fold4[0]));
  const __m128i k1 =
      _mm_set_epi64x(static_cast<long long>(t.fold1[1]), static_cast<long long>(t.fold1[0]));
  __m128i a = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(s)));
  __m128i b = load(p + 16), c = load(p + 32), d = load(p + 48);
  p += 64, n -= 64;
  for (; n >= 64; p += 64, n -= 64) {
    a = fold(a, k4, load(p));
    b = fold(b, k4, load(p + 16));
    c = fold(c, k4, load(p + 32));
    d = fold(d, k4, load(p + 48));
  }
  d = fold(fold(fold(a, k1, b), k1, c), k1, d);
  for (; n >= 16; p += 16, n -= 16) d = fold(d, k1, load(p));
  alignas(16) uint8_t last[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(last), d);
  return bytes_update(bytes_update(0, last, 16), p, n);
}
#endif

uint32_t state_update(uint32_t s, const uint8_t* p, size_t n) {
#ifdef FLB_CRC_CLMUL
  if (n >= 64 && tables().clmul) return clmul_update(s, p, n);
#endif
  return bytes_update(s, p, n);
}

}  // namespace

uint32_t crc32_update(uint32_t crc, const void* data, size_t n) {
  return ~state_update(~crc, static_cast<const uint8_t*>(data), n);
}

uint32_t crc32_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b) {
  return mul_mod(crc_a, x_pow(8 * len_b)) ^ crc_b;
}

uint32_t crc32_parallel(uint32_t crc, const void* data, size_t n) {
  constexpr int64_t kPiece = 1 << 20;  // below this, a thread is not worth waking
  const int64_t pieces =
      std::max<int64_t>(1, std::min<int64_t>(get_num_threads(), static_cast<int64_t>(n) / kPiece));
  if (pieces == 1) return crc32_update(crc, data, n);
  const auto* p = static_cast<const uint8_t*>(data);
  std::vector<uint32_t> part(static_cast<size_t>(pieces));
  auto bound = [&](int64_t i) { return static_cast<size_t>(i) * n / static_cast<size_t>(pieces); };
  parallel_for(0, pieces, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      part[i] = crc32_update(i == 0 ? crc : 0, p + bound(i), bound(i + 1) - bound(i));
  });
  uint32_t r = part[0];
  for (int64_t i = 1; i < pieces; ++i) r = crc32_combine(r, part[i], bound(i + 1) - bound(i));
  return r;
}

}  // namespace flambeau
