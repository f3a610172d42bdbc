// model::ExpertPredictor: its scoring rules, and its decode hit rate on generated models with skewed
// and with random routing (beside the always-miss baseline of no prediction: 0 hits); MoeStats.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "gen_model/gen_model.h"
#include "model/expert_predictor.h"
#include "model/forward.h"
#include "model/model.h"
#include "temp_dir.h"

namespace ork::model {
namespace {

TEST(ExpertPredictor, FrequencyThenCoOccurrenceTiesToTheLowerIndex) {
  ExpertPredictor p(2, 4, 2);
  EXPECT_EQ(p.predict(0, {}), (std::vector<int32_t>{0, 1}));  // nothing seen: lowest indices
  const std::vector<int32_t> a = {3, 2};
  p.observe(0, {}, a, nullptr);
  p.observe(0, {}, std::vector<int32_t>{3, 1}, nullptr);
  EXPECT_EQ(p.predict(0, {}), (std::vector<int32_t>{3, 1}));  // 3 twice; 1 and 2 once: lower first
  // Layer 1: expert 0 follows 3 at layer 0, expert 2 is more frequent overall.
  const std::vector<int32_t> prev3 = {3}, prev1 = {1};
  p.observe(1, prev3, std::vector<int32_t>{0}, nullptr);
  p.observe(1, prev1, std::vector<int32_t>{2}, nullptr);
  p.observe(1, prev1, std::vector<int32_t>{2}, nullptr);
  const std::vector<int32_t> g = p.predict(1, prev3);  // 0: 1 + 1, 2: 2 + 0 → tie, lower first
  EXPECT_EQ(g[0], 0);
  EXPECT_EQ(g[1], 2);
  p.observe(1, prev3, std::vector<int32_t>{0, 3}, &g);
  EXPECT_EQ(p.stats().predicted, 2u);
  EXPECT_EQ(p.stats().needed, 2u);
  EXPECT_EQ(p.stats().hits, 1u);
  EXPECT_EQ(p.stats().wasted(), 1u);
  EXPECT_DOUBLE_EQ(p.stats().hit_rate(), 0.5);
  EXPECT_THROW(ExpertPredictor(1, 4, 5), Error);
  EXPECT_THROW(p.predict(2, {}), Error);
}

// Greedy decode of 40 tokens after an 8-token prompt; the predictor's decode stats and MoeStats.
MoeStats decode_stats(const std::string& path) {
  const auto m = Model::load(path);
  const Config& c = m->config();
  ThreadPool pool(2);
  CpuMatmul cpu(pool);
  Forward fwd(c, m->weights(), cpu, pool);
  KvCache cache(c.n_layer, 64, c.kv_dim());
  const std::vector<int32_t> prompt = {1, 17, 42, 99, 5, 250, 31, 64};
  std::vector<float> logits(size_t(c.n_vocab));
  fwd.eval(cache, prompt.data(), int64_t(prompt.size()), 0, false, logits.data());
  for (int64_t pos = int64_t(prompt.size()); pos < int64_t(prompt.size()) + 40; ++pos) {
    const int32_t next = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
    fwd.eval(cache, &next, 1, pos, false, logits.data());
  }
  const MoeStats s = *fwd.moe_stats();
  EXPECT_EQ(s.layer_tokens, uint64_t(48 * c.n_layer));
  EXPECT_EQ(s.expert_rows, s.layer_tokens * uint64_t(c.n_expert_used));
  EXPECT_EQ(s.prediction.needed, uint64_t(40 * c.n_layer * c.n_expert_used));
  // Every decode step runs exactly k experts per layer, each of known size.
  const uint64_t expert_bytes = m->weights().layers[0].exp_gate[0].w->n_bytes * 3;
  EXPECT_GE(s.expert_runs, uint64_t(40 * c.n_layer * c.n_expert_used));
  EXPECT_EQ(s.expert_bytes, s.expert_runs * expert_bytes);
  return s;
}

TEST(ExpertPredictor, DecodeHitRateOnSkewedRoutingBesideRandom) {
  testing::TempDir dir;
  gen::ModelSpec s = gen::preset("tiny-mixtral");
  s.n_layer = 4;
  s.routing_skew = 4.0f;
  gen::write_model(s, dir.file("skewed.gguf"));
  s.routing_skew = 0.0f;
  gen::write_model(s, dir.file("random.gguf"));
  const MoeStats skewed = decode_stats(dir.file("skewed.gguf"));
  const MoeStats random = decode_stats(dir.file("random.gguf"));
  std::printf("decode prediction hit rate (2 slots of 8 experts): skewed %.3f, random %.3f, always-miss 0\n",
              skewed.prediction.hit_rate(), random.prediction.hit_rate());
  EXPECT_GE(skewed.prediction.hit_rate(), 0.6);
  EXPECT_GT(skewed.prediction.hit_rate(), random.prediction.hit_rate());
  EXPECT_EQ(skewed.prediction.wasted(), skewed.prediction.predicted - skewed.prediction.hits);
}

}  // namespace
}  // namespace ork::model
