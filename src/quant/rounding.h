// Internal to src/quant: rounding helpers shared by the reference quantizers.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/error.h"
#include "core/fp16.h"

namespace ork::quant::detail {

// Nearest integer, ties away from zero (std::round), as an int. |v| must fit in an int.
inline int round_away(float v) { return int(std::round(v)); }

inline int clamp_int(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// The smallest fp16 value >= v (v finite), as fp16 bits; +inf bits when v > 65504.
inline uint16_t f16_ceil(float v) {
  uint16_t h = f32_to_f16(v);
  if (f16_to_f32(h) < v) h = (h & 0x8000u) ? (h == 0x8000u ? 0x0001u : uint16_t(h - 1)) : uint16_t(h + 1);
  return h;
}

// The largest fp16 value <= v (v finite), as fp16 bits; -inf bits when v < -65504.
inline uint16_t f16_floor(float v) {
  uint16_t h = f32_to_f16(v);
  if (f16_to_f32(h) > v) h = (h & 0x8000u) ? uint16_t(h + 1) : (h == 0 ? 0x8001u : uint16_t(h - 1));
  return h;
}

// Throws ork::Error naming the format and element when any of x[0..n) is NaN or infinite.
inline void check_finite(const float* x, int64_t n, const char* format, int64_t first_index) {
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) {
      fail("quantize ", format, ": element ", first_index + i, " is not finite (", x[i], ")");
    }
  }
}

// Throws ork::Error when fp16 bits `h` are not finite: a block scale or offset out of fp16 range.
inline void check_f16_scale(uint16_t h, const char* format, const char* field, int64_t block) {
  if ((h & 0x7c00u) == 0x7c00u) {
    fail("quantize ", format, ": block ", block, " ", field, " overflows fp16 (values too large)");
  }
}

}  // namespace ork::quant::detail
