// Where the first NaN or ±Inf of an f32 array is. Pure, thread-safe.
#pragma once

#include <cstdint>
#include <cstring>

namespace ork {

// Index of the first NaN or ±Inf of v[0..count), or -1. A branch-free OR of the exponent test per
// block of 256, so the common all-finite case is one vectorizable pass.
inline int64_t first_non_finite(const float* v, int64_t count) {
  constexpr int64_t kBlock = 256;
  const auto bad = [](float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return uint32_t((bits & 0x7f800000u) == 0x7f800000u);
  };
  for (int64_t b = 0; b < count; b += kBlock) {
    const int64_t e = count < b + kBlock ? count : b + kBlock;
    uint32_t any = 0;
    for (int64_t i = b; i < e; ++i) any |= bad(v[i]);
    if (any == 0) continue;
    for (int64_t i = b; i < e; ++i) {
      if (bad(v[i]) != 0) return i;
    }
  }
  return -1;
}

}  // namespace ork
