// `ork run --schedule auto|npu|cpu` on the simulator (same tokens, the choices under --stats and in
// the JSON, the CPU matmuls priced in board_model) and `ork probe calibrate` (a profile that
// --board-profile reads back; bad values refused).
#include <gtest/gtest.h>

#include <algorithm>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "tools/run_ork.h"

namespace ork {
namespace {

class CliSchedule : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = dir_.file("m.gguf");
    gen::write_model(gen::preset("tiny-llama"), model_);
  }
  nlohmann::json run(const std::string& schedule) {
    const testing::OrkResult r = testing::run_ork(
        "run -m " + model_ + " --device sim --prompt-tokens 1,2,3,4,5 -n 6 --temp 0 --json --schedule " + schedule,
        dir_);
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }
  testing::TempDir dir_;
  std::string model_;
};

TEST_F(CliSchedule, EveryScheduleGivesTheSameTokens) {
  const nlohmann::json npu = run("npu"), cpu = run("cpu"), hybrid = run("auto");
  EXPECT_EQ(npu["tokens"], cpu["tokens"]);
  EXPECT_EQ(npu["tokens"], hybrid["tokens"]);
  EXPECT_FALSE(npu.contains("schedule"));
  ASSERT_TRUE(hybrid.contains("schedule")) << hybrid.dump();
  const nlohmann::json& s = hybrid["schedule"];
  EXPECT_EQ(s["schedule"], "auto");
  EXPECT_EQ(s["modeled"], true);
  EXPECT_GT(s["cpu_calls"].get<int>(), 0);
  for (const auto& d : s["decisions"]) {
    const double npu = d["npu_modeled_us"].get<double>(), cpu_us = d["cpu_modeled_us"].get<double>();
    if (d["device"] == "split") {
      EXPECT_LT(d["split_modeled_us"].get<double>(), std::min(npu, cpu_us)) << d;
    } else {
      EXPECT_EQ(d["device"] == "cpu", cpu_us < npu) << d;
    }
  }
  // The CPU schedule submits nothing to the NPU; its board time is the modeled CPU matmuls.
  EXPECT_EQ(cpu["board_model"]["submits_per_token"].get<double>(), 0.0);
  EXPECT_GT(cpu["board_model"]["decode_cpu_modeled_ms_per_token"].get<double>(), 0.0);
  EXPECT_NE(cpu["board_model"]["scope"].get<std::string>().find("CPU matmuls"), std::string::npos);
}

TEST_F(CliSchedule, StatsPrintTheChoicesAndABadNameIsRefused) {
  const testing::OrkResult r = testing::run_ork(
      "run -m " + model_ + " --device sim --prompt-tokens 1,2 -n 2 --temp 0 --stats --schedule auto", dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("ork: schedule auto (MODELED choices, profile rk3588-public-v1)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("-> cpu   (npu "), std::string::npos) << r.err;
  const testing::OrkResult bad = testing::run_ork("run -m " + model_ + " --device sim -p hi --schedule gpu", dir_);
  EXPECT_EQ(bad.status, 2) << bad.err;
  EXPECT_NE(bad.err.find("--schedule: schedule 'gpu' is not one of auto, npu, cpu"), std::string::npos) << bad.err;
}

TEST_F(CliSchedule, BenchReportsModeledBoardTimeOnTheSimulator) {
  const testing::OrkResult r = testing::run_ork(
      "bench -m " + model_ + " --device sim -p 8 -n 4 -r 1 --bw-mib 8 --json --schedule auto", dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("board_model")) << r.out;
  EXPECT_EQ(j["board_model"]["modeled"], true);
  EXPECT_EQ(j["board_model"]["prompt_tokens"], 8);
  EXPECT_EQ(j["board_model"]["decode_tokens"], 4);
  EXPECT_GT(j["board_model"]["decode_tok_per_s"].get<double>(), 0.0);
  EXPECT_TRUE(j.contains("schedule"));
}

TEST_F(CliSchedule, CalibrateWritesAProfileThatRunsReadBack) {
  const std::string out = dir_.file("board.json");
  const testing::OrkResult c = testing::run_ork("probe calibrate --device sim --json --output " + out, dir_);
  ASSERT_EQ(c.status, 0) << c.err;
  const nlohmann::json j = nlohmann::json::parse(c.out);
  EXPECT_EQ(j["npu_clock"], "modeled");
  EXPECT_EQ(j["self_check"], true);
  std::ifstream in(out);
  const nlohmann::json p = nlohmann::json::parse(in);
  EXPECT_EQ(p["name"], "calibrated-sim");
  EXPECT_NEAR(p["submit_us"].get<double>(), 134.0, 1.0);  // the built-in profile, recovered
  const testing::OrkResult r = testing::run_ork(
      "run -m " + model_ + " --device sim --prompt-tokens 1,2 -n 2 --temp 0 --json --board-profile " + out, dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["board_model"]["profile"], "calibrated-sim");
  const testing::OrkResult bad = testing::run_ork("probe calibrate --device sim --repeats 0 --output " + out, dir_);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("--repeats"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace ork
