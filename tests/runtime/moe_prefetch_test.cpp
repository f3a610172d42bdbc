// Routed prefetch of a streamed MoE model on the simulated NPU: prefill loads exactly the experts its
// batch's router picked (no other expert comes onto the device), decode prefetches the experts the
// predictor guesses for the next layer, and the logits stay bit-identical to --cpu-int8. The
// prefetcher loads on its own thread: "Concurrent" in the names.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "runtime/context.h"
#include "runtime/engine.h"

namespace ork::runtime {
namespace {

class MoePrefetch : public ::testing::Test {
 protected:
  void SetUp() override {
    gen::ModelSpec s = gen::preset("tiny-mixtral");  // 2 layers of 8 experts, 2 used
    s.n_embd = 256;
    s.n_ff = 256;
    s.routing_skew = 4.0f;
    s.weight_type = quant::Type::Q8_0;
    gen::write_model(s, dir_.file("m.gguf"));
  }
  EngineOptions options(const std::string& device, uint32_t window_mib) {
    EngineOptions o;
    o.model_path = dir_.file("m.gguf");
    o.device = device;
    o.cpu_int8 = device == "cpu";
    o.threads = 2;
    o.residency = device == "cpu" ? weights::Residency::kAuto : weights::Residency::kStream;
    o.npu.sim_window_bytes = uint64_t(window_mib) << 20;
    o.npu.sim_domains = 1;
    return o;
  }
  testing::TempDir dir_;
};

TEST_F(MoePrefetch, ConcurrentStreamedPrefillLoadsOnlyTheRoutedExperts) {
  Engine sim(options("sim", 64));  // a budget that holds every weight: nothing is evicted
  const weights::Plan& plan = *sim.plan();
  ASSERT_EQ(plan.mode, weights::Residency::kStream);
  ASSERT_GT(plan.expert_slot_bytes, 0u);
  size_t dense_units = 0;
  for (int32_t b : plan.unit_block) dense_units += b < 0;
  Context ctx(sim, 32);
  ctx.eval_all({1, 7});  // 2 tokens × 2 experts: at most 4 of a layer's 8 experts
  sim.wait_prefetch_idle();
  const model::MoeStats* m = ctx.moe_stats();
  ASSERT_NE(m, nullptr);
  ASSERT_LT(m->expert_runs, uint64_t(plan.expert_blocks.size() * 8));  // some experts ran nowhere
  const ResidencyStats r = sim.residency_stats();
  EXPECT_EQ(r.evictions, 0u);
  // Every dense unit once, each expert that ran once (3 units: gate, up, down), nothing else.
  EXPECT_EQ(r.loads, dense_units + 3 * m->expert_runs);
  EXPECT_EQ(r.prefetch_wasted, 0u);
}

TEST_F(MoePrefetch, ConcurrentDecodePrefetchesGuessedExpertsAndTheLogitsStayBitIdentical) {
  const std::vector<int32_t> prompt = {1, 7, 300, 42, 5, 99, 250, 3};
  auto run = [&](Engine& e) {
    Context ctx(e, 64);
    std::vector<float> out = ctx.eval_all(prompt);
    int32_t next = 11;
    for (int i = 0; i < 24; ++i) {
      const float* l = ctx.eval({next});
      out.insert(out.end(), l, l + ctx.n_vocab());
      next = int32_t(std::max_element(l, l + ctx.n_vocab()) - l);
    }
    return out;
  };
  Engine cpu(options("cpu", 4));
  const std::vector<float> a = run(cpu);
  Engine sim(options("sim", 4));  // a budget of a few experts: decode streams them
  ASSERT_GT(sim.plan()->expert_slot_bytes, 0u);
  const std::vector<float> b = run(sim);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  sim.wait_prefetch_idle();
  const ResidencyStats r = sim.residency_stats();
  EXPECT_GT(r.evictions, 0u) << "the budget held every weight: nothing streamed";
  EXPECT_GT(r.prefetch_hits, 0u);
  EXPECT_LE(r.prefetch_wasted_bytes, r.bytes_streamed + sim.plan()->budget_bytes);
  std::printf("decode prefetch: hits %llu late %llu misses %llu wasted %llu (%llu bytes), %llu loads\n",
              (unsigned long long)r.prefetch_hits, (unsigned long long)r.prefetch_late,
              (unsigned long long)r.prefetch_misses, (unsigned long long)r.prefetch_wasted,
              (unsigned long long)r.prefetch_wasted_bytes, (unsigned long long)r.loads);
}

}  // namespace
}  // namespace ork::runtime

namespace ork::runtime {
namespace {

// Modeled board time (weights/modeled_loads.h, profile rk3588-public-v1): a streamed prefill of a
// MoE model with many experts loads each routed expert once it is named by the router, while the
// experts before it compute, so only the first expert of each layer is not hidden.
TEST(MoePrefetchModeled, ConcurrentStreamedPrefillHidesNinetyPercentOfExpertLoading) {
  testing::TempDir dir;
  gen::ModelSpec s = gen::preset("tiny-mixtral");
  s.n_embd = 256;
  s.n_ff = 256;
  s.n_expert = 32;
  s.n_expert_used = 4;
  s.weight_type = quant::Type::Q8_0;
  gen::write_model(s, dir.file("m.gguf"));
  EngineOptions o;
  o.model_path = dir.file("m.gguf");
  o.device = "sim";
  o.threads = 2;
  o.residency = weights::Residency::kStream;
  o.npu.sim_window_bytes = 64u << 20;  // the budget holds every weight: what loads is deterministic
  o.npu.sim_domains = 1;
  Engine sim(o);
  ASSERT_GT(sim.plan()->expert_slot_bytes, 0u);
  Context ctx(sim, 64);
  std::vector<int32_t> prompt;
  for (int32_t i = 0; i < 32; ++i) prompt.push_back(1 + (i * 37) % 500);
  ctx.eval_all(prompt);
  sim.wait_prefetch_idle();
  const ResidencyStats r = sim.residency_stats();
  ASSERT_TRUE(r.modeled);
  EXPECT_GT(r.modeled_load_ms, 0.0);
  std::printf("MODELED (rk3588-public-v1) streamed prefill of 32 tokens: %llu loads, load %.4f ms, stall %.4f ms, "
              "hidden %.3f\n", (unsigned long long)r.loads, r.modeled_load_ms, r.modeled_stall_ms,
              r.modeled_prefetch_hidden_fraction);
  EXPECT_GE(r.modeled_prefetch_hidden_fraction, 0.9);
}

}  // namespace
}  // namespace ork::runtime
