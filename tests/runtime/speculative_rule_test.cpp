// The speculative sampling rule preserves the target's distribution: chi-square tests of the emitted
// tokens against p, on synthetic distributions (where two wrong rules fail the same test) and end to
// end (a draft model proposing for a target, many seeds, the exact joint distribution of the first
// three tokens computed by enumeration).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "runtime/context.h"
#include "runtime/draft_model.h"
#include "runtime/engine.h"
#include "runtime/speculative.h"
#include "runtime/speculative_rule.h"

namespace ork::runtime {
namespace {

// The chi-square value a statistic with `df` degrees of freedom exceeds with probability ≈ 1e-6
// (Wilson–Hilferty: df·(1 − 2/(9df) + z·sqrt(2/(9df)))³, z = 4.753).
double chi2_critical(int df) {
  const double z = 4.753, a = 2.0 / (9.0 * df);
  return df * std::pow(1.0 - a + z * std::sqrt(a), 3.0);
}

// Pearson's statistic of counts against expected probabilities; cells expected below 5 are pooled.
// Returns {statistic, degrees of freedom}.
std::pair<double, int> chi2(const std::map<std::vector<int32_t>, double>& expected_p,
                            const std::map<std::vector<int32_t>, int64_t>& counts, int64_t n) {
  double stat = 0.0, pooled_e = 0.0, pooled_o = 0.0;
  int cells = 0;
  for (const auto& [key, p] : expected_p) {
    const double e = p * double(n);
    const auto it = counts.find(key);
    const double o = it == counts.end() ? 0.0 : double(it->second);
    if (e < 5.0) {
      pooled_e += e, pooled_o += o;
      continue;
    }
    stat += (o - e) * (o - e) / e;
    ++cells;
  }
  int64_t outside = 0;  // counts of outcomes with probability 0: any is a failure
  for (const auto& [key, c] : counts)
    if (expected_p.find(key) == expected_p.end()) outside += c;
  if (pooled_e > 0) {
    stat += (pooled_o - pooled_e) * (pooled_o - pooled_e) / std::max(pooled_e, 1.0);
    ++cells;
  }
  if (outside > 0) stat = INFINITY;
  return {stat, cells - 1};
}

std::vector<TokenProb> normalized(std::vector<TokenProb> d) {
  double s = 0;
  for (const TokenProb& t : d) s += t.p;
  for (TokenProb& t : d) t.p /= s;
  std::sort(d.begin(), d.end(), [](const TokenProb& a, const TokenProb& b) { return a.p > b.p; });
  return d;
}

int32_t draw(const std::vector<TokenProb>& d, double u) {
  double cum = 0;
  for (const TokenProb& t : d) {
    cum += t.p;
    if (cum > u) return t.id;
  }
  return d.back().id;
}

SamplerParams seeded(uint64_t seed) {
  SamplerParams p;
  p.seed = seed;
  return p;
}

enum class Rule { kCorrect, kResampleFromP, kAcceptWithP };

// Emitted-token counts over n trials of: x ~ q, then the rule.
std::map<std::vector<int32_t>, int64_t> run_rule(const std::vector<TokenProb>& p, const std::vector<TokenProb>& q,
                                                 Rule rule, int64_t n, uint64_t seed) {
  Sampler rng(seeded(seed));
  std::mt19937_64 draft_rng(seed ^ 0xabcdef);
  std::vector<double> scratch;
  std::map<std::vector<int32_t>, int64_t> counts;
  const auto prob = [](const std::vector<TokenProb>& d, int32_t id) {
    for (const TokenProb& t : d)
      if (t.id == id) return t.p;
    return 0.0;
  };
  for (int64_t i = 0; i < n; ++i) {
    const int32_t x = draw(q, double(draft_rng() >> 11) * 0x1.0p-53);
    int32_t out = -1;
    switch (rule) {
      case Rule::kCorrect: out = verify_token(p, q, x, rng, scratch).token; break;
      case Rule::kResampleFromP:  // the residual replaced by p itself
        out = rng.uniform() < std::min(1.0, prob(p, x) / prob(q, x)) ? x : draw(p, rng.uniform());
        break;
      case Rule::kAcceptWithP:  // accept with p(x) instead of p(x)/q(x), residual as it should be
        if (rng.uniform() < prob(p, x)) {
          out = x;
        } else {
          out = verify_token(p, q, x, rng, scratch).token;  // then the proper rule decides
        }
        break;
    }
    ++counts[{out}];
  }
  return counts;
}

std::map<std::vector<int32_t>, double> as_map(const std::vector<TokenProb>& p) {
  std::map<std::vector<int32_t>, double> m;
  for (const TokenProb& t : p) m[{t.id}] += t.p;
  return m;
}

TEST(SpeculativeRule, EmittedTokensFollowTheTargetAndWrongRulesFailTheSameTest) {
  const auto p = normalized({{0, 0.40}, {1, 0.25}, {2, 0.15}, {3, 0.10}, {4, 0.07}, {5, 0.03}});
  // q: a different order, and mass on a token p does not have (id 6).
  const auto q = normalized({{0, 0.10}, {1, 0.10}, {2, 0.40}, {3, 0.05}, {4, 0.25}, {6, 0.10}});
  const int64_t n = 200000;
  const auto [ok, df] = chi2(as_map(p), run_rule(p, q, Rule::kCorrect, n, 1), n);
  EXPECT_LT(ok, chi2_critical(df)) << "df " << df;
  for (Rule wrong : {Rule::kResampleFromP, Rule::kAcceptWithP}) {
    const auto [bad, df2] = chi2(as_map(p), run_rule(p, q, wrong, n, 2), n);
    EXPECT_GT(bad, chi2_critical(df2)) << "a wrong rule passed: rule " << int(wrong);
  }
}

TEST(SpeculativeRule, DeterministicAndIdenticalDrafts) {
  const auto p = normalized({{3, 0.5}, {1, 0.3}, {8, 0.2}});
  const int64_t n = 100000;
  // q empty: the drafted token has probability 1 under the draft (prompt lookup).
  Sampler rng(seeded(3));
  std::vector<double> scratch;
  std::map<std::vector<int32_t>, int64_t> counts;
  for (int64_t i = 0; i < n; ++i) ++counts[{verify_token(p, {}, 1, rng, scratch).token}];
  const auto [stat, df] = chi2(as_map(p), counts, n);
  EXPECT_LT(stat, chi2_critical(df));
  // q == p: always accepted, no random number drawn.
  Sampler a(seeded(4)), b(seeded(4));
  for (int32_t id : {3, 1, 8}) {
    const Verdict v = verify_token(p, p, id, a, scratch);
    EXPECT_TRUE(v.accepted);
    EXPECT_EQ(v.token, id);
  }
  EXPECT_EQ(a.uniform(), b.uniform());
  // Greedy: one-hot p; a wrong draft gives p's token, no random number drawn.
  const std::vector<TokenProb> hot = {{5, 1.0}};
  const Verdict w = verify_token(hot, {}, 2, a, scratch);
  EXPECT_FALSE(w.accepted);
  EXPECT_EQ(w.token, 5);
  EXPECT_EQ(a.uniform(), b.uniform());
  // A drafted token its own draft gives probability 0 is an error.
  EXPECT_THROW(verify_token(p, hot, 2, a, scratch), Error);
}

// End to end: a draft model for a target, sampling at temperature 1 over the top 2 tokens; the
// joint distribution of the first three generated tokens, from 8000 seeds, against the exact one.
TEST(SpeculativeRule, SamplingWithADraftModelPreservesTheTargetDistribution) {
  testing::TempDir dir;
  gen::ModelSpec s;
  s.n_vocab = 300, s.n_embd = 32, s.n_layer = 1, s.n_head = 2, s.n_head_kv = 1, s.n_ff = 64;
  gen::write_model(s, dir.file("target.gguf"));
  s.noise_std = 0.3f;  // the target perturbed: many rejections, so the residual matters
  gen::write_model(s, dir.file("draft.gguf"));
  EngineOptions o;
  o.threads = 1;
  o.model_path = dir.file("target.gguf");
  Engine target(o);
  o.model_path = dir.file("draft.gguf");
  Engine draft(o);

  SamplerParams sp;
  sp.temperature = 1.0f, sp.top_k = 2, sp.top_p = 1.0f, sp.min_p = 0.0f;
  const std::vector<int32_t> prompt = {1, 17, 42, 99};

  // Exact: P(t1, t2, t3) = Π p(t_i | prompt, t_<i), each p the sampler's distribution.
  std::map<std::vector<int32_t>, double> exact;
  {
    Sampler sampler(sp);
    std::vector<TokenProb> d1, d2, d3;
    Context c(target, 16);
    sampler.distribution(c.eval(prompt), int32_t(c.n_vocab()), d1);
    for (const TokenProb& a : d1) {
      c.truncate(int64_t(prompt.size()));
      sampler.distribution(c.eval({a.id}), int32_t(c.n_vocab()), d2);
      for (const TokenProb& b : d2) {
        c.truncate(int64_t(prompt.size()) + 1);
        sampler.distribution(c.eval({b.id}), int32_t(c.n_vocab()), d3);
        for (const TokenProb& t : d3) exact[{a.id, b.id, t.id}] += a.p * b.p * t.p;
      }
    }
  }
  const int64_t n = 8000;
  std::map<std::vector<int32_t>, int64_t> counts;
  int64_t drafted = 0, accepted = 0;
  for (int64_t seed = 0; seed < n; ++seed) {
    sp.seed = uint64_t(seed) + 1000;
    DraftModel dm(draft, 16, sp, 0.0f);
    Context c(target, 16);
    Sampler sampler(sp);
    SpeculativeOptions so;
    so.draft_max = 2;
    const SpeculativeResult r =
        generate_speculative(c, dm, sampler, prompt, 3, so, [](int32_t) { return true; });
    ASSERT_EQ(r.gen.tokens.size(), 3u);
    ++counts[r.gen.tokens];
    drafted += r.stats.drafted;
    accepted += r.stats.accepted;
  }
  // Both outcomes of the rule occur often, or the test would not test the residual.
  EXPECT_GT(drafted - accepted, n / 4);
  EXPECT_GT(accepted, n / 10) << drafted;
  const auto [stat, df] = chi2(exact, counts, n);
  EXPECT_LT(stat, chi2_critical(df)) << "df " << df << ", acceptance " << double(accepted) / double(drafted);
}

}  // namespace
}  // namespace ork::runtime
