#include "model/unscaled_rows.h"

#include <cstring>

#include "quant/requant.h"

namespace ork::model {

void UnscaledRows::row(int64_t r, float* out) const {
  const float* in = y + r * n;
  for (int64_t j = 0; j < n_sums; ++j) {
    int32_t c;
    std::memcpy(&c, in + j, sizeof c);
    out[j] = quant::dequantize_i32_one(c, sa[r], sb[j]);
  }
  if (out != in) std::memcpy(out + n_sums, in + n_sums, size_t(n - n_sums) * sizeof(float));
}

void UnscaledRows::scale_rows(int64_t m) {
  if (n_sums == 0) return;
  for (int64_t r = 0; r < m; ++r) scale_row(r);
  n_sums = 0;
}

}  // namespace ork::model
