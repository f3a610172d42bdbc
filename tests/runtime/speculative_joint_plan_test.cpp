// A speculative draft and its target planned together on one simulated device: the draft loaded
// first, resident; the target (share_scratch_with the draft) planned in the IOVA window the draft
// leaves — streamed through the rest of a small window, or resident beside it — with one matmul
// scratch for both. The joint plan stays within the window, the run never hits the IOVA wall, and
// greedy output with the draft is target-only greedy's, token for token.
#include <gtest/gtest.h>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "runtime/context.h"
#include "runtime/draft_model.h"
#include "runtime/engine.h"
#include "runtime/generator.h"
#include "runtime/sampler.h"
#include "runtime/speculative.h"
#include "weights/window_taken.h"

namespace ork::runtime {
namespace {

class JointPlan : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir;
    gen::ModelSpec s = testing::small_q8_model();  // 4 layers
    s.layer_scale = 0.1f;                           // layers 1-3 add little: the 1-layer draft agrees often
    s.scale_layers_from = 1;
    gen::write_model(s, dir_->file("target.gguf"));
    s.n_layer = 1;  // the target's first layer, the same tensors
    gen::write_model(s, dir_->file("draft.gguf"));
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static EngineOptions options(const std::string& file, uint64_t window_mib, uint32_t domains) {
    EngineOptions o;
    o.model_path = dir_->file(file);
    o.device = "sim";
    o.threads = 2;
    o.npu.sim_window_bytes = window_mib << 20;
    o.npu.sim_domains = domains;
    o.kv_type = model::KvType::kF32;  // as speculative_test: no f16 near-tie in this random model
    return o;
  }
  static std::unique_ptr<Engine> load_draft(uint64_t window_mib, uint32_t domains) {
    EngineOptions o = options("draft.gguf", window_mib, domains);
    o.residency = weights::Residency::kResident;
    return std::make_unique<Engine>(o);
  }
  static std::unique_ptr<Engine> load_target(Engine& draft, uint64_t window_mib, uint32_t domains) {
    EngineOptions o = options("target.gguf", window_mib, domains);
    o.share_scratch_with = &draft;
    return std::make_unique<Engine>(o);
  }

  // Greedy with the draft equals target-only greedy for several K; the draft stays resident and the
  // target's cache never hits the IOVA wall.
  void expect_greedy_identity(Engine& target, Engine& draft) {
    SamplerParams sp;
    sp.temperature = 0.0f;
    const std::vector<int32_t> want = [&] {
      Context ctx(target, 128);
      Sampler s(sp);
      return generate(ctx, s, prompt_, 24, [](int32_t) { return true; }).tokens;
    }();
    ASSERT_EQ(want.size(), 24u);
    double accepted = 0;
    for (int64_t k : {1, 3, 4, 8}) {
      DraftModel dm(draft, 128, sp, 0.0f);
      Context ctx(target, 128);
      Sampler s(sp);
      SpeculativeOptions so;
      so.draft_max = k;
      const SpeculativeResult r = generate_speculative(ctx, dm, s, prompt_, 24, so, [](int32_t) { return true; });
      EXPECT_EQ(r.gen.tokens, want) << "K=" << k;
      EXPECT_LT(r.stats.target_passes, 24) << "K=" << k;
      accepted += double(r.stats.accepted);
    }
    EXPECT_GT(accepted, 0);
    EXPECT_EQ(draft.cache()->stats().evictions, 0u);  // the draft stayed resident
    EXPECT_EQ(target.cache()->stats().iova_wall_hits, 0u);
    EXPECT_EQ(draft.device()->counters().faults, 0u);
  }

  const std::vector<int32_t> prompt_ = {1, 7, 300, 42, 5, 99, 250, 3};
  static testing::TempDir* dir_;
};
testing::TempDir* JointPlan::dir_ = nullptr;

// 3 MiB, one domain: the target alone would stream with a budget the draft's weights leave no room
// for; beside the draft its budget shrinks to what is left, and the pair stays within the window.
TEST_F(JointPlan, TargetStreamsInTheWindowTheResidentDraftLeaves) {
  const uint64_t window = uint64_t(3) << 20;
  auto draft = load_draft(3, 1);
  ASSERT_EQ(draft->plan()->mode, weights::Residency::kResident);
  auto target = load_target(*draft, 3, 1);
  ASSERT_EQ(target->plan()->mode, weights::Residency::kStream);
  EXPECT_EQ(target->device(), draft->device());
  EXPECT_EQ(target->scratch(), draft->scratch());  // one scratch, not two copies

  const std::vector<weights::WindowTaken> taken = weights::window_taken(*draft->plan());
  ASSERT_EQ(target->plan()->taken.size(), taken.size());
  EXPECT_GT(taken[0].footprint, uint64_t(512) << 10);
  ASSERT_EQ(target->plan()->window_used.size(), 1u);
  EXPECT_LE(target->plan()->window_used[0], window);
  EXPECT_GE(target->plan()->window_used[0], taken[0].footprint + target->plan()->budget_bytes);

  // Alone on the same device shape the target takes a budget of half the window, which beside the
  // draft's weights and the scratch would not fit.
  EngineOptions alone_o = options("target.gguf", 3, 1);
  Engine alone(alone_o);
  ASSERT_EQ(alone.plan()->mode, weights::Residency::kStream);
  EXPECT_LT(target->plan()->budget_bytes, alone.plan()->budget_bytes);
  EXPECT_GT(taken[0].footprint + alone.plan()->window_used[0], window);

  expect_greedy_identity(*target, *draft);
  EXPECT_GT(target->cache()->stats().evictions, 0u);  // it did stream
  const npu::Counters c = draft->device()->counters();
  EXPECT_LE(c.peak_mapped_bytes[0], window);
  // Both models' weights and one scratch were mapped together.
  EXPECT_GT(c.peak_mapped_bytes[0], draft->memory().weight_bytes + draft->memory().scratch_bytes);
}

// A window that fits both: the target resident beside the draft in the same domain; with small
// windows and several domains, resident across domains, each domain within its window.
TEST_F(JointPlan, TargetResidentBesideTheDraft) {
  for (const auto& [window_mib, domains] : {std::pair<uint64_t, uint32_t>{6, 1}, {2, 16}}) {
    SCOPED_TRACE(std::to_string(window_mib) + " MiB x " + std::to_string(domains));
    auto draft = load_draft(window_mib, domains);
    auto target = load_target(*draft, window_mib, domains);
    ASSERT_EQ(target->plan()->mode, weights::Residency::kResident);
    for (uint64_t used : target->plan()->window_used) EXPECT_LE(used, window_mib << 20);
    EXPECT_GE(target->plan()->window_used[0], weights::window_taken(*draft->plan())[0].footprint);
    expect_greedy_identity(*target, *draft);
    EXPECT_EQ(target->cache()->stats().evictions, 0u);
    const EngineMemory tm = target->memory();
    EXPECT_TRUE(tm.scratch_shared);
    EXPECT_EQ(tm.window_taken_bytes.size() >= 1, true);
    EXPECT_EQ(tm.window_taken_bytes[0], weights::window_taken(*draft->plan())[0].footprint);
  }
}

// The plan before loading (plan_memory beside the loaded draft) is what loading then does.
TEST_F(JointPlan, PlanMemoryBesideTheDraftMatchesTheLoadedTarget) {
  auto draft = load_draft(3, 1);
  EngineOptions o = options("target.gguf", 3, 1);
  o.share_scratch_with = draft.get();
  const MemoryPlan mp = plan_memory(o, 128);
  auto target = load_target(*draft, 3, 1);
  EXPECT_EQ(mp.mode, "stream");
  EXPECT_EQ(mp.stream_budget_bytes, target->plan()->budget_bytes);
  EXPECT_EQ(mp.window_capacity_bytes, uint64_t(3) << 20);
  ASSERT_EQ(mp.window_taken_bytes.size(), 1u);
  EXPECT_EQ(mp.window_taken_bytes[0], weights::window_taken(*draft->plan())[0].footprint);
  EXPECT_EQ(mp.window_joint_bytes, target->plan()->window_used);
}

// Too little window: the target cannot stream beside the draft — one error naming the window, the
// scratch and the draft's bytes; a draft that cannot be resident is refused by its forced residency.
TEST_F(JointPlan, TooLittleWindowIsAClearError) {
  auto draft = load_draft(2, 1);
  try {
    load_target(*draft, 2, 1);
    FAIL() << "the target fit beside the draft in 2 MiB";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("IOVA window of 2 MiB"), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(weights::window_taken(*draft->plan())[0].footprint) + " bytes"),
              std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  EngineOptions big = options("target.gguf", 2, 1);
  big.residency = weights::Residency::kResident;
  try {
    Engine e(big);
    FAIL() << "the target was resident in one 2 MiB domain";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cannot be resident"), std::string::npos) << m;
    EXPECT_NE(m.find("packed weight bytes"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace ork::runtime
