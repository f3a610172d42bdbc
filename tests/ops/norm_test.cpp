#include "ops/norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "ops/reference.h"

namespace ork::ops {
namespace {

TEST(RmsNorm, MatchesReference) {
  for (int64_t n : {1, 2, 3, 4, 5, 7, 8, 33, 896, 4097}) {
    const std::vector<float> x = testing::random_floats(size_t(n), uint32_t(n), -3.0f, 3.0f);
    const std::vector<float> w = testing::random_floats(size_t(n), uint32_t(n + 1), 0.5f, 1.5f);
    const float eps = 1e-6f;
    double ss = 0.0;
    for (float v : x) ss += double(v) * v;
    const double s = 1.0 / std::sqrt(ss / double(n) + eps);
    std::vector<float> y(static_cast<size_t>(n)), y_plain(static_cast<size_t>(n));
    rmsnorm(x.data(), w.data(), n, eps, y.data());
    rmsnorm(x.data(), nullptr, n, eps, y_plain.data());
    for (int64_t i = 0; i < n; ++i) {
      const double ref = double(x[size_t(i)]) * s;
      EXPECT_NEAR(y_plain[size_t(i)], ref, 1e-6 * std::fabs(ref) + 1e-30) << "n=" << n << " i=" << i;
      EXPECT_NEAR(y[size_t(i)], ref * w[size_t(i)], 1e-6 * std::fabs(ref * w[size_t(i)]) + 1e-30)
          << "n=" << n << " i=" << i;
    }
    std::vector<float> inplace = x;
    rmsnorm(inplace.data(), w.data(), n, eps, inplace.data());
    EXPECT_TRUE(testing::bit_equal(inplace, y)) << "n=" << n;
  }
}

TEST(RmsNorm, EpsilonDominatesZeros) {
  std::vector<float> x(5, 0.0f), y(5, 1.0f);
  rmsnorm(x.data(), nullptr, 5, 1e-5f, y.data());
  for (float v : y) EXPECT_EQ(v, 0.0f);
  std::vector<float> one = {2.0f}, out(1);
  rmsnorm(one.data(), nullptr, 1, 0.0f, out.data());
  EXPECT_FLOAT_EQ(out[0], 1.0f);
  EXPECT_THROW(rmsnorm(one.data(), nullptr, 0, 1e-5f, out.data()), Error);
}

}  // namespace
}  // namespace ork::ops
