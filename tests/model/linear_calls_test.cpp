// model::linear_calls against the calls model::Forward makes: a backend records every call as the
// group of weight indices it ran (matmul_group, matmul, matmul_glu), then computes on the CPU. A
// dense model's pass makes exactly the listed calls in order; a MoE model's makes them with only the
// unrouted experts' calls left out.
#include <gtest/gtest.h>

#include <vector>

#include "core/thread_pool.h"
#include "gen_model/gen_model.h"
#include "model/forward.h"
#include "model/linear_calls.h"
#include "model/model.h"
#include "temp_dir.h"
#include "test_models.h"

namespace ork::model {
namespace {

class CallRecorder final : public MatmulBackend {
 public:
  explicit CallRecorder(ThreadPool& pool) : cpu_(pool) {}
  void matmul(const Linear& w, const float* x, int64_t m, float* y) override {
    calls.push_back({w.index});
    cpu_.matmul(w, x, m, y);
  }
  void matmul_group(std::span<const Linear* const> ws, const float* x, int64_t m,
                    std::span<float* const> ys) override {
    std::vector<int32_t> c;
    for (const Linear* w : ws) c.push_back(w->index);
    calls.push_back(c);
    cpu_.matmul_group(ws, x, m, ys);
  }
  void matmul_glu(const Linear& down, ops::Glu glu, const float* gate, const float* up, int64_t m, float* act,
                  float* y) override {
    calls.push_back({down.index});
    cpu_.matmul_glu(down, glu, gate, up, m, act, y);
  }
  const char* name() const override { return "recorder"; }
  std::vector<std::vector<int32_t>> calls;

 private:
  CpuMatmul cpu_;
};

std::vector<int32_t> indices(const LinearCall& c) {
  std::vector<int32_t> v;
  for (const Linear* w : c.weights) v.push_back(w->index);
  return v;
}

// The calls of one pass over `tokens` from position 0.
std::vector<std::vector<int32_t>> recorded(const Model& m, const std::vector<int32_t>& tokens) {
  ThreadPool pool(1);
  CallRecorder rec(pool);
  Forward fwd(m.config(), m.weights(), rec, pool);
  KvCache cache(m.config().n_layer, 16, m.config().kv_dim());
  std::vector<float> logits(size_t(m.config().n_vocab));
  fwd.eval(cache, tokens.data(), int64_t(tokens.size()), 0, false, logits.data());
  return rec.calls;
}

TEST(LinearCalls, ADenseModelsPassMakesExactlyTheListedCalls) {
  ork::testing::TempDir dir;
  const std::string path = dir.file("m.gguf");
  gen::write_model(ork::testing::small_q8_model(), path);
  const auto m = Model::load(path);
  const std::vector<LinearCall> want = linear_calls(m->weights());
  const auto got = recorded(*m, {1, 7, 300, 42});
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], indices(want[i])) << "call " << i;
  EXPECT_TRUE(want.back().output);
  EXPECT_EQ(want.back().weights[0], &m->weights().output);
  size_t listed = 0;
  for (const LinearCall& c : want) listed += c.weights.size();
  EXPECT_EQ(listed, m->weights().linears().size()) << "every linear in one call";
}

TEST(LinearCalls, AMoeModelsPassLeavesOutOnlyUnroutedExperts) {
  gen::ModelSpec s;
  s.arch = "qwen2moe";
  s.n_vocab = 300, s.n_embd = 256, s.n_head = 4, s.n_head_kv = 2, s.n_layer = 2;
  s.n_expert = 8, s.n_expert_used = 2, s.n_ff = 512, s.n_ff_exp = 256, s.n_ff_shexp = 256, s.seed = 5;
  s.weight_type = quant::Type::F32;
  ork::testing::TempDir dir;
  const std::string path = dir.file("m.gguf");
  gen::write_model(s, path);
  const auto m = Model::load(path);
  const std::vector<LinearCall> want = linear_calls(m->weights());
  const auto got = recorded(*m, {3, 9});
  size_t g = 0, skipped = 0;
  for (const LinearCall& c : want) {
    if (g < got.size() && got[g] == indices(c)) {
      ++g;
      continue;
    }
    EXPECT_TRUE(c.expert) << "the pass left out a call that is not a routed expert's: " << c.weights[0]->name();
    ++skipped;
  }
  EXPECT_EQ(g, got.size()) << "the pass made a call the list does not have, or out of order";
  EXPECT_GT(skipped, 0u) << "2 tokens with 2 of 8 experts each: some experts did not run";
  size_t listed = 0;
  for (const LinearCall& c : want) listed += c.weights.size();
  EXPECT_EQ(listed, m->weights().linears().size());
}

}  // namespace
}  // namespace ork::model
