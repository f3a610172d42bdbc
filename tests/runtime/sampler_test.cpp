#include "runtime/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"

namespace ork::runtime {
namespace {

SamplerParams plain(uint64_t seed = 1234) {
  SamplerParams p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = seed;
  return p;
}

SamplerParams greedy() {
  SamplerParams p = plain();
  p.temperature = 0.0f;
  return p;
}

std::vector<float> log_probs(const std::vector<double>& p) {
  std::vector<float> l;
  for (double v : p) l.push_back(float(std::log(v)));
  return l;
}

// Histogram of `draws` samples.
std::vector<int> histogram(Sampler& s, const std::vector<float>& logits, int draws) {
  std::vector<int> h(logits.size(), 0);
  for (int i = 0; i < draws; ++i) ++h[size_t(s.sample(logits.data(), int32_t(logits.size())))];
  return h;
}

void expect_error_naming(SamplerParams p, const std::string& name) {
  try {
    Sampler s(p);
    ADD_FAILURE() << "no error for bad " << name;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
}

TEST(Sampler, RejectsBadParams) {
  SamplerParams p = plain();
  p.top_p = 0.0f;
  expect_error_naming(p, "top_p");
  p = plain();
  p.top_p = 1.5f;
  expect_error_naming(p, "top_p");
  p = plain();
  p.top_p = std::numeric_limits<float>::quiet_NaN();
  expect_error_naming(p, "top_p");
  p = plain();
  p.top_k = -1;
  expect_error_naming(p, "top_k");
  p = plain();
  p.temperature = std::numeric_limits<float>::quiet_NaN();
  expect_error_naming(p, "temperature");
  p = plain();
  p.temperature = std::numeric_limits<float>::infinity();
  expect_error_naming(p, "temperature");
  p = plain();
  p.min_p = -0.1f;
  expect_error_naming(p, "min_p");
  p = plain();
  p.min_p = 1.1f;
  expect_error_naming(p, "min_p");
  p = plain();
  p.repeat_penalty = 0.0f;
  expect_error_naming(p, "repeat_penalty");
  p = plain();
  p.repeat_penalty = std::numeric_limits<float>::quiet_NaN();
  expect_error_naming(p, "repeat_penalty");
  p = plain();
  p.repeat_last_n = -1;
  expect_error_naming(p, "repeat_last_n");
  EXPECT_NO_THROW(Sampler{SamplerParams{}});
}

TEST(Sampler, RejectsBadLogits) {
  Sampler s(plain());
  std::vector<float> l = {1.0f, std::numeric_limits<float>::quiet_NaN(), 0.0f};
  EXPECT_THROW(s.sample(l.data(), 3), Error);
  l[1] = std::numeric_limits<float>::infinity();
  EXPECT_THROW(s.sample(l.data(), 3), Error);
  EXPECT_THROW(s.sample(l.data(), 0), Error);
  const float ninf = -std::numeric_limits<float>::infinity();
  std::vector<float> all_masked = {ninf, ninf};
  EXPECT_THROW(s.sample(all_masked.data(), 2), Error);
  EXPECT_THROW(s.accept(-1), Error);
}

TEST(Sampler, GreedyPicksArgmaxLowestIdOnTies) {
  Sampler s(greedy());
  std::vector<float> l = {0.1f, 3.0f, -2.0f, 2.9f};
  EXPECT_EQ(s.sample(l.data(), 4), 1);
  std::vector<float> ties = {-1.0f, 5.0f, 2.0f, 5.0f, 5.0f};
  EXPECT_EQ(s.sample(ties.data(), 5), 1);
  std::vector<float> one = {-7.0f};
  EXPECT_EQ(s.sample(one.data(), 1), 0);
  SamplerParams neg = greedy();
  neg.temperature = -1.0f;
  Sampler s2(neg);
  EXPECT_EQ(s2.sample(l.data(), 4), 1);
}

TEST(Sampler, TopK1EqualsGreedy) {
  SamplerParams p = plain(99);
  p.top_k = 1;
  p.temperature = 1.5f;
  Sampler s(p);
  Sampler g(greedy());
  std::mt19937 gen(7);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<float> l(37);
    for (float& v : l) v = std::round(nd(gen));  // rounding makes ties common
    EXPECT_EQ(s.sample(l.data(), 37), g.sample(l.data(), 37)) << "trial " << trial;
  }
}

TEST(Sampler, SeedsReproduce) {
  const std::vector<float> l = log_probs({0.1, 0.2, 0.3, 0.25, 0.15});
  Sampler a(plain(42)), b(plain(42)), c(plain(43));
  std::vector<int32_t> ta, tb, tc;
  for (int i = 0; i < 300; ++i) {
    ta.push_back(a.sample(l.data(), 5));
    tb.push_back(b.sample(l.data(), 5));
    tc.push_back(c.sample(l.data(), 5));
  }
  EXPECT_EQ(ta, tb);
  EXPECT_NE(ta, tc);
  a.reset();
  for (int i = 0; i < 300; ++i) ASSERT_EQ(a.sample(l.data(), 5), ta[size_t(i)]) << i;
  EXPECT_EQ(a.seed(), 42u);
}

TEST(Sampler, RandomSeedIsDrawnAndReported) {
  SamplerParams p = plain(SamplerParams::kRandomSeed);
  Sampler s(p);
  const std::vector<float> l = log_probs({0.5, 0.5});
  std::vector<int32_t> first;
  for (int i = 0; i < 64; ++i) first.push_back(s.sample(l.data(), 2));
  Sampler replay(plain(s.seed()));
  for (int i = 0; i < 64; ++i) EXPECT_EQ(replay.sample(l.data(), 2), first[size_t(i)]);
}

TEST(Sampler, DistributionMatchesSoftmax) {
  const std::vector<double> p = {0.5, 0.3, 0.15, 0.05};
  Sampler s(plain(2024));
  const int n = 40000;
  const std::vector<int> h = histogram(s, log_probs(p), n);
  for (size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(double(h[i]) / n, p[i], 0.01) << "token " << i;
}

TEST(Sampler, TemperatureSharpens) {
  // T = 0.5 squares the probabilities: {0.5, 0.3, 0.2} -> {0.25, 0.09, 0.04} / 0.38.
  SamplerParams p = plain(5);
  p.temperature = 0.5f;
  Sampler s(p);
  const int n = 40000;
  const std::vector<int> h = histogram(s, log_probs({0.5, 0.3, 0.2}), n);
  EXPECT_NEAR(double(h[0]) / n, 0.25 / 0.38, 0.01);
  EXPECT_NEAR(double(h[1]) / n, 0.09 / 0.38, 0.01);
  EXPECT_NEAR(double(h[2]) / n, 0.04 / 0.38, 0.01);
}

TEST(Sampler, TopKKeepsTheKBest) {
  SamplerParams p = plain(11);
  p.top_k = 2;
  Sampler s(p);
  // Best two are ids 3 and 1 (renormalized 0.4/0.7 and 0.3/0.7).
  const int n = 20000;
  const std::vector<int> h = histogram(s, log_probs({0.2, 0.3, 0.1, 0.4}), n);
  EXPECT_EQ(h[0], 0);
  EXPECT_EQ(h[2], 0);
  EXPECT_NEAR(double(h[3]) / n, 4.0 / 7.0, 0.015);
}

TEST(Sampler, TopPKeepsShortestPrefix) {
  SamplerParams p = plain(12);
  p.top_p = 0.75f;  // 0.5 + 0.3 reaches it: keep ids 0 and 1
  Sampler s(p);
  const int n = 20000;
  const std::vector<int> h = histogram(s, log_probs({0.5, 0.3, 0.15, 0.05}), n);
  EXPECT_EQ(h[2] + h[3], 0);
  EXPECT_NEAR(double(h[0]) / n, 0.5 / 0.8, 0.015);
  p.top_p = 0.4f;  // the first token alone reaches it
  Sampler s1(p);
  const std::vector<int> h1 = histogram(s1, log_probs({0.5, 0.3, 0.15, 0.05}), 500);
  EXPECT_EQ(h1[0], 500);
}

TEST(Sampler, MinPDropsUnlikelyTokens) {
  SamplerParams p = plain(13);
  p.min_p = 0.2f;  // p/p_max: 1, 0.6, 0.3 kept; 0.1 dropped
  Sampler s(p);
  const int n = 20000;
  const std::vector<int> h = histogram(s, log_probs({0.5, 0.3, 0.15, 0.05}), n);
  EXPECT_EQ(h[3], 0);
  EXPECT_GT(h[2], 0);
  EXPECT_NEAR(double(h[0]) / n, 0.5 / 0.95, 0.015);
}

TEST(Sampler, MaskedTokensAreNeverDrawn) {
  Sampler s(plain(14));
  const float ninf = -std::numeric_limits<float>::infinity();
  std::vector<float> l = {ninf, 0.0f, ninf, 0.0f, ninf};
  const std::vector<int> h = histogram(s, l, 2000);
  EXPECT_EQ(h[0] + h[2] + h[4], 0);
  EXPECT_GT(h[1], 800);
  EXPECT_GT(h[3], 800);
}

TEST(Sampler, RepetitionPenalty) {
  SamplerParams p = greedy();
  p.repeat_penalty = 1.5f;
  p.repeat_last_n = 3;
  Sampler s(p);
  std::vector<float> pos = {2.0f, 1.9f, -1.0f, 0.0f, 0.0f, 0.0f};
  EXPECT_EQ(s.sample(pos.data(), 6), 0);
  s.accept(0);
  EXPECT_EQ(s.sample(pos.data(), 6), 1);  // 2.0 / 1.5 < 1.9
  s.accept(0);                            // duplicates are penalized once: 1.333 > 1.2
  std::vector<float> once = {2.0f, 1.2f};
  EXPECT_EQ(s.sample(once.data(), 2), 0);
  std::vector<float> neg = {-1.0f, -1.2f, -5.0f, -5.0f, -5.0f, -5.0f};
  EXPECT_EQ(s.sample(neg.data(), 6), 1);  // -1.0 * 1.5 < -1.2
  s.accept(3);
  s.accept(4);
  s.accept(5);  // 0 has left the window of 3
  EXPECT_EQ(s.sample(pos.data(), 6), 0);
  s.accept(100);  // ids beyond n_vocab are ignored
  EXPECT_EQ(s.sample(pos.data(), 6), 0);
  s.reset();  // history cleared
  s.accept(1);
  EXPECT_EQ(s.sample(pos.data(), 6), 0);
  EXPECT_EQ(pos[0], 2.0f);  // logits are not modified
}

}  // namespace
}  // namespace ork::runtime
