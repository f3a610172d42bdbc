// Test helpers: raw little-endian block bytes written field by field from the format descriptions
// (docs/quant.md), independent of src/quant/blocks.h.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/fp16.h"

namespace ork::quant::testing {

using Bytes = std::vector<uint8_t>;

inline void put_u16(Bytes& b, size_t off, uint16_t v) {
  b.at(off) = uint8_t(v & 0xff);
  b.at(off + 1) = uint8_t(v >> 8);
}

inline uint16_t get_u16(const Bytes& b, size_t off) { return uint16_t(b.at(off) | b.at(off + 1) << 8); }

inline void put_f32(Bytes& b, size_t off, float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  for (int k = 0; k < 4; ++k) b.at(off + k) = uint8_t(u >> (8 * k));
}

// A random finite fp16 in about [2^-12, 2), with a random sign when `signed_value`.
inline uint16_t random_f16(std::mt19937& rng, bool signed_value) {
  const uint16_t exp = uint16_t(3 + rng() % 12);  // 2^-12 .. 2^-1 * (1 + mant)
  const uint16_t mant = uint16_t(rng() & 0x3ff);
  const uint16_t sign = signed_value && (rng() & 1) ? 0x8000 : 0;
  return uint16_t(sign | exp << 10 | mant);
}

inline Bytes random_bytes(std::mt19937& rng, size_t n) {
  Bytes b(n);
  for (auto& x : b) x = uint8_t(rng());
  return b;
}

}  // namespace ork::quant::testing
