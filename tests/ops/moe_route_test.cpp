// ops::moe_route against a softmax/top-k written here in double, and its rules: ties, normalization,
// bad k.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "ops/moe_route.h"

namespace ork::ops {
namespace {

TEST(MoeRoute, SoftmaxTopKAndWeights) {
  const std::vector<float> logits = {0.5f, -1.0f, 2.0f, 1.5f, 0.0f, 2.5f, -3.0f, 1.0f};
  double sum = 0;
  std::vector<double> p;
  for (float l : logits) p.push_back(std::exp(double(l) - 2.5));
  for (double v : p) sum += v;
  for (double& v : p) v /= sum;
  int32_t e[3];
  float w[3];
  moe_route(logits.data(), 8, 3, false, e, w);
  EXPECT_EQ(e[0], 5);
  EXPECT_EQ(e[1], 2);
  EXPECT_EQ(e[2], 3);
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(w[j], p[size_t(e[j])], 1e-7) << j;
  moe_route(logits.data(), 8, 3, true, e, w);
  const double s3 = p[5] + p[2] + p[3];
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(w[j], p[size_t(e[j])] / s3, 1e-6) << j;
  EXPECT_NEAR(w[0] + w[1] + w[2], 1.0, 1e-6);
}

TEST(MoeRoute, TiesGoToTheLowerExpertFirst) {
  const std::vector<float> logits = {1.0f, 3.0f, 1.0f, 3.0f, 3.0f};
  int32_t e[4];
  float w[4];
  moe_route(logits.data(), 5, 4, true, e, w);
  EXPECT_EQ(e[0], 1);
  EXPECT_EQ(e[1], 3);
  EXPECT_EQ(e[2], 4);
  EXPECT_EQ(e[3], 0);
  EXPECT_EQ(w[0], w[1]);
}

TEST(MoeRoute, BadKIsAnError) {
  const float logits[2] = {0, 1};
  int32_t e[3];
  float w[3];
  EXPECT_THROW(moe_route(logits, 2, 3, true, e, w), Error);
  EXPECT_THROW(moe_route(logits, 2, 0, true, e, w), Error);
}

}  // namespace
}  // namespace ork::ops
