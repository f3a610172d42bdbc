// ork_generate_speculative: greedy tokens equal ork_generate's with a draft context (on the simulator,
// scratch shared with the target) and with prompt lookup; the stats add up; bad options and a draft
// of another vocabulary are ORK_ERR_INVALID_ARG with a message.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "ork/ork.h"

namespace {

const std::vector<int32_t> kPrompt = {1, 7, 300, 42, 5, 99, 250, 3};

class ApiSpeculative : public ::testing::Test {
 protected:
  std::string make_model(const std::string& name, float noise, int vocab = 512) {
    ork::gen::ModelSpec s;
    s.n_embd = 128, s.n_ff = 256, s.n_layer = 2, s.n_vocab = vocab;
    s.weight_type = ork::quant::Type::Q8_0;
    s.noise_std = noise;
    const std::string path = dir_.file(name);
    ork::gen::write_model(s, path);
    return path;
  }
  ork_model* load(const std::string& path, ork_model* scratch_with = nullptr) {
    ork_model_options o;
    ork_model_options_init(&o);
    o.device = "sim";
    o.threads = 2;
    o.share_scratch_with = scratch_with;
    ork_model* m = nullptr;
    EXPECT_EQ(ork_model_load(path.c_str(), &o, &m), ORK_OK) << ork_last_error();
    return m;
  }
  static ork_sampler* greedy() {
    ork_sampler_params p;
    ork_sampler_params_init(&p);
    p.temperature = 0;
    ork_sampler* s = nullptr;
    EXPECT_EQ(ork_sampler_create(&p, &s), ORK_OK);
    return s;
  }
  ork::testing::TempDir dir_;
};

TEST_F(ApiSpeculative, GreedyTokensEqualOrkGenerate) {
  ork_model* target = load(make_model("t.gguf", 0.0f));
  ork_model* draft = load(make_model("d.gguf", 0.2f), target);
  ork_context *tc = nullptr, *dc = nullptr;
  ASSERT_EQ(ork_context_create(target, 128, &tc), ORK_OK);
  ASSERT_EQ(ork_context_create(draft, 128, &dc), ORK_OK);
  ork_sampler* s = greedy();
  std::vector<int32_t> want(32), got(32);
  int64_t n_want = 0, n_got = 0;
  ASSERT_EQ(ork_generate(tc, s, kPrompt.data(), int64_t(kPrompt.size()), 32, want.data(), 32, &n_want, nullptr, nullptr),
            ORK_OK)
      << ork_last_error();
  for (int mode = 0; mode < 2; ++mode) {
    ork_context_reset(tc);
    ork_speculative_options o;
    ork_speculative_options_init(&o);
    if (mode == 0) o.draft = dc;
    else o.lookup_n = 2;
    o.draft_max = 4;
    ork_speculative_stats st{};
    ASSERT_EQ(ork_generate_speculative(tc, s, &o, kPrompt.data(), int64_t(kPrompt.size()), 32, got.data(), 32, &n_got,
                                       nullptr, nullptr, &st),
              ORK_OK)
        << ork_last_error();
    EXPECT_EQ(n_got, n_want);
    EXPECT_EQ(got, want) << "mode " << mode;
    EXPECT_EQ(st.generated, n_got - 1);
    EXPECT_LE(st.accepted, st.drafted);
    if (mode == 0) {
      EXPECT_GT(st.drafted, 0);
    }
  }
  ork_sampler_free(s);
  ork_context_free(dc);
  ork_context_free(tc);
  ork_model_free(draft);
  ork_model_free(target);
}

TEST_F(ApiSpeculative, BadOptionsAreInvalidArgs) {
  ork_model* target = load(make_model("t.gguf", 0.0f));
  ork_model* other = load(make_model("v.gguf", 0.0f, 520));
  ork_context *tc = nullptr, *oc = nullptr;
  ASSERT_EQ(ork_context_create(target, 64, &tc), ORK_OK);
  ASSERT_EQ(ork_context_create(other, 64, &oc), ORK_OK);
  ork_sampler* s = greedy();
  int64_t n = 0;
  ork_speculative_options o;
  ork_speculative_options_init(&o);
  const auto gen = [&](const ork_speculative_options* opts) {
    return ork_generate_speculative(tc, s, opts, kPrompt.data(), int64_t(kPrompt.size()), 4, nullptr, 0, &n, nullptr,
                                    nullptr, nullptr);
  };
  EXPECT_EQ(gen(&o), ORK_ERR_INVALID_ARG);  // neither a draft nor lookup
  EXPECT_EQ(gen(nullptr), ORK_ERR_INVALID_ARG);
  o.draft = oc;
  EXPECT_EQ(gen(&o), ORK_ERR_INVALID_ARG);
  EXPECT_NE(std::string(ork_last_error()).find("vocabulary"), std::string::npos) << ork_last_error();
  o.draft = tc;
  EXPECT_EQ(gen(&o), ORK_ERR_INVALID_ARG);
  o.draft = nullptr;
  o.lookup_n = 2;
  o.draft_max = 0;
  EXPECT_EQ(gen(&o), ORK_ERR_INVALID_ARG);
  o.draft_max = 2;
  o.draft_min = 3;
  EXPECT_EQ(gen(&o), ORK_ERR_INVALID_ARG);
  o.draft_min = 0;
  o.draft_p_min = 2.0f;
  EXPECT_EQ(gen(&o), ORK_ERR_INVALID_ARG);
  o.draft_p_min = 0.0f;
  o.draft = reinterpret_cast<ork_context*>(&o);  // not a handle
  EXPECT_EQ(gen(&o), ORK_ERR_BAD_HANDLE);
  o.draft = nullptr;
  EXPECT_EQ(gen(&o), ORK_ERR_BUFFER_TOO_SMALL);  // 4 tokens, capacity 0: generated, then reported
  EXPECT_EQ(n, 4);
  ork_sampler_free(s);
  ork_context_free(oc);
  ork_context_free(tc);
  ork_model_free(other);
  ork_model_free(target);
}

}  // namespace
