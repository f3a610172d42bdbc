// Mixture-of-experts models (qwen2moe, qwen3moe, Mixtral-style llama): the engine's forward pass
// against the float64 reference (reference_forward.cpp, reference_moe.cpp) on generated models of
// every weight type the dense path is tested with, batched prefill then single-token decode; and what
// the MoE FFN runs (only the selected experts, one batched product per expert).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <string>

#include "core/error.h"
#include "core/thread_pool.h"
#include "gen_model/gen_model.h"
#include "gguf/file.h"
#include "model/forward.h"
#include "model/model.h"
#include "reference_forward.h"
#include "reference_moe.h"
#include "temp_dir.h"

namespace ork::model {
namespace {

using ork::testing::normalized_error;
using ork::testing::reference_logits;
using ork::testing::TempDir;

int64_t argmax(const float* x, int64_t n) { return std::max_element(x, x + n) - x; }
int64_t argmax(const std::vector<double>& x) { return std::max_element(x.begin(), x.end()) - x.begin(); }

gen::ModelSpec moe_spec(const std::string& arch, quant::Type type) {
  gen::ModelSpec s;
  s.arch = arch;
  s.n_vocab = 300;
  s.n_embd = 256;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.n_layer = 2;
  s.n_expert = 8;
  s.n_expert_used = 2;
  s.seed = 5;
  s.rms_eps = 1e-6f;
  s.weight_type = type;
  if (arch == "llama") {
    s.n_ff = 256;  // Mixtral: the experts are feed_forward_length wide
  } else {
    s.n_ff = 512;
    s.n_ff_exp = 256;
    s.rope_freq_base = 1000000.0f;
  }
  if (arch == "qwen2moe") s.n_ff_shexp = 256;
  if (arch == "qwen3moe") s.head_dim = 128;  // q_dim 512 ≠ n_embd, whole q4_K blocks
  return s;
}

struct MoeCase {
  std::string name;
  gen::ModelSpec spec;
};
void PrintTo(const MoeCase& c, std::ostream* os) { *os << c.name; }

std::vector<MoeCase> cases() {
  std::vector<MoeCase> out;
  for (const char* arch : {"llama", "qwen2moe", "qwen3moe"}) {
    for (quant::Type t : {quant::Type::F32, quant::Type::F16, quant::Type::Q8_0, quant::Type::Q4_K}) {
      const std::string a = std::string(arch) == "llama" ? "mixtral" : arch;
      out.push_back({a + "_" + std::string(quant::traits(t).name), moe_spec(arch, t)});
    }
  }
  gen::ModelSpec d = moe_spec("qwen3moe", quant::Type::Q8_0);
  d.n_ff_exp = 0;  // no expert_feed_forward_length: llama.cpp's n_ff / n_expert_used = 256
  out.push_back({"qwen3moe_default_expert_width", d});
  gen::ModelSpec k = moe_spec("qwen2moe", quant::Type::F32);
  k.n_expert_used = 3;  // odd k; n_ff_shexp unset: n_ff wide
  k.n_ff_shexp = 0;
  out.push_back({"qwen2moe_top3_default_shared_width", k});
  gen::ModelSpec sk = moe_spec("llama", quant::Type::Q8_0);
  sk.routing_skew = 4.0f;
  out.push_back({"mixtral_skewed_routing", sk});
  return out;
}

class MoeVsReference : public ::testing::TestWithParam<MoeCase> {};

TEST_P(MoeVsReference, LogitsMatchForPrefillAndDecode) {
  const MoeCase& c = GetParam();
  TempDir dir;
  const std::string path = dir.file("m.gguf");
  gen::write_model(c.spec, path);
  const std::vector<int32_t> tokens = {1, 17, 42, 299, 5, 0, 123, 77, 8, 250, 31, 64};
  const auto ref = reference_logits(path, tokens, 32);

  const auto m = Model::load(path);
  const Config& cfg = m->config();
  ASSERT_TRUE(cfg.is_moe());
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    CpuMatmul backend(pool);
    Forward fwd(cfg, m->weights(), backend, pool);
    KvCache cache(cfg.n_layer, 32, cfg.kv_dim());
    const int64_t n_pre = 7;
    std::vector<float> logits(size_t(n_pre * cfg.n_vocab));
    fwd.eval(cache, tokens.data(), n_pre, 0, true, logits.data());
    for (int64_t t = 0; t < n_pre; ++t) {
      EXPECT_LT(normalized_error(logits.data() + t * cfg.n_vocab, ref[size_t(t)]), 1e-4) << "prefill position " << t;
      EXPECT_EQ(argmax(logits.data() + t * cfg.n_vocab, cfg.n_vocab), argmax(ref[size_t(t)]));
    }
    for (size_t t = size_t(n_pre); t < tokens.size(); ++t) {
      fwd.eval(cache, &tokens[t], 1, int64_t(t), false, logits.data());
      EXPECT_LT(normalized_error(logits.data(), ref[t]), 1e-4) << "decode position " << t;
      EXPECT_EQ(argmax(logits.data(), cfg.n_vocab), argmax(ref[t]));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, MoeVsReference, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<MoeCase>& info) { return info.param.name; });

// Records the linears each matmul call runs and its row count, then computes on the CPU.
class RecordingBackend final : public MatmulBackend {
 public:
  explicit RecordingBackend(ThreadPool& pool) : cpu_(pool) {}
  void matmul(const Linear& w, const float* x, int64_t m, float* y) override {
    calls.emplace_back(std::string(w.name()), m);
    cpu_.matmul(w, x, m, y);
  }
  const char* name() const override { return "recording"; }
  std::vector<std::pair<std::string, int64_t>> calls;

 private:
  CpuMatmul cpu_;
};

TEST(MoeFfn, RunsOnlyTheSelectedExpertsOneProductPerExpert) {
  TempDir dir;
  const std::string path = dir.file("m.gguf");
  gen::write_model(moe_spec("qwen3moe", quant::Type::F32), path);
  const auto m = Model::load(path);
  const Config& cfg = m->config();
  ThreadPool pool(1);
  RecordingBackend rec(pool);
  Forward fwd(cfg, m->weights(), rec, pool);
  KvCache cache(cfg.n_layer, 32, cfg.kv_dim());
  const std::vector<int32_t> tokens = {3, 9, 27, 81, 243, 7};
  std::vector<float> logits(size_t(cfg.n_vocab));
  fwd.eval(cache, tokens.data(), int64_t(tokens.size()), 0, false, logits.data());

  // Each expert product covers the tokens routed to it, so over a layer the rows add up to
  // n_tokens · k, and no expert runs twice.
  std::map<std::string, int64_t> rows;
  for (const auto& [name, mrows] : rec.calls) {
    if (name.find("_exps") == std::string::npos) continue;
    EXPECT_EQ(rows.count(name), 0u) << name << " ran twice in one pass";
    rows[name] = mrows;
  }
  for (int64_t il = 0; il < cfg.n_layer; ++il) {
    int64_t total = 0, experts = 0;
    for (int64_t e = 0; e < cfg.n_expert; ++e) {
      const std::string p = "blk." + std::to_string(il) + ".ffn_";
      const std::string g = p + "gate_exps.weight:e" + std::to_string(e);
      if (rows.count(g) == 0) {
        EXPECT_EQ(rows.count(p + "down_exps.weight:e" + std::to_string(e)), 0u);
        continue;
      }
      ++experts;
      total += rows[g];
      EXPECT_EQ(rows[p + "up_exps.weight:e" + std::to_string(e)], rows[g]);
      EXPECT_EQ(rows[p + "down_exps.weight:e" + std::to_string(e)], rows[g]);
    }
    EXPECT_EQ(total, int64_t(tokens.size()) * cfg.n_expert_used) << "layer " << il;
    EXPECT_GE(experts, cfg.n_expert_used);
  }
  // A decode step runs exactly k experts per layer.
  rec.calls.clear();
  fwd.eval(cache, &tokens[0], 1, int64_t(tokens.size()), false, logits.data());
  int64_t gates = 0;
  for (const auto& [name, mrows] : rec.calls) gates += name.find("gate_exps") != std::string::npos;
  EXPECT_EQ(gates, cfg.n_layer * cfg.n_expert_used);
}

TEST(MoeConfig, KeysDefaultsAndLinears) {
  TempDir dir;
  {
    const std::string path = dir.file("q2.gguf");
    gen::write_model(gen::preset("tiny-qwen2moe"), path);
    const auto m = Model::load(path);
    const Config& c = m->config();
    EXPECT_EQ(c.arch, Arch::kQwen2Moe);
    EXPECT_EQ(c.n_expert, 8);
    EXPECT_EQ(c.n_expert_used, 2);
    EXPECT_EQ(c.n_ff_exp, 64);
    EXPECT_EQ(c.n_ff_shexp, 128);
    EXPECT_FALSE(c.moe_norm_weights);
    EXPECT_TRUE(c.qkv_bias);
    const Weights& w = m->weights();
    // q, k, v, o, the shared expert's three, 8 experts × 3; then output.
    EXPECT_EQ(w.linears().size(), size_t(c.n_layer * (7 + 3 * 8) + 1));
    const LayerWeights& l = w.layers[1];
    EXPECT_EQ(l.exp_up[3].name(), "blk.1.ffn_up_exps.weight:e3");
    EXPECT_EQ(l.exp_up[3].w->data, l.exp_up[2].w->data + l.exp_up[2].w->n_bytes);
    EXPECT_EQ(l.exp_down[0].k, 64);
    EXPECT_EQ(l.exp_down[0].n, c.n_embd);
    EXPECT_EQ(l.sh_gate.n, 128);
    // Groups: a layer's attention and shared expert one, each expert one of its own.
    EXPECT_EQ(l.wq.group, l.sh_down.group);
    EXPECT_EQ(l.exp_gate[0].group, l.sh_down.group + 1);
    EXPECT_EQ(l.exp_down[0].group, l.exp_gate[0].group);
    EXPECT_EQ(l.exp_gate[7].group, l.sh_down.group + 8);
    EXPECT_EQ(w.output.group, l.exp_gate[7].group + 1);
  }
  {
    const std::string path = dir.file("mx.gguf");
    gen::write_model(gen::preset("tiny-mixtral"), path);
    const Config c = Model::load(path)->config();
    EXPECT_EQ(c.arch, Arch::kLlama);
    EXPECT_EQ(c.n_ff_exp, c.n_ff);
    EXPECT_TRUE(c.moe_norm_weights);
    EXPECT_EQ(c.n_ff_shexp, 0);
  }
  {
    gen::ModelSpec s = gen::preset("tiny-qwen3moe");
    s.n_ff_exp = 0;
    const std::string path = dir.file("q3.gguf");
    gen::write_model(s, path);
    const Config c = Model::load(path)->config();
    EXPECT_EQ(c.n_ff_exp, c.n_ff / 2);  // llama.cpp's default: n_ff / expert_used_count
    EXPECT_TRUE(c.qk_norm && c.moe_norm_weights);
  }
}

// The number of experts used changes the logits (so a match above cannot come from ignoring it);
// the normalization rule is tested in tests/ops/moe_route_test.cpp and by the qwen2moe cases.
TEST(MoeFeatures, TopKChangesTheLogits) {
  TempDir dir;
  const gen::ModelSpec s = moe_spec("qwen3moe", quant::Type::F32);
  const std::string path = dir.file("q3.gguf");
  gen::write_model(s, path);
  const auto m = Model::load(path);
  ThreadPool pool(1);
  CpuMatmul cpu(pool);
  Forward fwd(m->config(), m->weights(), cpu, pool);
  KvCache cache(m->config().n_layer, 16, m->config().kv_dim());
  const std::vector<int32_t> tokens = {4, 8, 15, 16, 23, 42};
  std::vector<float> logits(size_t(m->config().n_vocab));
  fwd.eval(cache, tokens.data(), int64_t(tokens.size()), 0, false, logits.data());
  EXPECT_LT(normalized_error(logits.data(), reference_logits(path, tokens).back()), 1e-4);
  gen::ModelSpec k3 = s;
  k3.n_expert_used = 3;
  const std::string p3 = dir.file("k3.gguf");
  gen::write_model(k3, p3);
  EXPECT_GT(normalized_error(logits.data(), reference_logits(p3, tokens).back()), 1e-2) << "top-3 vs top-2";
}

// Skewed routing (gen ModelSpec::routing_skew) concentrates each layer's choices on few experts;
// random routing spreads them.
TEST(MoeRouting, SkewedRoutingPrefersAFewExperts) {
  TempDir dir;
  auto top2_share = [&](float skew) {
    gen::ModelSpec s = moe_spec("llama", quant::Type::F32);
    s.routing_skew = skew;
    const std::string path = dir.file("s" + std::to_string(int(skew)) + ".gguf");
    gen::write_model(s, path);
    const auto m = Model::load(path);
    const Config& cfg = m->config();
    ThreadPool pool(1);
    RecordingBackend rec(pool);
    Forward fwd(cfg, m->weights(), rec, pool);
    KvCache cache(cfg.n_layer, 64, cfg.kv_dim());
    std::vector<int32_t> tokens;
    for (int i = 0; i < 48; ++i) tokens.push_back(int32_t((i * 37 + 11) % 300));
    std::vector<float> logits(size_t(cfg.n_vocab));
    fwd.eval(cache, tokens.data(), int64_t(tokens.size()), 0, false, logits.data());
    double share = 0;
    for (int64_t il = 0; il < cfg.n_layer; ++il) {
      std::vector<int64_t> per;
      for (const auto& [name, mrows] : rec.calls) {
        if (name.starts_with("blk." + std::to_string(il) + ".ffn_gate_exps")) per.push_back(mrows);
      }
      std::sort(per.rbegin(), per.rend());
      share += double(per[0] + (per.size() > 1 ? per[1] : 0)) / double(tokens.size() * cfg.n_expert_used);
    }
    return share / double(cfg.n_layer);
  };
  const double random = top2_share(0.0f), skewed = top2_share(4.0f);
  EXPECT_LT(random, 0.6);
  EXPECT_GT(skewed, 0.8);
}

TEST(MoeConfig, BadMetadataIsOneClearError) {
  TempDir dir;
  gen::ModelSpec s = gen::preset("tiny-qwen3moe");
  s.n_expert = 0;
  EXPECT_THROW(gen::validate(s), Error);  // qwen3moe without experts
  s = gen::preset("tiny-qwen3moe");
  s.n_expert_used = 9;
  EXPECT_THROW(gen::validate(s), Error);
  s = gen::preset("tiny-qwen2");
  s.n_expert = 4;
  s.n_expert_used = 2;
  EXPECT_THROW(gen::validate(s), Error);  // experts on a dense arch
  s = gen::preset("tiny-mixtral");
  s.weight_type = quant::Type::Q4_K;      // rows of 64 (n_embd) are not whole q4_K blocks
  EXPECT_THROW(gen::validate(s), Error);
}

}  // namespace
}  // namespace ork::model
