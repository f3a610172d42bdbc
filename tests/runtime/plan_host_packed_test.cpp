// plan_memory counts the host memory a streamed plan keeps packed weights in (weights::HostPacked,
// --wcache-host-mb): by default the packed model, at most the budget asked for, never more than the
// packed model; none for a resident plan. The Engine's cache gets the same budget.
#include <gtest/gtest.h>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "runtime/engine.h"

namespace ork::runtime {
namespace {

TEST(PlanHostPacked, AStreamedPlanCountsItsPackedWeightsAsRam) {
  testing::TempDir dir;
  gen::write_model(testing::small_q8_model(), dir.file("m.gguf"));
  EngineOptions o;
  o.model_path = dir.file("m.gguf");
  o.device = "sim";
  o.threads = 1;
  o.residency = weights::Residency::kStream;
  o.wcache_budget_bytes = uint64_t(1) << 20;
  const MemoryPlan all = plan_memory(o, 64);
  ASSERT_EQ(all.mode, "stream");
  EXPECT_GT(all.host_packed_bytes, 0u);
  o.wcache_host_bytes = 0;
  const MemoryPlan none = plan_memory(o, 64);
  EXPECT_EQ(none.host_packed_bytes, 0u);
  EXPECT_EQ(all.ram_bytes - none.ram_bytes, all.host_packed_bytes);
  o.wcache_host_bytes = 1000;
  EXPECT_EQ(plan_memory(o, 64).host_packed_bytes, 1000u);
  o.wcache_host_bytes = uint64_t(1) << 40;  // more than the model: only the packed model is held
  EXPECT_EQ(plan_memory(o, 64).host_packed_bytes, all.host_packed_bytes);
  o.residency = weights::Residency::kResident;
  o.wcache_host_bytes = EngineOptions::kAutoHostBudget;
  EXPECT_EQ(plan_memory(o, 64).host_packed_bytes, 0u);
}

}  // namespace
}  // namespace ork::runtime
