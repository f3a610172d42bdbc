// The NPU path end to end on the simulator: resident across several IOMMU domains with no churn,
// streaming through one domain with evictions, both bit-identical to the CPU int8 path.
#include <gtest/gtest.h>

#include <cstring>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "runtime/context.h"
#include "runtime/engine.h"
#include "runtime/generator.h"
#include "runtime/sampler.h"

namespace ork::runtime {
namespace {

class NpuPath : public ::testing::Test {
 protected:
  void SetUp() override {
    const gen::ModelSpec s = testing::small_q8_model();
    gen::write_model(s, dir_.file("m.gguf"));
  }
  EngineOptions options(const std::string& device, uint32_t domains) {
    EngineOptions o;
    o.model_path = dir_.file("m.gguf");
    o.device = device;
    o.cpu_int8 = device == "cpu";
    o.threads = 2;
    o.npu.sim_window_bytes = 2u << 20;
    o.npu.sim_domains = domains;
    return o;
  }
  // All-token logits of a prompt, then the logits of 6 greedy decode steps.
  std::vector<float> run(Engine& e) {
    Context ctx(e, 64);
    const std::vector<int32_t> prompt = {1, 7, 300, 42, 5, 99, 250, 3};
    std::vector<float> out = ctx.eval_all(prompt);
    int32_t next = 11;
    for (int i = 0; i < 6; ++i) {
      const float* l = ctx.eval({next});
      out.insert(out.end(), l, l + ctx.n_vocab());
      next = int32_t(std::max_element(l, l + ctx.n_vocab()) - l);
    }
    return out;
  }
  testing::TempDir dir_;
};

TEST_F(NpuPath, ResidentAcrossDomainsIsBitIdenticalToCpuInt8WithNoChurn) {
  Engine cpu(options("cpu", 16));
  Engine sim(options("sim", 16));
  ASSERT_NE(sim.plan(), nullptr);
  EXPECT_EQ(sim.plan()->mode, weights::Residency::kResident);
  EXPECT_GT(sim.plan()->domains_used, 1u);
  const auto a = run(cpu);
  const auto b = run(sim);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << "logits differ";
  const ResidencyStats s = sim.residency_stats();
  EXPECT_EQ(s.mode, "resident");
  EXPECT_EQ(s.evictions, 0u);
  EXPECT_EQ(s.bytes_streamed, 0u);
  EXPECT_EQ(s.loads, sim.plan()->units.size());
  EXPECT_GE(s.domain_switches, uint64_t(sim.plan()->domains_used));  // domains cycle per token
}

TEST_F(NpuPath, StreamingThroughOneDomainIsBitIdenticalToo) {
  Engine cpu(options("cpu", 1));
  Engine sim(options("sim", 1));
  ASSERT_EQ(sim.plan()->mode, weights::Residency::kStream);
  const auto a = run(cpu);
  const auto b = run(sim);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << "logits differ";
  const ResidencyStats s = sim.residency_stats();
  EXPECT_EQ(s.mode, "stream");
  EXPECT_GT(s.evictions, 0u);
  EXPECT_GT(s.bytes_streamed, 0u);
  // No .orkpack: nothing is served from a pack; weights are packed from the GGUF. (packed and loads
  // need not match: a load may reuse the previous weight's packed bytes, and a prefetch may pack and
  // then give up when the window has no room.)
  EXPECT_EQ(s.loaded, 0u);
  EXPECT_GT(s.packed, 0u);
  // The loads in the board model's time: one per acquire that found its unit loaded again (a
  // prefetch the cache evicted before use, or one still ahead at the end, is not), the waits no more
  // than the loads.
  ASSERT_TRUE(s.modeled);
  ASSERT_NE(sim.modeled_loads(), nullptr);
  EXPECT_GT(sim.modeled_loads()->stats().loads, s.loads / 2);
  EXPECT_LE(sim.modeled_loads()->stats().loads, s.loads);
  EXPECT_GT(s.modeled_load_ms, 0.0);
  EXPECT_GT(s.modeled_stall_ms, 0.0);  // at least the first unit waits
  EXPECT_LE(s.modeled_stall_ms, s.modeled_load_ms);
  EXPECT_NEAR(s.modeled_prefetch_hidden_fraction, 1.0 - s.modeled_stall_ms / s.modeled_load_ms, 1e-12);
  EXPECT_FALSE(cpu.residency_stats().modeled);
}

// Without an .orkpack, a streamed weight is packed once and kept in host memory (weights::HostPacked)
// when the host budget holds them all (the default), not again on every load; a smaller host budget
// keeps what it holds and repacks the rest. The logits are the same bit for bit whatever the budget.
TEST_F(NpuPath, StreamingThroughOneDomainPacksEachWeightOnce) {
  Engine cpu(options("cpu", 1));
  const auto want = run(cpu);
  EngineOptions o = options("sim", 1);
  Engine all(o);
  ASSERT_EQ(all.plan()->mode, weights::Residency::kStream);
  const uint64_t n_weights = all.plan()->weights.size();
  const auto a = run(all);
  const ResidencyStats s = all.residency_stats();
  EXPECT_GT(s.evictions, 0u);  // the device budget still streams
  EXPECT_EQ(s.packed, n_weights);
  EXPECT_EQ(s.host_evictions, 0u);
  EXPECT_GT(s.host_hits, 0u);
  EXPECT_GE(s.host_budget_bytes, s.host_bytes);
  EXPECT_GT(s.host_bytes, all.plan()->weight_bytes());  // every weight (and its scales) held
  EXPECT_EQ(std::memcmp(a.data(), want.data(), a.size() * sizeof(float)), 0) << "logits differ";

  o.wcache_host_bytes = s.host_bytes / 3;  // a third of the model held, the rest repacked
  Engine third(o);
  const auto b = run(third);
  const ResidencyStats t = third.residency_stats();
  EXPECT_GT(t.packed, n_weights);
  EXPECT_GT(t.host_evictions, 0u);
  EXPECT_EQ(std::memcmp(b.data(), want.data(), b.size() * sizeof(float)), 0) << "logits differ";

  o.wcache_host_bytes = 0;  // only the last weight: its slices pack it once (the behaviour before)
  Engine none(o);
  const auto c = run(none);
  EXPECT_GT(none.residency_stats().packed, t.packed);
  EXPECT_EQ(std::memcmp(c.data(), want.data(), c.size() * sizeof(float)), 0) << "logits differ";
}

TEST_F(NpuPath, GeneratedTokensMatchAcrossDevices) {
  std::vector<std::vector<int32_t>> outs;
  for (auto [dev, domains] : {std::pair<const char*, uint32_t>{"cpu", 16}, {"sim", 16}, {"sim", 1}}) {
    Engine e(options(dev, domains));
    Context ctx(e, 64);
    SamplerParams p;
    p.temperature = 0;
    Sampler sampler(p);
    outs.push_back(generate(ctx, sampler, {1, 2, 3}, 16, [](int32_t) { return true; }).tokens);
  }
  EXPECT_EQ(outs[0], outs[1]);
  EXPECT_EQ(outs[0], outs[2]);
}

}  // namespace
}  // namespace ork::runtime
