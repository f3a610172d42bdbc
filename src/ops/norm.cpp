#include "ops/norm.h"

#include <cmath>

#include "core/error.h"

namespace ork::ops {

void rmsnorm(const float* x, const float* weight, int64_t n, float eps, float* y) {
  ORK_CHECK(n >= 1, "ops::rmsnorm: n=", n, " must be >= 1");
  constexpr int kLanes = 4;
  double acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += double(x[i + l] * x[i + l]);
  for (int l = 0; i + l < n; ++l) acc[l] += double(x[i + l] * x[i + l]);
  const double sum = (acc[0] + acc[2]) + (acc[1] + acc[3]);
  const float mean = float(sum / double(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  if (weight != nullptr) {
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j] * scale) * weight[j];
  } else {
    for (int64_t j = 0; j < n; ++j) y[j] = x[j] * scale;
  }
}

}  // namespace ork::ops
