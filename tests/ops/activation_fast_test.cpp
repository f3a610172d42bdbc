// swiglu_fast / geglu_fast (activation_fast.h): within 1e-6 relative (+1e-7 absolute) of the
// functions in double over a dense sweep of gates from −100 to 100 and random gates; the same value
// for an element whether it is computed in a long array (the vector body) or alone (the scalar
// tail); in place; the extremes stay finite and signed.
#include "ops/activation_fast.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops/reference.h"

namespace ork::ops {
namespace {

double swiglu_ref(double g, double u) { return g / (1.0 + std::exp(-g)) * u; }
double geglu_ref(double g, double u) {
  return 0.5 * g * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (g + 0.044715 * g * g * g))) * u;
}

std::vector<float> gates() {
  std::vector<float> g;
  for (float x = -100.0f; x <= 100.0f; x += 0.0137f) g.push_back(x);
  for (float x : testing::random_floats(4099, 5, -12.0f, 12.0f)) g.push_back(x);
  for (float x : {0.0f, -0.0f, 1e-30f, -1e-30f, 87.0f, -87.0f, 88.5f, -88.5f, 1e4f, -1e4f}) g.push_back(x);
  return g;
}

void expect_close(Glu kind) {
  const std::vector<float> g = gates();
  const std::vector<float> u = testing::random_floats(g.size(), 7, -2.0f, 2.0f);
  std::vector<float> out(g.size()), one(1), inplace = g;
  glu_fast(kind, g.data(), u.data(), int64_t(g.size()), out.data());
  for (size_t i = 0; i < g.size(); ++i) {
    const double ref = kind == Glu::kGeglu ? geglu_ref(g[i], u[i]) : swiglu_ref(g[i], u[i]);
    ASSERT_NEAR(out[i], ref, 1e-6 * std::fabs(ref) + 1e-7) << "g=" << g[i] << " u=" << u[i];
    ASSERT_TRUE(std::isfinite(out[i]));
    glu_fast(kind, g.data() + i, u.data() + i, 1, one.data());
    ASSERT_EQ(testing::bit_equal(std::vector<float>{one[0]}, std::vector<float>{out[i]}), true)
        << "element " << i << " alone differs from the same element in the array";
  }
  glu_fast(kind, inplace.data(), u.data(), int64_t(g.size()), inplace.data());
  EXPECT_TRUE(testing::bit_equal(inplace, out));
}

TEST(ActivationFast, SwigluWithinAMillionthOfTheFunction) { expect_close(Glu::kSwiglu); }
TEST(ActivationFast, GegluWithinAMillionthOfTheFunction) { expect_close(Glu::kGeglu); }

TEST(ActivationFast, ExtremeGates) {
  const std::vector<float> g = {-100.0f, 100.0f, 0.0f, -1e30f, 1e30f}, u = {3.0f, 3.0f, 3.0f, 1.0f, 1.0f};
  std::vector<float> out(g.size());
  swiglu_fast(g.data(), u.data(), int64_t(g.size()), out.data());
  EXPECT_NEAR(out[0], 0.0f, 1e-30);
  EXPECT_LE(out[0], 0.0f);
  EXPECT_FLOAT_EQ(out[1], 300.0f);
  EXPECT_EQ(out[2], 0.0f);
  EXPECT_LE(out[3], 0.0f);
  EXPECT_GT(out[3], -1e-6f);
  EXPECT_FLOAT_EQ(out[4], 1e30f);
}

}  // namespace
}  // namespace ork::ops
