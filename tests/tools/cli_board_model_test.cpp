// `ork run --device sim --json` carries the modeled board figures of its NPU jobs (board_model), the
// text path prints them as MODELED under --stats, and the CPU device has none.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "gen_model/gen_model.h"
#include "model/model.h"
#include "model/temp_dir.h"
#include "ops/attention_blocked.h"
#include "runtime/host_work_meter.h"
#include "tools/run_ork.h"

namespace ork {
namespace {

class CliBoardModel : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = dir_.file("m.gguf");
    spec_ = gen::preset("tiny-llama");
    gen::write_model(spec_, model_);
  }
  testing::TempDir dir_;
  gen::ModelSpec spec_;
  std::string model_;
};

TEST_F(CliBoardModel, SimRunsReportModeledNpuTimePerToken) {
  const testing::OrkResult r =
      testing::run_ork("run -m " + model_ + " --device sim --prompt-tokens 1,2,3,4,5 -n 6 --temp 0 --json", dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("board_model")) << r.out;
  const nlohmann::json& b = j["board_model"];
  EXPECT_EQ(b["modeled"], true);
  EXPECT_EQ(b["profile"], "rk3588-public-v1");
  EXPECT_EQ(b["prompt_tokens"], 5);
  EXPECT_EQ(b["decode_tokens"], 5);  // the first token comes from the prompt's pass, the last is not evaluated
  // Per decoded token: Q/K/V, O, gate/up and down of every layer, and the output projection.
  EXPECT_EQ(b["submits_per_token"].get<double>(), double(4 * spec_.n_layer + 1));
  EXPECT_EQ(b["prefill_submits"].get<double>(), double(4 * spec_.n_layer + 1));
  EXPECT_GT(b["decode_tok_per_s"].get<double>(), 0.0);
  EXPECT_GT(b["prefill_tok_per_s"].get<double>(), b["decode_tok_per_s"].get<double>());
  EXPECT_GT(b["ddr_bytes_per_token"].get<double>(), 0.0);
  // The host work of the decoded tokens (positions 5..9, one row each; the KV cache in f16 by default),
  // priced from the model's shape as npu/sim/host_cost.h does, is part of their modeled time.
  const auto model = model::Model::load(model_);
  const npu::sim::HostShape shape = runtime::host_shape_of(model->config(), model::KvType::kF16);
  double host_ns = 0;
  for (int64_t pos = 5; pos < 10; ++pos) {
    host_ns += npu::sim::cost_host_pass(npu::sim::BoardProfile{}, shape, npu::sim::sequence_pass(pos, 1, 1)).ns;
  }
  // (--json prints 6 significant digits)
  EXPECT_NEAR(b["decode_host_modeled_ms_per_token"].get<double>(), host_ns / 5 / 1e6, 1e-5 * host_ns / 5 / 1e6);
  EXPECT_GT(b["decode_modeled_ms_per_token"].get<double>(), b["decode_host_modeled_ms_per_token"].get<double>());
  // The prompt: one pass of 5 rows from position 0, the last row's logits.
  const double prompt_ms =
      npu::sim::cost_host_pass(npu::sim::BoardProfile{}, shape, npu::sim::sequence_pass(0, 5, 1, ops::kAttentionTileTokens)).ns / 1e6;
  EXPECT_NEAR(b["prefill_host_modeled_ms"].get<double>(), prompt_ms, 1e-5 * prompt_ms);
  ASSERT_EQ(b["npu_busy_fraction"].size(), 3u);
  for (const auto& f : b["npu_busy_fraction"]) {
    EXPECT_GT(f.get<double>(), 0.0);
    EXPECT_LE(f.get<double>(), 1.0);
  }
}

TEST_F(CliBoardModel, StatsLabelItModeledAndTheCpuHasNone) {
  const testing::OrkResult s =
      testing::run_ork("run -m " + model_ + " --device sim --prompt-tokens 1,2 -n 3 --temp 0 --stats", dir_);
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_NE(s.err.find("board model (MODELED, profile rk3588-public-v1, NPU jobs, weight waits and host work)"), std::string::npos) << s.err;
  const testing::OrkResult c =
      testing::run_ork("run -m " + model_ + " --device cpu --prompt-tokens 1,2 -n 3 --temp 0 --json", dir_);
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_FALSE(nlohmann::json::parse(c.out).contains("board_model"));
}

}  // namespace
}  // namespace ork
