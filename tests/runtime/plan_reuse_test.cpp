// Plan once, submit many, on the simulated NPU through the whole Engine, int8 and int4 weights
// (`--npu-wtype i8|i4`): after the first decoded token no register command is generated again, every layer runs as four jobs (Q/K/V, O, gate/up,
// down) plus one for the output, and the logits are bit-identical to one-matmul-per-job runs (the
// CPU int8 path, the NPU path's bit-exact reference).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "runtime/context.h"
#include "runtime/engine.h"
#include "runtime/npu_wtype.h"

namespace ork::runtime {
namespace {

class PlanReuse : public ::testing::Test {
 protected:
  void SetUp() override { gen::write_model(testing::small_q8_model(), dir_.file("m.gguf")); }
  EngineOptions options(const char* device) {
    EngineOptions o;
    o.model_path = dir_.file("m.gguf");
    o.device = device;
    o.threads = 2;
    o.cpu_int8 = std::strcmp(device, "cpu") == 0;
    return o;
  }
  // Decodes six tokens after a prefill and one decoded token: no register commands regenerated,
  // 4 submits per layer and one for the output.
  void expect_no_regeneration(const EngineOptions& o);
  testing::TempDir dir_;
};

TEST_F(PlanReuse, NoRegisterCommandsAreGeneratedAfterTheFirstToken) {
  for (NpuWtype wtype : {NpuWtype::kI8, NpuWtype::kI4}) {
    SCOPED_TRACE(wtype == NpuWtype::kI8 ? "i8" : "i4");
    EngineOptions o = options("sim");
    o.npu_wtype = wtype;
    expect_no_regeneration(o);
  }
}

void PlanReuse::expect_no_regeneration(const EngineOptions& o) {
  Engine e(o);
  ASSERT_NE(e.scratch(), nullptr);
  Context ctx(e, 64);
  ctx.eval({1, 7, 300, 42, 5});  // prefill: the M = 5 jobs
  ctx.eval({11});                // first decoded token: the M = 1 jobs
  const uint64_t built = e.scratch()->plans_built();
  const uint64_t submits = e.device()->counters().submits;
  const int tokens = 6;
  for (int i = 0; i < tokens; ++i) ctx.eval({int32_t(20 + i)});
  EXPECT_EQ(e.scratch()->plans_built(), built) << "register commands regenerated during decode";
  const int64_t layers = e.model().config().n_layer;
  EXPECT_EQ(e.device()->counters().submits - submits, uint64_t(tokens * (4 * layers + 1)))
      << "Q/K/V and gate/up are one job each";
}

TEST_F(PlanReuse, GroupedJobsGiveTheCpuInt8Logits) {
  Engine sim(options("sim")), cpu(options("cpu"));
  Context a(sim, 64), b(cpu, 64);
  const std::vector<int32_t> prompt = {1, 7, 300, 42, 5, 99, 250, 3};
  const std::vector<float> la = a.eval_all(prompt), lb = b.eval_all(prompt);
  ASSERT_EQ(la.size(), lb.size());
  EXPECT_EQ(std::memcmp(la.data(), lb.data(), la.size() * sizeof(float)), 0);
  for (int32_t t : {11, 12, 13}) {
    const float* x = a.eval({t});
    const float* y = b.eval({t});
    EXPECT_EQ(std::memcmp(x, y, size_t(a.n_vocab()) * sizeof(float)), 0) << "token " << t;
  }
}

}  // namespace
}  // namespace ork::runtime
