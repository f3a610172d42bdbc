// The rounding of K/V rows by a KV cache of type f16 or q8_0, written for the tests from the formats'
// definitions (IEEE binary16 round-to-nearest-even; ggml's quantize_row_q8_0_ref: d = amax / 127 in
// f32 stored as fp16, q = roundf(x · (1 / d))), sharing no code with src/. Rows are one position's
// kv_dim values (q8_0: a multiple of 32); values are first taken to f32 as the engine holds them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace ork::testing {

// x (as f32) rounded to the nearest f16 value, ties to even; |x| within f16's range.
inline double round_to_f16(double x) {
  const float f = float(x);
  if (f == 0.0f) return 0.0;
  int e = 0;
  (void)std::frexp(f, &e);                         // |f| = m · 2^e, 0.5 <= m < 1
  const double ulp = std::ldexp(1.0, std::max(e - 11, -24));  // 11 significant bits; subnormal step 2^-24
  return std::nearbyint(double(f) / ulp) * ulp;    // the default rounding mode: ties to even
}

// row[0..n) rounded in place as a cache of `kv_type` ("f32": no change, "f16", "q8_0") stores it.
inline void round_kv_row(const std::string& kv_type, double* row, int64_t n) {
  if (kv_type == "f16") {
    for (int64_t i = 0; i < n; ++i) row[i] = round_to_f16(row[i]);
  } else if (kv_type == "q8_0") {
    for (int64_t b = 0; b < n; b += 32) {
      float amax = 0.0f;
      for (int64_t i = b; i < b + 32; ++i) amax = std::max(amax, std::fabs(float(row[i])));
      const float d = amax / 127.0f;
      const float id = d != 0.0f ? 1.0f / d : 0.0f;
      const double d16 = round_to_f16(d);
      for (int64_t i = b; i < b + 32; ++i) row[i] = double(std::round(float(row[i]) * id)) * d16;
    }
  } else if (kv_type != "f32") {
    throw std::string("round_kv_row: unknown KV type ") + kv_type;
  }
}

}  // namespace ork::testing
