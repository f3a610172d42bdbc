// The C API's joint plan of a speculative draft and its target on one simulated device: the draft
// loaded first (resident), the target with share_scratch_with the draft. ork_query_plan and
// ork_query_mem report, per domain, the draft's weight bytes and the window they take
// (beside_weight_bytes, beside_window_bytes) beside the target's own and the one scratch; the
// device's count of the domain stays within the window; greedy speculative output is ork_generate's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "ork/ork.h"

namespace {

class ApiJointPlan : public ::testing::Test {
 protected:
  void SetUp() override {
    ork::gen::ModelSpec s = ork::testing::small_q8_model();  // 4 layers
    s.layer_scale = 0.1f;
    s.scale_layers_from = 1;
    target_ = dir_.file("t.gguf");
    ork::gen::write_model(s, target_);
    s.n_layer = 1;
    draft_ = dir_.file("d.gguf");
    ork::gen::write_model(s, draft_);
    ork_model_options_init(&opts_);
    opts_.device = "sim";
    opts_.threads = 2;
    opts_.sim_window_bytes = kWindow;
    opts_.sim_domains = 1;
  }
  static constexpr uint64_t kWindow = uint64_t(3) << 20;
  std::string target_, draft_;
  ork_model_options opts_;
  ork::testing::TempDir dir_;
};

TEST_F(ApiJointPlan, QueriesShowBothModelsWithinTheWindow) {
  ork_model_options d = opts_;
  d.residency = "resident";
  ork_model* draft = nullptr;
  ASSERT_EQ(ork_model_load(draft_.c_str(), &d, &draft), ORK_OK) << ork_last_error();
  ork_mem_info dm{};
  ASSERT_EQ(ork_query_mem(draft, nullptr, &dm), ORK_OK);
  EXPECT_GT(dm.domains[0].weight_bytes, 0u);
  EXPECT_EQ(dm.beside_weight_bytes[0], 0u);  // planned alone
  EXPECT_EQ(dm.window_bytes, kWindow);

  ork_model_options t = opts_;
  t.share_scratch_with = draft;
  ork_mem_info plan{};
  ASSERT_EQ(ork_query_plan(target_.c_str(), &t, 64, &plan), ORK_OK) << ork_last_error();
  EXPECT_EQ(plan.beside_weight_bytes[0], dm.domains[0].weight_bytes);
  EXPECT_GE(plan.beside_window_bytes[0], dm.domains[0].weight_bytes);
  EXPECT_EQ(plan.window_bytes, kWindow);
  EXPECT_EQ(plan.domains[0].weight_bytes, 0u);  // streamed: nothing resident

  ork_model* target = nullptr;
  ASSERT_EQ(ork_model_load(target_.c_str(), &t, &target), ORK_OK) << ork_last_error();
  ork_context *tc = nullptr, *dc = nullptr;
  ASSERT_EQ(ork_context_create(target, 64, &tc), ORK_OK);
  ASSERT_EQ(ork_context_create(draft, 64, &dc), ORK_OK);
  ork_sampler_params sp;
  ork_sampler_params_init(&sp);
  sp.temperature = 0;
  ork_sampler* s = nullptr;
  ASSERT_EQ(ork_sampler_create(&sp, &s), ORK_OK);
  const std::vector<int32_t> prompt = {1, 7, 300, 42, 5};
  std::vector<int32_t> want(16), got(16);
  int64_t n_want = 0, n_got = 0;
  ASSERT_EQ(ork_generate(tc, s, prompt.data(), 5, 16, want.data(), 16, &n_want, nullptr, nullptr), ORK_OK)
      << ork_last_error();
  ork_context_reset(tc);
  ork_speculative_options so;
  ork_speculative_options_init(&so);
  so.draft = dc;
  so.draft_max = 4;
  ASSERT_EQ(ork_generate_speculative(tc, s, &so, prompt.data(), 5, 16, got.data(), 16, &n_got, nullptr, nullptr, nullptr),
            ORK_OK)
      << ork_last_error();
  EXPECT_EQ(got, want);

  ork_mem_info tm{};
  ASSERT_EQ(ork_query_mem(target, nullptr, &tm), ORK_OK);
  EXPECT_EQ(tm.beside_weight_bytes[0], dm.domains[0].weight_bytes);
  EXPECT_EQ(tm.beside_window_bytes[0], plan.beside_window_bytes[0]);
  EXPECT_GT(tm.domains[0].weight_bytes, 0u);  // the streamed weights mapped now
  ASSERT_EQ(ork_query_mem(draft, nullptr, &dm), ORK_OK);
  EXPECT_EQ(tm.domains[0].internal_bytes, dm.domains[0].internal_bytes);  // one scratch
  EXPECT_GT(tm.internal_shared_saving, 0u);
  EXPECT_LE(tm.domains[0].peak_total_bytes, kWindow);
  EXPECT_EQ(tm.domains[0].total_bytes,
            tm.domains[0].weight_bytes + dm.domains[0].weight_bytes + tm.domains[0].internal_bytes);

  ork_sampler_free(s);
  ork_context_free(tc);
  ork_context_free(dc);
  ork_model_free(target);
  ork_model_free(draft);
}

}  // namespace
