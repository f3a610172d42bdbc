// gemma2, gemma3 and phi3: the engine's forward pass against the float64 reference
// (reference_forward.cpp) on generated models, batched prefill then single-token decode, with more
// tokens than the sliding window so the window layers drop keys; and what each feature changes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>

#include "core/error.h"
#include "core/thread_pool.h"
#include "gen_model/gen_model.h"
#include "model/forward.h"
#include "model/model.h"
#include "reference_forward.h"
#include "temp_dir.h"

namespace ork::model {
namespace {

using ork::testing::normalized_error;
using ork::testing::reference_logits;
using ork::testing::TempDir;

int64_t argmax(const float* x, int64_t n) { return std::max_element(x, x + n) - x; }
int64_t argmax(const std::vector<double>& x) { return std::max_element(x.begin(), x.end()) - x.begin(); }

struct ArchCase {
  const char* name;
  gen::ModelSpec spec;
  int64_t n_ctx = 32;  // the cache the engine runs with (phi3: long factors when > orig)
};

gen::ModelSpec base(const char* arch) {
  gen::ModelSpec s;
  s.arch = arch;
  s.n_vocab = 300;
  s.n_embd = 256;
  s.n_ff = 512;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.n_layer = 3;
  s.seed = 9;
  s.rms_eps = 1e-6f;
  return s;
}

void PrintTo(const ArchCase& c, std::ostream* os) { *os << c.name; }

std::vector<ArchCase> cases() {
  std::vector<ArchCase> out;
  {
    gen::ModelSpec s = base("gemma2");
    s.tied_output = true;
    s.head_dim = 128;  // q_dim 512 ≠ n_embd
    s.sliding_window = 5;
    s.attn_softcap = 2.0f;   // small caps, so they bend the scores and logits of a random model
    s.final_softcap = 3.0f;
    out.push_back({"gemma2_f32", s});
    s.weight_type = quant::Type::Q8_0;
    s.attn_softcap = 0.0f;   // llama.cpp's defaults: 50 and 30
    s.final_softcap = 0.0f;
    out.push_back({"gemma2_q8_0_default_caps", s});
  }
  {
    gen::ModelSpec s = base("gemma3");
    s.tied_output = true;
    s.head_dim = 64;
    s.rope_freq_base = 1000000.0f;
    s.rope_freq_base_swa = 10000.0f;
    s.rope_scale_linear = 8.0f;  // Gemma 3 4B: linear ×8 on the global layers only
    s.sliding_window = 4;
    s.swa_pattern = 2;           // layers 0, 2 sliding; 1 global
    out.push_back({"gemma3_f32", s});
    s.tied_output = false;
    s.weight_type = quant::Type::Q4_K;
    s.final_softcap = 5.0f;
    s.swa_pattern = 0;           // llama.cpp's default period 6: layers 0-2 all sliding
    s.rope_freq_base_swa = 0.0f; // not written: 10000
    out.push_back({"gemma3_q4_k_untied", s});
    gen::ModelSpec g = base("gemma3");
    g.tied_output = true;        // no sliding_window key: every layer global at one base
    out.push_back({"gemma3_global_only", g});
  }
  {
    gen::ModelSpec s = base("phi3");
    s.n_head_kv = 4;
    s.longrope = "random";
    s.longrope_orig_ctx = 16;
    s.n_ctx = 128;
    out.push_back({"phi3_longrope_short", s, 16});
    out.push_back({"phi3_longrope_long", s, 32});
    s.weight_type = quant::Type::Q8_0;
    s.longrope = "";
    s.n_head_kv = 2;             // GQA through the fused QKV rows
    s.n_rot = 32;                // partial rotary (half of the 64-wide heads)
    out.push_back({"phi3_q8_0_partial_rotary_gqa", s});
    s.fused_qkv = false;
    out.push_back({"phi3_separate_qkv", s});
  }
  return out;
}

class ArchVsReference : public ::testing::TestWithParam<ArchCase> {};

TEST_P(ArchVsReference, LogitsMatchForPrefillAndDecode) {
  const ArchCase& c = GetParam();
  TempDir dir;
  const std::string path = dir.file("m.gguf");
  gen::write_model(c.spec, path);
  const std::vector<int32_t> tokens = {1, 17, 42, 299, 5, 0, 123, 77, 8, 250, 31, 64, 200, 9};
  const auto ref = reference_logits(path, tokens, c.n_ctx);

  const auto m = Model::load(path);
  const Config& cfg = m->config();
  const int64_t n_pre = 9;  // past every window above
  // Ring caches on the sliding-window layers (window + n_pre − 1 rows): the decode steps wrap them.
  std::vector<int64_t> ring_rows;
  for (int64_t l = 0; l < cfg.n_layer; ++l) ring_rows.push_back(cfg.window(l) > 0 ? cfg.window(l) + n_pre - 1 : 0);
  for (int threads : {1, 2, -1}) {
    SCOPED_TRACE(threads < 0 ? "ring caches" : "full caches");
    ThreadPool pool(threads < 0 ? 2 : threads);
    CpuMatmul backend(pool);
    Forward fwd(cfg, m->weights(), backend, pool);
    KvCache cache(cfg.n_layer, c.n_ctx, cfg.kv_dim(), KvType::kF32,
                  threads < 0 ? ring_rows : std::vector<int64_t>{});
    std::vector<float> logits(size_t(n_pre * cfg.n_vocab));
    fwd.eval(cache, tokens.data(), n_pre, 0, true, logits.data());
    for (int64_t t = 0; t < n_pre; ++t) {
      EXPECT_LT(normalized_error(logits.data() + t * cfg.n_vocab, ref[size_t(t)]), 1e-4)
          << "prefill position " << t;
      EXPECT_EQ(argmax(logits.data() + t * cfg.n_vocab, cfg.n_vocab), argmax(ref[size_t(t)]));
    }
    for (size_t t = size_t(n_pre); t < tokens.size(); ++t) {
      fwd.eval(cache, &tokens[t], 1, int64_t(t), false, logits.data());
      EXPECT_LT(normalized_error(logits.data(), ref[t]), 1e-4) << "decode position " << t;
      EXPECT_EQ(argmax(logits.data(), cfg.n_vocab), argmax(ref[t]));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, ArchVsReference, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<ArchCase>& info) { return info.param.name; });

// The metadata each architecture's features come from, as Config reads it.
TEST(ArchConfig, GemmaAndPhi3HyperParameters) {
  TempDir dir;
  {
    const std::string path = dir.file("g2.gguf");
    gen::write_model(gen::preset("tiny-gemma2"), path);
    const Config c = Model::load(path)->config();
    EXPECT_EQ(c.arch, Arch::kGemma2);
    EXPECT_FLOAT_EQ(c.embd_scale, std::sqrt(64.0f));
    EXPECT_TRUE(c.post_norms && c.geglu && c.tied_output && c.embd_scale_inputs);
    EXPECT_EQ(c.attn_softcap, 50.0f);
    EXPECT_EQ(c.final_softcap, 30.0f);
    EXPECT_EQ(c.n_swa, 8);
    ASSERT_EQ(c.layer_swa.size(), 3u);  // period 2: layers 0 and 2 slide
    EXPECT_EQ(c.window(0), 8);
    EXPECT_EQ(c.window(1), 0);
    EXPECT_EQ(c.window(2), 8);
    EXPECT_FLOAT_EQ(c.attn_scale, 1.0f / std::sqrt(32.0f));
  }
  {
    const std::string path = dir.file("g3.gguf");
    gen::write_model(gen::preset("tiny-gemma3"), path);
    const Config c = Model::load(path)->config();
    EXPECT_EQ(c.arch, Arch::kGemma3);
    EXPECT_TRUE(c.qk_norm && c.post_norms && !c.embd_scale_inputs);
    EXPECT_EQ(c.final_softcap, 0.0f);
    EXPECT_EQ(c.rope_base(0), 10000.0f);    // sliding
    EXPECT_EQ(c.rope_base(2), 1000000.0f);  // period 3: layer 2 global
    EXPECT_EQ(c.window(2), 0);
  }
  {
    const std::string path = dir.file("p3.gguf");
    gen::write_model(gen::preset("tiny-phi3"), path);
    const auto m = Model::load(path);
    const Config& c = m->config();
    EXPECT_EQ(c.arch, Arch::kPhi3);
    EXPECT_EQ(c.n_ctx_orig, 64);
    EXPECT_NEAR(c.rope_attn_factor, std::sqrt(1.0 + std::log(4.0) / std::log(64.0)), 1e-6);
    EXPECT_EQ(m->weights().rope_factors(c, 64), m->weights().rope_short);
    EXPECT_EQ(m->weights().rope_factors(c, 65), m->weights().rope_long);
    // Fused tensors split into views: seven linears per layer, named after their rows.
    EXPECT_EQ(m->weights().linears().size(), size_t(7 * c.n_layer + 1));
    EXPECT_EQ(m->weights().layers[0].wk.name(), "blk.0.attn_qkv.weight:k");
    EXPECT_EQ(m->weights().layers[0].gate.name(), "blk.0.ffn_up.weight:gate");
    EXPECT_EQ(m->weights().layers[0].up.w->data,
              m->weights().layers[0].gate.w->data + m->weights().layers[0].gate.w->n_bytes);
  }
}

// Each feature moves the logits: with the window, the soft-caps or the LongRoPE choice changed,
// the reference disagrees with the engine, so the matches above could not pass with one ignored.
TEST(ArchFeatures, EachOneChangesTheLogits) {
  TempDir dir;
  const std::vector<int32_t> tokens = {1, 17, 42, 299, 5, 0, 123, 77, 8, 250};
  auto logits = [&](const gen::ModelSpec& s, const std::string& name, int64_t n_ctx) {
    const std::string path = dir.file(name + ".gguf");
    gen::write_model(s, path);
    return reference_logits(path, tokens, n_ctx).back();
  };
  gen::ModelSpec g2 = base("gemma2");
  g2.tied_output = true;
  g2.sliding_window = 4;
  g2.attn_softcap = 2.0f;
  g2.final_softcap = 3.0f;
  const auto ref = logits(g2, "g2", 32);
  gen::ModelSpec wide = g2;
  wide.sliding_window = 64;
  gen::ModelSpec soft = g2;
  soft.attn_softcap = 500.0f;
  gen::ModelSpec fin = g2;
  fin.final_softcap = 300.0f;
  for (const auto& [spec, name] : {std::pair{wide, "window"}, std::pair{soft, "attn_cap"}, std::pair{fin, "final_cap"}}) {
    const auto other = logits(spec, name, 32);
    const std::vector<float> as_float(other.begin(), other.end());
    EXPECT_GT(normalized_error(as_float.data(), ref), 1e-2) << name;
  }
  gen::ModelSpec p3 = base("phi3");
  p3.n_head_kv = 4;
  p3.longrope = "random";
  p3.longrope_orig_ctx = 16;
  p3.n_ctx = 128;
  const auto short_f = logits(p3, "p3", 16);
  const auto long_f = reference_logits(dir.file("p3.gguf"), tokens, 32).back();
  const std::vector<float> as_float(long_f.begin(), long_f.end());
  EXPECT_GT(normalized_error(as_float.data(), short_f), 1e-2) << "long vs short factors";
}

TEST(ArchConfig, BadMetadataIsOneClearError) {
  TempDir dir;
  gen::ModelSpec s = gen::preset("tiny-gemma2");
  s.tied_output = false;
  EXPECT_THROW(gen::validate(s), Error);  // gemma2 has no output.weight
  gen::ModelSpec p = gen::preset("tiny-phi3");
  p.head_dim = 8;  // q rows ≠ n_embd
  EXPECT_THROW(gen::validate(p), Error);
}

}  // namespace
}  // namespace ork::model
