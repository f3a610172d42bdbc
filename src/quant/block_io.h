// Internal to src/quant: copying blocks between unaligned row bytes and local structs.
#pragma once

#include <cstdint>
#include <cstring>

namespace ork::quant::detail {

// Block i of the row at `src` (no alignment required).
template <typename Block>
inline Block load_block(const void* src, int64_t i) {
  Block b;
  std::memcpy(&b, static_cast<const uint8_t*>(src) + i * int64_t(sizeof(Block)), sizeof b);
  return b;
}

// Writes `b` as block i of the row at `dst` (no alignment required).
template <typename Block>
inline void store_block(void* dst, int64_t i, const Block& b) {
  std::memcpy(static_cast<uint8_t*>(dst) + i * int64_t(sizeof(Block)), &b, sizeof b);
}

}  // namespace ork::quant::detail
