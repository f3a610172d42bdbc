// runtime::KldAccumulator against exact double computations of KL(P||Q), NLL and top-1 agreement,
// and a case worked by hand.
#include "runtime/kl_divergence.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/error.h"
#include "runtime/logprob_file.h"

namespace ork::runtime {
namespace {

std::vector<double> log_softmax(const std::vector<float>& l) {
  double mx = l[0];
  for (float v : l) mx = std::max(mx, double(v));
  double s = 0;
  for (float v : l) s += std::exp(double(v) - mx);
  std::vector<double> out;
  for (float v : l) out.push_back(double(v) - mx - std::log(s));
  return out;
}

double exact_kld(const std::vector<float>& p_logits, const std::vector<float>& q_logits) {
  const std::vector<double> lp = log_softmax(p_logits), lq = log_softmax(q_logits);
  double k = 0;
  for (size_t i = 0; i < lp.size(); ++i) k += std::exp(lp[i]) * (lp[i] - lq[i]);
  return k;
}

std::vector<uint16_t> encoded(const std::vector<float>& logits) {
  std::vector<uint16_t> row(size_t(logprob_row_elems(int64_t(logits.size()))));
  encode_log_probs(logits.data(), int64_t(logits.size()), row.data());
  return row;
}

// P = (1/2, 1/2), Q = (3/4, 1/4): KL = ln(2/3)/2 + ln(2)/2; the base row has scale 0 (equal logits),
// so P is stored exactly.
TEST(KlDivergence, TwoTokenCaseByHand) {
  const std::vector<float> p = {0.0f, 0.0f}, q = {float(std::log(3.0)), 0.0f};
  KldAccumulator acc;
  const double k = acc.add(q.data(), encoded(p).data(), 2, 1);
  EXPECT_NEAR(k, 0.5 * std::log(2.0 / 3.0) + 0.5 * std::log(2.0), 1e-6);
  const KldSummary s = acc.summary();
  EXPECT_EQ(s.count, 1);
  EXPECT_NEAR(s.ppl, 4.0, 1e-5);       // Q(1) = 1/4
  EXPECT_NEAR(s.ppl_base, 2.0, 1e-6);  // P(1) = 1/2
  EXPECT_NEAR(s.ppl_diff, 2.0, 1e-5);
  EXPECT_NEAR(s.ln_ppl_ratio, std::log(2.0), 1e-6);
  EXPECT_EQ(s.same_top, 1.0);          // argmax Q = 0, argmax P = 0 (first of equals)
  EXPECT_NEAR(s.dp_rms, 0.25, 1e-6);   // |1/4 - 1/2|
  EXPECT_EQ(s.kld_max, s.kld_min);
}

TEST(KlDivergence, MatchesExactComputationOnRandomDistributions) {
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.0f, 2.0f), noise(0.0f, 0.3f);
  const int64_t n_vocab = 200;
  KldAccumulator acc;
  double sum_k = 0, sum_nll = 0, sum_nll_base = 0;
  int64_t same = 0;
  std::vector<double> ks;
  const int kPositions = 150;
  for (int t = 0; t < kPositions; ++t) {
    std::vector<float> p(n_vocab), q(n_vocab);
    for (int64_t i = 0; i < n_vocab; ++i) {
      p[size_t(i)] = nd(rng);
      q[size_t(i)] = p[size_t(i)] + noise(rng);
    }
    const int32_t target = int32_t(rng() % n_vocab);
    const double want = exact_kld(p, q);
    const double got = acc.add(q.data(), encoded(p).data(), n_vocab, target);
    // Base log-probabilities are stored to within half a step (<= 16/65535/2) each.
    EXPECT_NEAR(got, want, 2e-4) << t;
    ks.push_back(want);
    sum_k += want;
    sum_nll += -log_softmax(q)[size_t(target)];
    sum_nll_base += -log_softmax(p)[size_t(target)];
    same += std::max_element(p.begin(), p.end()) == p.begin() + (std::max_element(q.begin(), q.end()) - q.begin());
  }
  const KldSummary s = acc.summary();
  EXPECT_EQ(s.count, kPositions);
  EXPECT_NEAR(s.kld_mean, sum_k / kPositions, 2e-4);
  std::sort(ks.begin(), ks.end());
  EXPECT_NEAR(s.kld_max, ks.back(), 2e-4);
  EXPECT_NEAR(s.kld_min, ks.front(), 2e-4);
  EXPECT_NEAR(s.kld_median, 0.5 * (ks[kPositions / 2 - 1] + ks[kPositions / 2]), 2e-4);
  EXPECT_GE(s.kld_p99, s.kld_p90);
  EXPECT_GE(s.kld_max, s.kld_p999);
  EXPECT_GT(s.kld_mean_err, 0.0);
  EXPECT_NEAR(s.ppl, std::exp(sum_nll / kPositions), 1e-6 * s.ppl);
  EXPECT_NEAR(s.ppl_base, std::exp(sum_nll_base / kPositions), 2e-4 * s.ppl_base);
  EXPECT_DOUBLE_EQ(s.same_top, double(same) / kPositions);
  EXPECT_LT(s.same_top, 1.0);  // the noise moves some argmaxes
  EXPECT_GT(s.same_top, 0.5);
}

// (A spread that keeps every logit within 16 of the max: a target below llama.cpp's cut is stored as
// the row's minimum, so its base NLL saturates near 16 nats; see BaseTokensBelowTheCut.)
TEST(KlDivergence, IdenticalDistributionsGiveZeroUpToTheStoredPrecision) {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  KldAccumulator acc;
  for (int t = 0; t < 50; ++t) {
    std::vector<float> p(97);
    for (float& v : p) v = nd(rng);
    acc.add(p.data(), encoded(p).data(), 97, int32_t(t % 97));
  }
  const KldSummary s = acc.summary();
  EXPECT_LT(std::fabs(s.kld_mean), 1e-4);
  EXPECT_LT(std::fabs(s.kld_max), 2e-4);
  EXPECT_EQ(s.same_top, 1.0);
  EXPECT_EQ(s.same_top_err, 0.0);
  EXPECT_NEAR(s.ppl, s.ppl_base, 2e-4 * s.ppl);
  EXPECT_LT(s.dp_max, 1e-4);
}

// llama.cpp leaves out base tokens with log P <= -16; the KLD does too.
TEST(KlDivergence, BaseTokensBelowTheCutAreLeftOut) {
  const std::vector<float> p = {0.0f, -40.0f}, q = {-30.0f, 0.0f};
  KldAccumulator acc;
  const double k = acc.add(q.data(), encoded(p).data(), 2, 0);
  EXPECT_NEAR(k, 30.0, 1e-3);  // P(0) ≈ 1: 1 * (0 - log Q(0)) = 30; the P(1) term is dropped
  EXPECT_EQ(acc.summary().same_top, 0.0);
  // A target below the cut: its base NLL is the row's minimum, 16 nats (+ log-sum-exp), not 40.
  acc.add(q.data(), encoded(p).data(), 2, 1);
  EXPECT_NEAR(std::log(acc.summary().ppl_base) * 2, 0.0 + 16.0, 1e-3);
}

TEST(KlDivergence, BadTargetAndEmptySummaryAreErrors) {
  const std::vector<float> p = {0.0f, 1.0f};
  KldAccumulator acc;
  EXPECT_THROW(acc.summary(), Error);
  EXPECT_THROW(acc.add(p.data(), encoded(p).data(), 2, 2), Error);
  EXPECT_THROW(acc.add(p.data(), encoded(p).data(), 2, -1), Error);
  EXPECT_EQ(acc.count(), 0);
}

}  // namespace
}  // namespace ork::runtime
