// Where the first NaN or ±Inf of an f32 array is. Pure, thread-safe.
#pragma once

#include <cstdint>
#include <cstring>

namespace ork {

// Index of the first NaN or ±Inf of v[0..count), or -1. Per block of 256, an OR of the exponent
// test over four 32-bit lanes at a time (GCC vector extension: one SSE2 / NEON register, so it runs
// vectorized at -O2 on every target; the scalar loop it replaces was not, and cost a decode step
// of the 150 M model about 3 % of its time checking the matmul inputs and the logits), then the
// exact index by a scalar scan of the one block that has a hit. The common all-finite case is the
// vector pass only.
inline int64_t first_non_finite(const float* v, int64_t count) {
  typedef uint32_t U4 __attribute__((vector_size(16)));
  constexpr uint32_t kExp = 0x7f800000u;
  constexpr int64_t kBlock = 256;
  const auto bad = [](float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return uint32_t((bits & kExp) == kExp);
  };
  const U4 exp = {kExp, kExp, kExp, kExp};
  for (int64_t b = 0; b < count; b += kBlock) {
    const int64_t e = count < b + kBlock ? count : b + kBlock;
    U4 any4 = {0, 0, 0, 0};
    int64_t i = b;
    for (; i + 8 <= e; i += 8) {
      U4 x0, x1;
      std::memcpy(&x0, v + i, sizeof x0);
      std::memcpy(&x1, v + i + 4, sizeof x1);
      any4 |= U4((x0 & exp) == exp) | U4((x1 & exp) == exp);
    }
    uint32_t any = any4[0] | any4[1] | any4[2] | any4[3];
    for (; i < e; ++i) any |= bad(v[i]);
    if (any == 0) continue;
    for (i = b; i < e; ++i) {
      if (bad(v[i]) != 0) return i;
    }
  }
  return -1;
}

}  // namespace ork
