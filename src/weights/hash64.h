// hash64 — the 64-bit checksum of .orkpack entries, headers and indexes (docs/orkpack.md).
//
// Non-cryptographic: it detects damage (bit flips, truncation, stale bytes), not tampering. Four
// independent lanes over 32-byte stripes so the multiplies pipeline (~1 byte per cycle or better).
// Values are stable across platforms (words are read little-endian) and part of the file format:
// never change them without bumping the .orkpack format version. Pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ork::weights {

// Hash of bytes [data, data + size), seeded (chain calls by passing one hash as the next seed).
uint64_t hash64(const void* data, size_t size, uint64_t seed = 0);

}  // namespace ork::weights
