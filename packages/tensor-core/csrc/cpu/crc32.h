// zlib's CRC-32 (the ZIP checksum), fast: carry-less multiply folding where
// the CPU has it, a byte table elsewhere. Values are interchangeable with
// zlib.crc32: crc32_update(crc32_update(0, a), b) is the CRC of a then b.
#pragma once
#include <cstddef>
#include <cstdint>

namespace flambeau {

// The CRC of `n` more bytes at `data`, continuing from `crc` (0 to start).
uint32_t crc32_update(uint32_t crc, const void* data, size_t n);
// The CRC of a then b, from crc_a, crc_b (each started from 0) and b's length.
uint32_t crc32_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);
// crc32_update over our threads (pieces combined); releases Python's lock.
uint32_t crc32_parallel(uint32_t crc, const void* data, size_t n);

}  // namespace flambeau
