// Where the first NaN or ±Inf (or value beyond a magnitude) of an f32 array is. Pure, thread-safe.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ork {

// Index of the first element of v[0..count) that is not below `limit` in magnitude (|x| >= limit,
// or NaN), or -1; limit > 0 (+inf: the first NaN or ±Inf). For non-negative floats, NaN included,
// the order of the values is that of their bits as integers, so the test is one integer compare of
// the bits without the sign. Per block of 256, an OR of that test over four 32-bit lanes at a time
// (GCC vector extension: one SSE2 / NEON register, so it runs vectorized at -O2 on every target;
// the scalar loop it replaces was not, and cost a decode step of the 150 M model about 3 % of its
// time checking the matmul inputs and the logits), then the exact index by a scalar scan of the one
// block that has a hit. The common case, every value in range, is the vector pass only.
inline int64_t first_not_below(const float* v, int64_t count, float limit) {
  typedef uint32_t U4 __attribute__((vector_size(16)));
  constexpr uint32_t kAbs = 0x7fffffffu;
  constexpr int64_t kBlock = 256;
  uint32_t lim;
  std::memcpy(&lim, &limit, sizeof lim);
  const auto bad = [lim](float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return uint32_t((bits & kAbs) >= lim);
  };
  const U4 abs = {kAbs, kAbs, kAbs, kAbs}, lim4 = {lim, lim, lim, lim};
  for (int64_t b = 0; b < count; b += kBlock) {
    const int64_t e = count < b + kBlock ? count : b + kBlock;
    U4 any4 = {0, 0, 0, 0};
    int64_t i = b;
    for (; i + 8 <= e; i += 8) {
      U4 x0, x1;
      std::memcpy(&x0, v + i, sizeof x0);
      std::memcpy(&x1, v + i + 4, sizeof x1);
      any4 |= U4((x0 & abs) >= lim4) | U4((x1 & abs) >= lim4);
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

// Index of the first NaN or ±Inf of v[0..count), or -1. Pure, thread-safe.
inline int64_t first_non_finite(const float* v, int64_t count) { return first_not_below(v, count, INFINITY); }

}  // namespace ork
