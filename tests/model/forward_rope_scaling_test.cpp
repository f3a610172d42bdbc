// RoPE scaling from the metadata at positions past the original (pre-scaling) context: YaRN on
// llama and qwen2, LongRoPE on phi3, linear, and type "none" — the engine against the float64
// reference (reference_forward.cpp), prefill and decode.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

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

struct ScalingCase {
  const char* name;
  gen::ModelSpec spec;
  RopeScaling scaling;
};

void PrintTo(const ScalingCase& c, std::ostream* os) { *os << c.name; }

std::vector<ScalingCase> cases() {
  gen::ModelSpec b;
  b.n_vocab = 300;
  b.n_embd = 128;
  b.n_ff = 256;
  b.n_layer = 2;
  b.n_ctx = 64;  // the scaled context; the original is 16
  b.seed = 21;
  std::vector<ScalingCase> out;
  gen::ModelSpec y = b;
  y.yarn_factor = 4.0f;
  y.yarn_orig_ctx = 16;
  out.push_back({"llama_yarn", y, RopeScaling::kYarn});
  y.arch = "qwen2";
  y.rope_freq_base = 1000000.0f;
  out.push_back({"qwen2_yarn", y, RopeScaling::kYarn});
  gen::ModelSpec p = b;
  p.arch = "phi3";
  p.n_head_kv = 4;
  p.longrope = "random";
  p.longrope_orig_ctx = 16;
  out.push_back({"phi3_longrope", p, RopeScaling::kLinear});
  gen::ModelSpec l = b;
  l.rope_scale_linear = 4.0f;
  out.push_back({"llama_linear", l, RopeScaling::kLinear});
  return out;
}

class RopeScalingVsReference : public ::testing::TestWithParam<ScalingCase> {};

TEST_P(RopeScalingVsReference, LogitsMatchPastTheOriginalContext) {
  const ScalingCase& c = GetParam();
  TempDir dir;
  const std::string path = dir.file("m.gguf");
  gen::write_model(c.spec, path);
  std::vector<int32_t> tokens;
  for (int i = 0; i < 40; ++i) tokens.push_back(int32_t((i * 37 + 11) % 300));
  const int64_t n_ctx = 64;
  const auto ref = reference_logits(path, tokens, n_ctx);
  const auto m = Model::load(path);
  const Config& cfg = m->config();
  EXPECT_EQ(cfg.rope_scaling, c.scaling);
  ThreadPool pool(2);
  CpuMatmul backend(pool);
  Forward fwd(cfg, m->weights(), backend, pool);
  KvCache cache(cfg.n_layer, n_ctx, cfg.kv_dim());
  const int64_t n_pre = 24;
  std::vector<float> logits(size_t(n_pre * cfg.n_vocab));
  fwd.eval(cache, tokens.data(), n_pre, 0, true, logits.data());
  for (int64_t t = 0; t < n_pre; ++t) {
    EXPECT_LT(normalized_error(logits.data() + t * cfg.n_vocab, ref[size_t(t)]), 1e-4) << "position " << t;
  }
  for (size_t t = size_t(n_pre); t < tokens.size(); ++t) {
    fwd.eval(cache, &tokens[t], 1, int64_t(t), false, logits.data());
    EXPECT_LT(normalized_error(logits.data(), ref[t]), 1e-4) << "position " << t;
  }
}

INSTANTIATE_TEST_SUITE_P(Types, RopeScalingVsReference, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<ScalingCase>& info) { return info.param.name; });

// YaRN moves the logits past position 0 relative to plain linear scaling by the same factor (so the
// matches above could not pass with the ramp or its magnitude scale ignored).
TEST(RopeScaling, YarnDiffersFromLinear) {
  TempDir dir;
  const std::vector<int32_t> tokens = {1, 17, 42, 299, 5, 0, 123, 77, 8, 250, 31, 64, 200, 9, 3, 4, 5, 6, 7, 8};
  gen::ModelSpec s;
  s.n_vocab = 300;
  s.n_ctx = 64;
  s.yarn_factor = 4.0f;
  s.yarn_orig_ctx = 16;
  gen::write_model(s, dir.file("y.gguf"));
  s.yarn_factor = 0.0f;
  s.rope_scale_linear = 4.0f;
  gen::write_model(s, dir.file("l.gguf"));
  const auto y = reference_logits(dir.file("y.gguf"), tokens, 64).back();
  const auto l = reference_logits(dir.file("l.gguf"), tokens, 64).back();
  const std::vector<float> yf(y.begin(), y.end());
  EXPECT_GT(normalized_error(yf.data(), l), 1e-2);
}

}  // namespace
}  // namespace ork::model
