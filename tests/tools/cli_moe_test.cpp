// `ork run` on a MoE model: the --stats line of what the experts did, and the same greedy tokens on
// `--device cpu --cpu-int8`, `--device sim` resident and `--device sim --residency stream`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "tools/run_ork.h"

namespace ork {
namespace {

class CliMoe : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = dir_.file("m.gguf");
    gen::ModelSpec s = gen::preset("tiny-qwen3moe");
    s.routing_skew = 4.0f;
    gen::write_model(s, model_);
  }
  testing::TempDir dir_;
  std::string model_;
};

TEST_F(CliMoe, StatsReportExpertsAndThePredictor) {
  const testing::OrkResult r =
      testing::run_ork("run -m " + model_ + " --prompt-tokens 1,2,3,4,5 -n 6 --temp 0 --stats", dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("ork: experts: 8 per layer, 2 used;"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("for 10 tokens x 2 layers"), std::string::npos) << r.err;  // 5 prompt + 5 decoded
  EXPECT_NE(r.err.find("always-miss baseline 0%"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("48 expert slices on the CPU"), std::string::npos) << r.err;
}

TEST_F(CliMoe, StatsReportExpertSlotsAndRoutedPrefetchWhenStreamed) {
  const testing::OrkResult r = testing::run_ork(
      "run -m " + model_ + " --prompt-tokens 1,2,3,4,5 -n 6 --temp 0 --stats --device sim --residency stream", dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("ork: expert streaming: expert-sized slots: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("routed prefetch: "), std::string::npos) << r.err;
  // Resident: no streaming line.
  const testing::OrkResult res =
      testing::run_ork("run -m " + model_ + " --prompt-tokens 1,2,3,4,5 -n 6 --temp 0 --stats --device sim", dir_);
  ASSERT_EQ(res.status, 0) << res.err;
  EXPECT_EQ(res.err.find("ork: expert streaming:"), std::string::npos) << res.err;
}

TEST_F(CliMoe, MemReportsWhereTheExpertsAreAndTheirBytesPerToken) {
  const testing::OrkResult res = testing::run_ork("mem -m " + model_ + " --device sim", dir_);
  ASSERT_EQ(res.status, 0) << res.err;
  EXPECT_NE(res.out.find("experts               16 (2 layers x 8, 2 used per token)"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("resident in 1 domain(s)"), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("expert bytes / token"), std::string::npos) << res.out;
  const testing::OrkResult st = testing::run_ork("mem -m " + model_ + " --device sim --residency stream --json", dir_);
  ASSERT_EQ(st.status, 0) << st.err;
  const nlohmann::json e = nlohmann::json::parse(st.out)["experts"];
  EXPECT_EQ(e["count"], 16);
  EXPECT_EQ(e["where"], "streamed");
  EXPECT_GT(e["expert_slots"].get<int>(), 3);
  EXPECT_GT(e["expert_bytes_per_token"].get<double>(), 0.0);
  const testing::OrkResult dense = testing::run_ork("mem --device sim", dir_);  // the default (dense) model
  ASSERT_EQ(dense.status, 0) << dense.err;
  EXPECT_EQ(dense.out.find("experts "), std::string::npos) << dense.out;
}

TEST_F(CliMoe, GreedyTokensAgreeOnCpuInt8SimResidentAndSimStreamed) {
  const std::string base = "run -m " + model_ + " --prompt-tokens 1,2,3,4,5,6,7,8 -n 12 --temp 0 --json ";
  auto tokens = [&](const std::string& flags) {
    const testing::OrkResult r = testing::run_ork(base + flags, dir_);
    EXPECT_EQ(r.status, 0) << flags << ": " << r.err;
    return r.status == 0 ? nlohmann::json::parse(r.out)["tokens"] : nlohmann::json();
  };
  const nlohmann::json cpu = tokens("--device cpu --cpu-int8");
  ASSERT_EQ(cpu.size(), 12u);
  EXPECT_EQ(tokens("--device sim"), cpu);
  EXPECT_EQ(tokens("--device sim --residency stream"), cpu);
}

}  // namespace
}  // namespace ork
