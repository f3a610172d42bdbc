// ork mem --draft and ork run --draft on one simulated device: the draft planned first (resident),
// the target in the window it leaves; both models' bytes per domain and the one shared scratch; the
// joint plan within the window; greedy tokens as target-only; one clear error line when the draft
// cannot be resident or the target does not fit beside it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "tools/run_ork.h"

namespace ork {
namespace {

class CliMemDraft : public ::testing::Test {
 protected:
  void SetUp() override {
    gen::ModelSpec s = testing::small_q8_model();  // 4 layers
    s.layer_scale = 0.1f;
    s.scale_layers_from = 1;
    gen::write_model(s, dir_.file("t.gguf"));
    s.n_layer = 1;
    gen::write_model(s, dir_.file("d.gguf"));
  }
  // The text between `key` and the next ']' or ',' after the first `within` (a JSON object key).
  static std::string field(const std::string& out, const std::string& within, const std::string& key) {
    const size_t obj = out.find("\"" + within + "\":");
    if (obj == std::string::npos) return "";
    const size_t at = out.find("\"" + key + "\":", obj);
    if (at == std::string::npos) return "";
    const size_t from = at + key.size() + 3;
    const size_t end = out[from] == '[' ? out.find(']', from) + 1 : out.find_first_of(",}", from);
    return out.substr(from, end - from);
  }
  static uint64_t first(const std::string& array) { return std::stoull(array.substr(1)); }
  const std::string sim_ = " --device sim --sim-domains 1 ";
  testing::TempDir dir_;
};

TEST_F(CliMemDraft, ShowsBothModelsAndTheSharedScratchWithinTheWindow) {
  const testing::OrkResult j =
      testing::run_ork("mem -m " + dir_.file("t.gguf") + " --draft " + dir_.file("d.gguf") + sim_ +
                           "--sim-window-mb 3 --ctx 64 --json", dir_);
  ASSERT_EQ(j.status, 0) << j.err;
  EXPECT_EQ(field(j.out, "draft_plan", "mode"), "\"resident\"") << j.out;
  EXPECT_EQ(field(j.out, "plan", "mode"), "\"stream\"") << j.out;
  EXPECT_EQ(field(j.out, "loaded", "scratch_shared"), "true") << j.out;
  const uint64_t window = std::stoull("0" + field(j.out, "plan", "window_capacity_bytes"));
  EXPECT_EQ(window, uint64_t(3) << 20);
  const uint64_t joint = first(field(j.out, "plan", "window_joint_bytes"));
  const uint64_t taken = first(field(j.out, "plan", "window_taken_bytes"));
  EXPECT_LE(joint, window);
  EXPECT_GT(taken, 0u);
  EXPECT_GT(joint, taken);
  // Loaded: the draft's weights in domain 0 beside the target's streamed ones and one scratch.
  const uint64_t draft_w = first(field(j.out, "loaded", "draft_weight_device_bytes"));
  const uint64_t target_w = first(field(j.out, "loaded", "target_weight_device_bytes"));
  const uint64_t scratch = first(field(j.out, "loaded", "scratch_device_bytes"));
  EXPECT_EQ(draft_w, first(field(j.out, "draft_plan", "weight_device_bytes")));
  EXPECT_GT(target_w, 0u);
  EXPECT_LE(target_w, std::stoull(field(j.out, "plan", "stream_budget_bytes")));
  // ork mem waits for the target's prefetcher to be idle before it reads them, so they agree.
  EXPECT_EQ(first(field(j.out, "device", "mapped_bytes")), draft_w + target_w + scratch);
  EXPECT_LE(first(field(j.out, "device", "peak_mapped_bytes")), window);

  const testing::OrkResult t =
      testing::run_ork("mem -m " + dir_.file("t.gguf") + " --draft " + dir_.file("d.gguf") + sim_ +
                           "--sim-window-mb 6 --ctx 64", dir_);
  ASSERT_EQ(t.status, 0) << t.err;
  for (const char* s : {"plan, draft (first): device sim, resident", "plan, target (beside it): resident",
                        "draft weights", "target weights", "shared scratch", "the scratch shared by both"}) {
    EXPECT_NE(t.out.find(s), std::string::npos) << s << " in " << t.out;
  }
}

TEST_F(CliMemDraft, RunWithTheDraftOnTheDeviceGivesTheTargetOnlyTokens) {
  const std::string run = "run -m " + dir_.file("t.gguf") + " --prompt-tokens 1,7,300,42,5 -n 16 --temp 0 "
                          "--print-tokens --kv-type f32 -t 2 --sim-window-mb 3" + sim_;
  const testing::OrkResult base = testing::run_ork(run, dir_);
  ASSERT_EQ(base.status, 0) << base.err;
  const testing::OrkResult r = testing::run_ork(run + "--stats --draft " + dir_.file("d.gguf") + " --draft-max 4", dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, base.out);
  EXPECT_NE(r.err.find("residency: stream"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("beside the"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" 0 IOVA-wall hits"), std::string::npos) << r.err;
}

TEST_F(CliMemDraft, ADraftTooBigOrNoRoomLeftIsOneClearLine) {
  // The target as its own draft: 4 layers do not fit one 2 MiB domain.
  const testing::OrkResult big =
      testing::run_ork("run -m " + dir_.file("t.gguf") + " --draft " + dir_.file("t.gguf") + sim_ +
                           "--sim-window-mb 2 -t 2 --prompt-tokens 1,2 -n 2", dir_);
  EXPECT_EQ(big.status, 1) << big.err;
  EXPECT_EQ(std::count(big.err.begin(), big.err.end(), '\n'), 1) << big.err;
  for (const char* s : {"--draft: ", "cannot be resident on sim", "bytes of weights in the file",
                        "IOVA window 2 MiB per domain", "a draft must be resident"}) {
    EXPECT_NE(big.err.find(s), std::string::npos) << s << " in " << big.err;
  }
  const testing::OrkResult mem = testing::run_ork(
      "mem -m " + dir_.file("d.gguf") + " --draft " + dir_.file("t.gguf") + sim_ + "--sim-window-mb 2", dir_);
  EXPECT_EQ(mem.status, 1) << mem.err;
  EXPECT_NE(mem.err.find("a draft must be resident"), std::string::npos) << mem.err;
  // The draft fits, the target cannot stream in what it leaves of 2 MiB.
  const testing::OrkResult full = testing::run_ork(
      "mem -m " + dir_.file("t.gguf") + " --draft " + dir_.file("d.gguf") + sim_ + "--sim-window-mb 2", dir_);
  EXPECT_EQ(full.status, 1) << full.err;
  EXPECT_EQ(std::count(full.err.begin(), full.err.end(), '\n'), 1) << full.err;
  EXPECT_NE(full.err.find("the IOVA window of 2 MiB cannot hold the matmul scratch"), std::string::npos) << full.err;
  EXPECT_NE(full.err.find("bytes of IOVA window another model on the device holds"), std::string::npos) << full.err;
  // On the cpu there is no device to plan together.
  const testing::OrkResult cpu = testing::run_ork(
      "mem -m " + dir_.file("t.gguf") + " --draft " + dir_.file("d.gguf") + " --device cpu", dir_);
  EXPECT_EQ(cpu.status, 1) << cpu.err;
  EXPECT_NE(cpu.err.find("must be on one npu or sim device"), std::string::npos) << cpu.err;
}

}  // namespace
}  // namespace ork
