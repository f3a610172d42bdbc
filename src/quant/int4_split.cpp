#include "quant/int4_split.h"

namespace ork::quant {

void split_int8_rows_to_int4(const int8_t* q, int64_t m, int64_t k, int8_t* out) {
  for (int64_t i = 0; i < m; ++i) {
    const int8_t* row = q + i * k;
    int8_t* hi = out + 2 * i * k;
    int8_t* lo = hi + k;
    for (int64_t t = 0; t < k; ++t) {
      const int v = row[t];
      hi[t] = int8_t(v >> 4);         // floor(v / 16): −8..7 (arithmetic shift, C++20)
      lo[t] = int8_t((v & 15) - 8);   // −8..7
    }
  }
}

void int4_split_correction(const int8_t* b, int64_t n, int64_t k, int32_t* corr) {
  for (int64_t j = 0; j < n; ++j) {
    int32_t s = 0;
    for (int64_t t = 0; t < k; ++t) s += b[j * k + t];
    corr[j] = 8 * s;
  }
}

void combine_int4_split(const int32_t* r, int64_t m, int64_t n, const int32_t* corr, int32_t* c) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const uint32_t v = 16u * uint32_t(r[2 * i * n + j]) + uint32_t(r[(2 * i + 1) * n + j]) + uint32_t(corr[j]);
      c[i * n + j] = int32_t(v);
    }
}

}  // namespace ork::quant
