#include "quant/norm_fold.h"

#include <cmath>

#include "core/error.h"

namespace ork::quant {

float norm_fold_factor(float g) {
  const float a = std::fabs(g);
  return std::isfinite(a) && a > 0.0f ? a : 1.0f;
}

void fold_norm_into_row(float* w, const float* g, int64_t k) {
  for (int64_t j = 0; j < k; ++j) w[j] *= norm_fold_factor(g[j]);
}

const float* unfold_norm_rows(const float* x, int64_t m, int64_t k, const float* g, std::vector<float>& buf) {
  ORK_CHECK(m >= 0 && k >= 0 && (m * k == 0 || (x != nullptr && g != nullptr)), "unfold_norm_rows: bad arguments");
  buf.resize(size_t(m * k));
  for (int64_t i = 0; i < m; ++i) unfold_norm_row(x + i * k, k, g, buf.data() + i * k);
  return buf.data();
}

void unfold_norm_row(const float* x, int64_t k, const float* g, float* y) {
  for (int64_t j = 0; j < k; ++j) y[j] = x[j] / norm_fold_factor(g[j]);
}

}  // namespace ork::quant
