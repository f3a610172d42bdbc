#include "ops/softmax.h"

#include <cmath>

#include "core/error.h"

namespace ork::ops {

void softmax(float* x, int64_t n) {
  ORK_CHECK(n >= 1, "ops::softmax: n=", n, " must be >= 1");
  float mx = x[0];
  for (int64_t i = 1; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const float e = std::exp(x[i] - mx);
    x[i] = e;
    sum += double(e);
  }
  const float inv = float(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

}  // namespace ork::ops
