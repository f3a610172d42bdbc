// The engine's forward pass against the float64 reference (reference_forward.cpp) on generated
// models of each architecture and weight type: batched prefill and single-token decode.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/thread_pool.h"
#include "gen_model/gen_model.h"
#include "model/forward.h"
#include "model/model.h"
#include "reference_forward.h"
#include "temp_dir.h"

namespace ork::model {
namespace {

using ork::testing::reference_logits;
using ork::testing::TempDir;

using ork::testing::normalized_error;

int64_t argmax(const float* x, int64_t n) { return std::max_element(x, x + n) - x; }
int64_t argmax(const std::vector<double>& x) {
  return std::max_element(x.begin(), x.end()) - x.begin();
}

struct Case {
  const char* arch;
  quant::Type type;
  bool tied;
  int n_head_kv;
  const char* rope_freqs = "";  // gen::ModelSpec::rope_freqs: "", "llama3" or "random"
};

class ForwardVsReference : public ::testing::TestWithParam<Case> {};

TEST_P(ForwardVsReference, LogitsMatchForPrefillAndDecode) {
  const Case c = GetParam();
  TempDir dir;
  gen::ModelSpec spec;
  spec.arch = c.arch;
  spec.weight_type = c.type;
  spec.tied_output = c.tied;
  spec.n_head_kv = c.n_head_kv;
  spec.n_vocab = 300;
  spec.n_embd = 256;  // whole K-quant blocks
  spec.n_ff = 512;
  spec.n_head = 4;
  spec.n_layer = 2;
  spec.seed = 7;
  if (std::string(c.arch) == "qwen3") spec.head_dim = 128;  // q_dim 512 ≠ n_embd, whole K-quant blocks
  spec.rope_freq_base = std::string(c.arch) == "qwen2" ? 1000000.0f : 10000.0f;
  spec.rope_freqs = c.rope_freqs;
  if (spec.rope_freqs == "llama3") {
    // Llama 3.1's scaling, with an original context short enough that the ramp and the slowed pairs
    // fall among the 32 pairs of a 64-wide head: 1 for the first pairs, then the ramp, then 8.
    spec.rope_freq_base = 500000.0f;
    spec.llama3_original_ctx = 64;
  }
  const std::string path = dir.file("m.gguf");
  gen::write_model(spec, path);

  const std::vector<int32_t> tokens = {1, 17, 42, 299, 5, 0, 123, 77, 8, 250};
  const auto ref = reference_logits(path, tokens);

  const auto m = Model::load(path);
  const Config& cfg = m->config();
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    CpuMatmul backend(pool);
    Forward fwd(cfg, m->weights(), backend, pool);
    KvCache cache(cfg.n_layer, 32, cfg.kv_dim());
    // Prefill the first 6 tokens in one batch, all logits.
    const int64_t n_pre = 6;
    std::vector<float> logits(size_t(n_pre * cfg.n_vocab));
    fwd.eval(cache, tokens.data(), n_pre, 0, true, logits.data());
    for (int64_t t = 0; t < n_pre; ++t) {
      EXPECT_LT(normalized_error(logits.data() + t * cfg.n_vocab, ref[size_t(t)]), 1e-4)
          << "prefill position " << t;
      EXPECT_EQ(argmax(logits.data() + t * cfg.n_vocab, cfg.n_vocab), argmax(ref[size_t(t)]));
    }
    // Then decode the rest one token at a time.
    for (size_t t = size_t(n_pre); t < tokens.size(); ++t) {
      fwd.eval(cache, &tokens[t], 1, int64_t(t), false, logits.data());
      EXPECT_LT(normalized_error(logits.data(), ref[t]), 1e-4) << "decode position " << t;
      EXPECT_EQ(argmax(logits.data(), cfg.n_vocab), argmax(ref[t]));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Archs, ForwardVsReference,
    ::testing::Values(Case{"llama", quant::Type::F32, false, 2}, Case{"llama", quant::Type::F32, true, 4},
                      Case{"llama", quant::Type::F32, false, 1}, Case{"qwen2", quant::Type::F32, false, 2},
                      Case{"qwen3", quant::Type::F32, true, 2}, Case{"llama", quant::Type::F16, false, 2},
                      Case{"llama", quant::Type::BF16, false, 2}, Case{"llama", quant::Type::Q8_0, false, 2},
                      Case{"qwen2", quant::Type::Q4_0, false, 2}, Case{"llama", quant::Type::Q4_1, false, 2},
                      Case{"llama", quant::Type::Q5_0, false, 2}, Case{"llama", quant::Type::Q5_1, false, 2},
                      Case{"llama", quant::Type::Q2_K, false, 2}, Case{"qwen3", quant::Type::Q3_K, false, 2},
                      Case{"llama", quant::Type::Q4_K, false, 2}, Case{"llama", quant::Type::Q5_K, false, 2},
                      Case{"qwen2", quant::Type::Q6_K, true, 2}, Case{"llama", quant::Type::IQ4_NL, false, 2},
                      Case{"qwen3", quant::Type::IQ4_XS, false, 2},
                      // Llama 3.1/3.2: rope_freqs.weight, normal pairs; and on NeoX pairs (qwen2).
                      Case{"llama", quant::Type::F32, false, 2, "llama3"},
                      Case{"llama", quant::Type::F32, true, 4, "random"},
                      Case{"qwen2", quant::Type::F32, false, 2, "random"}),
    [](const ::testing::TestParamInfo<Case>& info) {
      return std::string(info.param.arch) + "_" + std::string(quant::type_name(uint32_t(info.param.type))) +
             (info.param.tied ? "_tied" : "") + "_kv" + std::to_string(info.param.n_head_kv) +
             (info.param.rope_freqs[0] ? std::string("_rope_") + info.param.rope_freqs : "");
    });

// The frequency factors change the logits (so the matches above could not pass with them ignored):
// the same weights with and without rope_freqs.weight give clearly different logits past position 0.
TEST(ForwardRopeFreqs, FactorsChangeTheLogits) {
  TempDir dir;
  const std::vector<int32_t> tokens = {1, 17, 42, 299, 5, 0};
  auto run = [&](const char* rope_freqs) {
    gen::ModelSpec spec;
    spec.n_vocab = 300;
    spec.n_embd = 128;
    spec.n_ff = 256;
    spec.seed = 5;
    spec.rope_freqs = rope_freqs;
    const std::string path = dir.file(std::string("m_") + rope_freqs + ".gguf");
    gen::write_model(spec, path);
    const auto m = Model::load(path);
    EXPECT_EQ(m->weights().rope_freqs != nullptr, rope_freqs[0] != 0);
    ThreadPool pool(1);
    CpuMatmul backend(pool);
    Forward fwd(m->config(), m->weights(), backend, pool);
    KvCache cache(m->config().n_layer, 16, m->config().kv_dim());
    std::vector<float> logits(tokens.size() * size_t(m->config().n_vocab));
    fwd.eval(cache, tokens.data(), int64_t(tokens.size()), 0, true, logits.data());
    return logits;
  };
  const std::vector<float> plain = run(""), scaled = run("random");
  const size_t V = plain.size() / tokens.size();
  // Position 0 rotates by angle 0 whatever the factors: identical.
  for (size_t i = 0; i < V; ++i) ASSERT_EQ(plain[i], scaled[i]) << i;
  for (size_t t = 1; t < tokens.size(); ++t) {
    const std::vector<double> ref(plain.begin() + long(t * V), plain.begin() + long((t + 1) * V));
    EXPECT_GT(normalized_error(scaled.data() + t * V, ref), 1e-2) << "position " << t;
  }
}

// Quantization error of the weights themselves, bounded per format: logits of a quantized model vs
// the same model in F32 (same seed → same underlying weights before quantization).
TEST(ForwardQuantized, LogitsStayCloseToTheF32Model) {
  TempDir dir;
  const std::vector<int32_t> tokens = {3, 14, 15, 92, 65};
  auto run = [&](quant::Type t) {
    gen::ModelSpec spec;
    spec.weight_type = t;
    spec.n_vocab = 300;
    spec.n_embd = 256;
    spec.n_ff = 512;
    spec.seed = 11;
    const std::string path = dir.file(std::string(quant::type_name(uint32_t(t))) + ".gguf");
    gen::write_model(spec, path);
    const auto m = Model::load(path);
    ThreadPool pool(2);
    CpuMatmul backend(pool);
    Forward fwd(m->config(), m->weights(), backend, pool);
    KvCache cache(m->config().n_layer, 16, m->config().kv_dim());
    std::vector<float> logits(size_t(m->config().n_vocab));
    fwd.eval(cache, tokens.data(), int64_t(tokens.size()), 0, false, logits.data());
    return logits;
  };
  const auto f32 = run(quant::Type::F32);
  const std::vector<double> ref(f32.begin(), f32.end());
  // Relative error budgets: roughly the format's per-weight relative error, with headroom.
  const std::pair<quant::Type, double> budgets[] = {
      {quant::Type::F16, 2e-3}, {quant::Type::Q8_0, 3e-2}, {quant::Type::Q6_K, 6e-2},
      {quant::Type::Q5_K, 0.1}, {quant::Type::Q4_0, 0.25}, {quant::Type::Q4_K, 0.2},
      {quant::Type::IQ4_NL, 0.25}, {quant::Type::IQ4_XS, 0.25}};
  for (const auto& [type, budget] : budgets) {
    const auto q = run(type);
    EXPECT_LT(normalized_error(q.data(), ref), budget) << quant::type_name(uint32_t(type));
  }
}

}  // namespace
}  // namespace ork::model
