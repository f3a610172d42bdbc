// runtime::planned_cpu_copy_bytes through plan_memory: the CPU copies `--schedule auto|cpu` will make,
// planned before loading, against what the HybridMatmul made after a full pass of m_max rows and a
// decode step (Engine::memory().cpu_weight_bytes), and counted in the plan's RAM.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "gen_model/gen_model.h"
#include "model/model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "runtime/context.h"
#include "runtime/engine.h"
#include "runtime/hybrid_matmul.h"
#include "runtime/planned_cpu_copies.h"

namespace ork::runtime {
namespace {

class PlannedCpuCopies : public ::testing::Test {
 protected:
  // Under this profile the CPU is never worth a call (slow to start, slow to read, slow to compute):
  // auto keeps every call of the tiny model on the NPU. Under the built-in profile every call of it is
  // cheaper on the CPU than one submit.
  void SetUp() override {
    gen::write_model(testing::small_q8_model(), dir_.file("m.gguf"));
    std::FILE* f = std::fopen(dir_.file("board.json").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("{\"name\": \"useless-cpu\", \"cpu_call_us\": 10000, \"cpu_read_gbps\": 0.01, "
               "\"cpu_int8_gmacs\": 0.01}",
               f);
    std::fclose(f);
  }
  EngineOptions options(Schedule s, bool useless_cpu) {
    EngineOptions o;
    o.model_path = dir_.file("m.gguf");
    o.device = "sim";
    o.threads = 2;
    o.m_max = 8;
    o.schedule = s;
    if (useless_cpu) o.npu.board_profile = dir_.file("board.json");
    return o;
  }
  // The copies made by a full pass of m_max rows (every position's logits: the output projection at
  // m_max rows too) and one decode step.
  static uint64_t copies_after_a_pass_and_a_step(Engine& e) {
    Context ctx(e, 64);
    ctx.eval_all({1, 7, 300, 42, 5, 99, 250, 3});
    ctx.eval({11});
    return e.memory().cpu_weight_bytes;
  }
  testing::TempDir dir_;
};

TEST_F(PlannedCpuCopies, WhenEveryCallRunsOnTheCpuEveryWeightIsCopiedAndPlannedAsRam) {
  const MemoryPlan npu = plan_memory(options(Schedule::kNpu, false), 64);
  EXPECT_EQ(npu.cpu_copy_bytes, 0u);
  EXPECT_EQ(npu.cpu_copy_all_bytes, 0u);
  for (const Schedule s : {Schedule::kCpu, Schedule::kAuto}) {
    const EngineOptions o = options(s, false);
    const MemoryPlan p = plan_memory(o, 64);
    EXPECT_GT(p.cpu_copy_bytes, 0u) << schedule_name(s);
    EXPECT_EQ(p.cpu_copy_bytes, p.cpu_copy_all_bytes) << schedule_name(s);
    const auto m = model::Model::load(o.model_path);
    EXPECT_EQ(p.cpu_copy_weights, m->weights().linears().size()) << schedule_name(s);
    EXPECT_EQ(p.ram_bytes - npu.ram_bytes, p.cpu_copy_bytes) << "the copies are RAM to plan for";
    Engine e(o);
    EXPECT_EQ(copies_after_a_pass_and_a_step(e), p.cpu_copy_bytes) << schedule_name(s);
  }
}

TEST_F(PlannedCpuCopies, WhenAutoKeepsEveryCallOnTheNpuNothingIsCopied) {
  const EngineOptions o = options(Schedule::kAuto, true);
  const MemoryPlan p = plan_memory(o, 64);
  EXPECT_EQ(p.cpu_copy_bytes, 0u);
  EXPECT_EQ(p.cpu_copy_weights, 0u);
  EXPECT_GT(p.cpu_copy_all_bytes, 0u) << "what other row counts could still copy";
  Engine e(o);
  EXPECT_EQ(copies_after_a_pass_and_a_step(e), 0u);
  ASSERT_NE(e.hybrid(), nullptr);
  EXPECT_EQ(e.hybrid()->stats().cpu_calls + e.hybrid()->stats().split_calls, 0u);
}

TEST(CpuCopyBytes, Int8RowsOrInt4CodesTwoPerByteAndAScalePerRow) {
  model::Linear w;
  w.n = 3, w.k = 65;
  EXPECT_EQ(cpu_copy_bytes(w, npu::Dtype::kI8), 3u * 65 + 3 * 4);
  EXPECT_EQ(cpu_copy_bytes(w, npu::Dtype::kI4), 3u * 33 + 3 * 4);
}

}  // namespace
}  // namespace ork::runtime
