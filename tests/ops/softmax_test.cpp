#include "ops/softmax.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "ops/reference.h"

namespace ork::ops {
namespace {

TEST(Softmax, MatchesReference) {
  for (int64_t n : {1, 2, 3, 8, 9, 100, 1023, 32000}) {
    for (float spread : {1.0f, 30.0f}) {
      std::vector<float> x = testing::random_floats(size_t(n), uint32_t(n), -spread, spread);
      const std::vector<float> in = x;
      softmax(x.data(), n);
      double mx = -INFINITY, sum = 0.0;
      for (float v : in) mx = std::max(mx, double(v));
      for (float v : in) sum += std::exp(double(v) - mx);
      double total = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        const double ref = std::exp(double(in[size_t(i)]) - mx) / sum;
        // expf's argument x − max is rounded to f32 first: relative error up to |x − max|·2⁻²⁴.
        const double tol = ref * (1e-6 + std::fabs(double(in[size_t(i)]) - mx) * 1.2e-7) + 1e-37;
        ASSERT_NEAR(x[size_t(i)], ref, tol) << "n=" << n << " i=" << i;
        total += x[size_t(i)];
      }
      EXPECT_NEAR(total, 1.0, 1e-5);
    }
  }
}

TEST(Softmax, LargeAndMaskedValues) {
  const float ninf = -std::numeric_limits<float>::infinity();
  std::vector<float> x = {1000.0f, 1000.0f, ninf, 999.0f};
  softmax(x.data(), 4);
  const double e = std::exp(-1.0);
  EXPECT_NEAR(x[0], 1.0 / (2.0 + e), 1e-6);
  EXPECT_NEAR(x[1], 1.0 / (2.0 + e), 1e-6);
  EXPECT_EQ(x[2], 0.0f);
  EXPECT_NEAR(x[3], e / (2.0 + e), 1e-6);
  std::vector<float> one = {-5.0f};
  softmax(one.data(), 1);
  EXPECT_EQ(one[0], 1.0f);
  EXPECT_THROW(softmax(one.data(), 0), Error);
}

}  // namespace
}  // namespace ork::ops
