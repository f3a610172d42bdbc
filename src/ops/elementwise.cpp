#include "ops/elementwise.h"

namespace ork::ops {

void add(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void add_bias_rows(float* y, const float* bias, int64_t m, int64_t n) {
  for (int64_t r = 0; r < m; ++r) add(y + r * n, bias, n);
}

}  // namespace ork::ops
