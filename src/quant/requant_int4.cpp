#include "quant/requant_int4.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace ork::quant {

namespace {

float group_scale(const float* v, int64_t count, int64_t row, int64_t col0, const char* what) {
  float amax = 0.0f;
  for (int64_t t = 0; t < count; ++t) {
    ORK_CHECK(std::isfinite(v[t]), what, ": non-finite value at row ", row, ", column ", col0 + t);
    amax = std::max(amax, std::fabs(v[t]));
  }
  return amax / float(kI4QMax);
}

void quantize_span(const float* v, int64_t count, float scale, int8_t* q) {
  for (int64_t t = 0; t < count; ++t) {
    if (scale == 0.0f) {
      q[t] = 0;
      continue;
    }
    float r = std::round(v[t] / scale);
    r = r > float(kI4QMax) ? float(kI4QMax) : r < -float(kI4QMax) ? -float(kI4QMax) : r;
    q[t] = int8_t(r);
  }
}

}  // namespace

void quantize_weights_i4(const float* w, int64_t n, int64_t k, int64_t group, int8_t* q, float* scales) {
  ORK_CHECK(group >= 1, "quantize_weights_i4: group ", group);
  const int64_t groups = int4_groups(k, group);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t c0 = g * group, count = std::min(group, k - c0);
      const float s = group_scale(w + j * k + c0, count, j, c0, "quantize_weights_i4");
      scales[j * groups + g] = s;
      quantize_span(w + j * k + c0, count, s, q + j * k + c0);
    }
}

void quantize_rows_i4(const float* x, int64_t m, int64_t k, int8_t* q, float* scales) {
  for (int64_t i = 0; i < m; ++i) {
    const float s = group_scale(x + i * k, k, i, 0, "quantize_rows_i4");
    scales[i] = s;
    quantize_span(x + i * k, k, s, q + i * k);
  }
}

void dequantize_i32_groups(const int32_t* c, int64_t groups, int64_t m, int64_t n, const float* sa,
                           const float* sw, float* y) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t g = 0; g < groups; ++g) {
        const float v = (float(c[(g * m + i) * n + j]) * sa[i]) * sw[j * groups + g];
        acc = g == 0 ? v : acc + v;
      }
      y[i * n + j] = acc;
    }
}

}  // namespace ork::quant
