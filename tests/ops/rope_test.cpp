#include "ops/rope.h"
#include "ops/rope_ext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "ops/reference.h"

namespace ork::ops {
namespace {

// Rotates like rope() in double. Angles either exact (double formula) or ggml's f32 recurrence.
// ff: one frequency factor per pair (empty: none), dividing the pair's angle.
std::vector<double> ref_rope(const std::vector<float>& x, int64_t n_heads, int64_t head_dim,
                             int64_t n_rot, int64_t pos, float base, float scale, RopeMode mode,
                             bool ggml_angles, const std::vector<float>& ff = {}) {
  std::vector<double> out(x.begin(), x.end());
  const int64_t half = n_rot / 2;
  const float theta_scale = std::pow(base, -2.0f / float(n_rot));
  float t = float(pos);
  std::vector<double> theta(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    const float f = ff.empty() ? 1.0f : ff[size_t(i)];
    theta[size_t(i)] = ggml_angles ? double(scale * (t / f))
                                   : double(pos) * double(scale) *
                                         std::pow(double(base), -2.0 * double(i) / double(n_rot)) /
                                         double(f);
    t *= theta_scale;
  }
  for (int64_t h = 0; h < n_heads; ++h)
    for (int64_t i = 0; i < half; ++i) {
      const int64_t ia = h * head_dim + (mode == RopeMode::kNormal ? 2 * i : i);
      const int64_t ib = h * head_dim + (mode == RopeMode::kNormal ? 2 * i + 1 : i + half);
      const double a = x[size_t(ia)], b = x[size_t(ib)];
      const double c = std::cos(theta[size_t(i)]), s = std::sin(theta[size_t(i)]);
      out[size_t(ia)] = a * c - b * s;
      out[size_t(ib)] = a * s + b * c;
    }
  return out;
}

struct Case {
  int64_t n_heads, head_dim, n_rot, pos;
  float base, scale;
};

TEST(Rope, MatchesDoubleFormula) {
  const Case cases[] = {{1, 2, 2, 0, 10000.0f, 1.0f},      {1, 2, 2, 1, 10000.0f, 1.0f},
                        {3, 8, 8, 5, 10000.0f, 1.0f},      {2, 64, 64, 17, 10000.0f, 1.0f},
                        {4, 128, 128, 1000, 1e6f, 1.0f},   {2, 10, 6, 7, 10000.0f, 0.5f},
                        {5, 64, 32, 123, 500000.0f, 0.25f}, {1, 128, 128, 4095, 10000.0f, 1.0f}};
  for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message() << "mode=" << int(mode) << " heads=" << c.n_heads << " dim="
                                        << c.head_dim << " n_rot=" << c.n_rot << " pos=" << c.pos);
      const std::vector<float> x =
          testing::random_floats(size_t(c.n_heads * c.head_dim), uint32_t(c.pos + c.head_dim));
      std::vector<float> y = x;
      rope(y.data(), c.n_heads, c.head_dim, c.n_rot, c.pos, c.base, c.scale, mode);
      const std::vector<double> ggml =
          ref_rope(x, c.n_heads, c.head_dim, c.n_rot, c.pos, c.base, c.scale, mode, true);
      const std::vector<double> exact =
          ref_rope(x, c.n_heads, c.head_dim, c.n_rot, c.pos, c.base, c.scale, mode, false);
      // Same angles as ggml: only the f32 sin/cos and rotation round.
      for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], ggml[i], 1e-6) << "element " << i;
      // Exact angles: the f32 recurrence's relative angle error grows with i (n_rot/2 steps) and
      // the absolute error with pos·scale.
      const double tol = 1e-6 + double(c.pos) * double(c.scale) * double(c.n_rot) * 2e-7;
      for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], exact[i], tol) << "element " << i;
      // Dims past n_rot are untouched.
      for (int64_t h = 0; h < c.n_heads; ++h)
        for (int64_t d = c.n_rot; d < c.head_dim; ++d)
          ASSERT_EQ(y[size_t(h * c.head_dim + d)], x[size_t(h * c.head_dim + d)]);
    }
  }
}

// Factors spread over [1/8, 8] (log-uniform), as Llama 3.1's rope_freqs (1 ... 8) and beyond.
std::vector<float> random_factors(int64_t n, uint32_t seed) {
  std::vector<float> u = testing::random_floats(size_t(n), seed);  // in [-1, 1)
  std::vector<float> ff(u.size());
  for (size_t i = 0; i < u.size(); ++i) ff[i] = std::exp2(3.0f * u[i]);
  return ff;
}

TEST(Rope, FrequencyFactorsDivideEachPairsAngle) {
  const Case cases[] = {{1, 2, 2, 1, 10000.0f, 1.0f},      {3, 8, 8, 5, 10000.0f, 1.0f},
                        {2, 64, 64, 17, 500000.0f, 1.0f},  {4, 128, 128, 1000, 500000.0f, 1.0f},
                        {2, 10, 6, 7, 10000.0f, 0.5f},     {5, 64, 32, 123, 500000.0f, 0.25f},
                        {1, 128, 128, 4095, 10000.0f, 1.0f}};
  for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message() << "mode=" << int(mode) << " heads=" << c.n_heads << " dim="
                                        << c.head_dim << " n_rot=" << c.n_rot << " pos=" << c.pos);
      const std::vector<float> x =
          testing::random_floats(size_t(c.n_heads * c.head_dim), uint32_t(c.pos + 3 * c.head_dim));
      const std::vector<float> ff = random_factors(c.n_rot / 2, uint32_t(c.n_rot + c.pos));
      std::vector<float> y = x;
      rope(y.data(), c.n_heads, c.head_dim, c.n_rot, c.pos, c.base, c.scale, mode, ff.data());
      const std::vector<double> ggml =
          ref_rope(x, c.n_heads, c.head_dim, c.n_rot, c.pos, c.base, c.scale, mode, true, ff);
      const std::vector<double> exact =
          ref_rope(x, c.n_heads, c.head_dim, c.n_rot, c.pos, c.base, c.scale, mode, false, ff);
      const std::vector<double> without =
          ref_rope(x, c.n_heads, c.head_dim, c.n_rot, c.pos, c.base, c.scale, mode, false);
      for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], ggml[i], 1e-6) << "element " << i;
      // The division adds one f32 rounding (relative 2^-24) to each angle.
      const double tol = 1e-6 + double(c.pos) * double(c.scale) * double(c.n_rot) * 2e-7;
      double moved = 0;  // how far the factors moved the result: the test must see them
      for (size_t i = 0; i < y.size(); ++i) {
        ASSERT_NEAR(y[i], exact[i], tol) << "element " << i;
        moved = std::max(moved, std::fabs(exact[i] - without[i]));
      }
      EXPECT_GT(moved, 10 * tol);
      for (int64_t h = 0; h < c.n_heads; ++h)
        for (int64_t d = c.n_rot; d < c.head_dim; ++d)
          ASSERT_EQ(y[size_t(h * c.head_dim + d)], x[size_t(h * c.head_dim + d)]);
    }
  }
}

TEST(Rope, NullFactorsAndAllOnesAreBitIdentical) {
  const std::vector<float> ones(32, 1.0f);
  for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
    const std::vector<float> x = testing::random_floats(3 * 80, 5);
    std::vector<float> a = x, b = x;
    rope(a.data(), 3, 80, 64, 1234, 500000.0f, 0.5f, mode);
    rope(b.data(), 3, 80, 64, 1234, 500000.0f, 0.5f, mode, ones.data());
    EXPECT_TRUE(testing::bit_equal(a, b));
  }
}

TEST(Rope, FactorIOfANeoxHeadActsOnDimsIAndIPlusHalf) {
  // One head of 4 dims, only pair 1 set: normal pairs (2, 3), NeoX pairs (1, 3). Pair 1's base angle
  // at pos 10 is 10·base^(-1/2) = 0.1; the factor 4 makes it 0.025, and pair 0's factor is unused.
  const float ff[2] = {1000.0f, 4.0f};
  std::vector<float> normal = {0.0f, 0.0f, 1.0f, 0.0f}, neox = {0.0f, 1.0f, 0.0f, 0.0f};
  rope(normal.data(), 1, 4, 4, 10, 10000.0f, 1.0f, RopeMode::kNormal, ff);
  rope(neox.data(), 1, 4, 4, 10, 10000.0f, 1.0f, RopeMode::kNeox, ff);
  EXPECT_NEAR(normal[2], std::cos(0.025), 1e-6);
  EXPECT_NEAR(normal[3], std::sin(0.025), 1e-6);
  EXPECT_NEAR(neox[1], std::cos(0.025), 1e-6);
  EXPECT_NEAR(neox[3], std::sin(0.025), 1e-6);
}

TEST(Rope, PositionZeroIsIdentityAndPairsKeepTheirNorm) {
  std::vector<float> x = testing::random_floats(64, 1);
  std::vector<float> y = x;
  rope(y.data(), 2, 32, 32, 0, 10000.0f, 1.0f, RopeMode::kNeox);
  EXPECT_TRUE(testing::bit_equal(x, y));
  rope(y.data(), 2, 32, 32, 77, 10000.0f, 1.0f, RopeMode::kNormal);
  for (int i = 0; i < 32; ++i) {
    const double before = std::hypot(double(x[2 * i]), double(x[2 * i + 1]));
    const double after = std::hypot(double(y[2 * i]), double(y[2 * i + 1]));
    EXPECT_NEAR(after, before, 1e-6);
  }
}

TEST(Rope, NormalAndNeoxPairDifferentDims) {
  // One head of 4 dims at angle θ_0 = pos for pair 0 and pos·base^(-1/2) for pair 1.
  std::vector<float> normal = {1.0f, 0.0f, 0.0f, 0.0f}, neox = normal;
  rope(normal.data(), 1, 4, 4, 1, 10000.0f, 1.0f, RopeMode::kNormal);
  rope(neox.data(), 1, 4, 4, 1, 10000.0f, 1.0f, RopeMode::kNeox);
  EXPECT_NEAR(normal[1], std::sin(1.0), 1e-6);  // partner of dim 0 is dim 1
  EXPECT_EQ(normal[2], 0.0f);
  EXPECT_NEAR(neox[2], std::sin(1.0), 1e-6);  // partner of dim 0 is dim 2
  EXPECT_EQ(neox[1], 0.0f);
}

TEST(Rope, RejectsBadParameters) {
  std::vector<float> x(8);
  EXPECT_THROW(rope(x.data(), 1, 8, 3, 0, 10000.0f, 1.0f, RopeMode::kNormal), Error);
  EXPECT_THROW(rope(x.data(), 1, 8, 10, 0, 10000.0f, 1.0f, RopeMode::kNormal), Error);
  EXPECT_THROW(rope(x.data(), 1, 8, 8, -1, 10000.0f, 1.0f, RopeMode::kNormal), Error);
  EXPECT_THROW(rope(x.data(), 1, 8, 8, 0, 0.0f, 1.0f, RopeMode::kNormal), Error);
  for (float bad : {0.0f, -1.0f, NAN, INFINITY}) {
    const float ff[4] = {1.0f, 2.0f, bad, 1.0f};
    try {
      rope(x.data(), 1, 8, 8, 3, 10000.0f, 1.0f, RopeMode::kNormal, ff);
      ADD_FAILURE() << "no error for factor " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("freq_factors[2]"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ork::ops

// rope_ext: defaults bit-identical to rope; YaRN against ggml's formulas in double.
namespace ork::ops {
namespace {

TEST(RopeExt, DefaultsAreBitIdenticalToRope) {
  std::vector<float> a = testing::random_floats(4 * 32, 31, -2, 2), b = a;
  rope(a.data(), 4, 32, 24, 17, 10000.0f, 0.5f, RopeMode::kNeox);
  rope_ext(b.data(), 4, 32, 24, 17, 10000.0f, 0.5f, RopeMode::kNeox, nullptr, RopeExt{});
  EXPECT_TRUE(testing::bit_equal(a, b));
}

TEST(RopeExt, YarnMatchesTheFormula) {
  const int64_t hd = 64, n_rot = 64, orig = 4096;
  const float base = 10000.0f, scale = 0.25f;
  float dims[2];
  rope_yarn_corr_dims(n_rot, orig, base, 32.0f, 1.0f, dims);
  // corr(β) = 64·ln(4096/(2πβ))/(2·ln 10000): β=32 → 10.47 → 10; β=1 → 22.51 → 23.
  EXPECT_EQ(dims[0], 10.0f);
  EXPECT_EQ(dims[1], 23.0f);
  RopeExt e;
  e.ext_factor = 1.0f;
  e.attn_factor = 1.0f;
  e.n_ctx_orig = orig;
  for (int64_t pos : {0, 1, 5000, 20000}) {
    const std::vector<float> x = testing::random_floats(size_t(hd), uint32_t(pos + 1), -2, 2);
    std::vector<float> y = x;
    rope_ext(y.data(), 1, hd, n_rot, pos, base, scale, RopeMode::kNormal, nullptr, e);
    const double m = 1.0 + 0.1 * std::log(1.0 / scale);
    for (int64_t i = 0; i < n_rot / 2; ++i) {
      const double extrap = double(pos) * std::pow(double(base), -2.0 * double(i) / double(n_rot));
      const double ramp = 1.0 - std::min(1.0, std::max(0.0, (double(i) - 10.0) / 13.0));
      const double theta = scale * extrap * (1.0 - ramp) + extrap * ramp;
      const double a = x[size_t(2 * i)], b = x[size_t(2 * i + 1)];
      const double tol = 2e-6 * (1.0 + std::fabs(theta));  // f32 angles grow with the position
      EXPECT_NEAR(y[size_t(2 * i)], m * (a * std::cos(theta) - b * std::sin(theta)), tol) << pos << " " << i;
      EXPECT_NEAR(y[size_t(2 * i + 1)], m * (a * std::sin(theta) + b * std::cos(theta)), tol) << pos << " " << i;
    }
  }
}

TEST(RopeExt, BadParametersAreErrors) {
  std::vector<float> x(8);
  RopeExt e;
  e.ext_factor = 1.0f;  // no n_ctx_orig
  EXPECT_THROW(rope_ext(x.data(), 1, 8, 8, 3, 10000.0f, 0.5f, RopeMode::kNormal, nullptr, e), Error);
  e.n_ctx_orig = 16;
  e.attn_factor = 0.0f;
  EXPECT_THROW(rope_ext(x.data(), 1, 8, 8, 3, 10000.0f, 0.5f, RopeMode::kNormal, nullptr, e), Error);
}

}  // namespace
}  // namespace ork::ops
