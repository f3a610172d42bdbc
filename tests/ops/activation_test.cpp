#include "ops/activation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops/elementwise.h"
#include "ops/reference.h"

namespace ork::ops {
namespace {

TEST(SwiGlu, MatchesReference) {
  for (int64_t n : {0, 1, 3, 8, 17, 4864}) {
    const std::vector<float> g = testing::random_floats(size_t(n), uint32_t(n), -12.0f, 12.0f);
    const std::vector<float> u = testing::random_floats(size_t(n), uint32_t(n + 9), -2.0f, 2.0f);
    std::vector<float> out(static_cast<size_t>(n));
    swiglu(g.data(), u.data(), n, out.data());
    for (int64_t i = 0; i < n; ++i) {
      const double gd = g[size_t(i)];
      const double ref = gd / (1.0 + std::exp(-gd)) * u[size_t(i)];
      ASSERT_NEAR(out[size_t(i)], ref, 1e-6 * std::fabs(ref) + 1e-7) << "n=" << n << " i=" << i;
    }
    std::vector<float> inplace = g;
    swiglu(inplace.data(), u.data(), n, inplace.data());
    EXPECT_TRUE(testing::bit_equal(inplace, out));
  }
}

// GeGLU against ggml's tanh-approximated GELU in double, in place too.
TEST(GeGlu, MatchesTanhGeluReference) {
  for (int64_t n : {0, 1, 5, 64, 4097}) {
    const std::vector<float> g = testing::random_floats(size_t(n), uint32_t(n + 3), -12.0f, 12.0f);
    const std::vector<float> u = testing::random_floats(size_t(n), uint32_t(n + 11), -2.0f, 2.0f);
    std::vector<float> out(static_cast<size_t>(n));
    geglu(g.data(), u.data(), n, out.data());
    for (int64_t i = 0; i < n; ++i) {
      const double x = g[size_t(i)];
      const double gelu = 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
      const double ref = gelu * u[size_t(i)];
      // Absolute slack: for g below about −4, 1 + tanh(…) cancels in f32 (as in ggml's formula).
      ASSERT_NEAR(out[size_t(i)], ref, 1e-6 * std::fabs(ref) + 5e-7) << "n=" << n << " i=" << i;
    }
    std::vector<float> inplace = g;
    geglu(inplace.data(), u.data(), n, inplace.data());
    EXPECT_TRUE(testing::bit_equal(inplace, out));
  }
  // Known values: gelu(1) = 0.841192 (tanh form), gelu(−3) = −0.003637.
  const float gs[] = {1.0f, -3.0f}, us[] = {1.0f, 1.0f};
  float o[2];
  geglu(gs, us, 2, o);
  EXPECT_NEAR(o[0], 0.841192, 1e-6);
  EXPECT_NEAR(o[1], -0.00363739, 1e-7);
}

TEST(SwiGlu, ExtremeGates) {
  const std::vector<float> g = {-100.0f, 100.0f, 0.0f}, u = {3.0f, 3.0f, 3.0f};
  std::vector<float> out(3);
  swiglu(g.data(), u.data(), 3, out.data());
  EXPECT_NEAR(out[0], 0.0f, 1e-30);
  EXPECT_FLOAT_EQ(out[1], 300.0f);
  EXPECT_EQ(out[2], 0.0f);
}

TEST(Elementwise, AddAndBiasRows) {
  std::vector<float> y = {1, 2, 3, 4, 5, 6}, x = {10, 20, 30, 40, 50, 60};
  add(y.data(), x.data(), 6);
  EXPECT_EQ(y, (std::vector<float>{11, 22, 33, 44, 55, 66}));
  const std::vector<float> bias = {0.5f, -1.0f, 2.0f};
  add_bias_rows(y.data(), bias.data(), 2, 3);
  EXPECT_EQ(y, (std::vector<float>{11.5f, 21, 35, 44.5f, 54, 68}));
  add(y.data(), x.data(), 0);
  add_bias_rows(y.data(), bias.data(), 0, 3);
  EXPECT_EQ(y[0], 11.5f);
}

}  // namespace
}  // namespace ork::ops
