// MoE models (Mixtral-style llama, qwen2moe, qwen3moe) on the NPU path (simulated): resident across
// several IOMMU domains with one expert as the unit of placement, and streamed, bit-identical to the
// CPU int8 path — so the greedy tokens are identical on the three.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "runtime/context.h"
#include "runtime/engine.h"
#include "runtime/npu_wtype.h"

namespace ork::runtime {
namespace {

class MoeNpuPath : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    gen::ModelSpec s = gen::preset(GetParam());
    s.n_embd = 256;
    s.n_ff = 256;
    if (s.arch != "llama") s.n_ff_exp = 256;
    if (s.arch == "qwen2moe") s.n_ff_shexp = 256;
    if (s.arch == "qwen3moe") s.head_dim = 64;
    s.weight_type = quant::Type::Q8_0;
    gen::write_model(s, dir_.file("m.gguf"));
  }
  EngineOptions options(const std::string& device, uint32_t domains) {
    EngineOptions o;
    o.model_path = dir_.file("m.gguf");
    o.device = device;
    o.cpu_int8 = device == "cpu";
    o.threads = 2;
    o.npu.sim_window_bytes = 2u << 20;  // a layer's 8 experts (≈ 1.7 MB) do not share one window
    o.npu.sim_domains = domains;
    return o;
  }
  // All-token logits of a prompt, then 6 greedy decode steps; the greedy tokens into *tokens.
  std::vector<float> run(Engine& e, std::vector<int32_t>* tokens) {
    Context ctx(e, 64);
    const std::vector<int32_t> prompt = {1, 7, 300, 42, 5, 99, 250, 3, 17, 18, 400, 77};
    std::vector<float> out = ctx.eval_all(prompt);
    int32_t next = 11;
    for (int i = 0; i < 6; ++i) {
      const float* l = ctx.eval({next});
      out.insert(out.end(), l, l + ctx.n_vocab());
      next = int32_t(std::max_element(l, l + ctx.n_vocab()) - l);
      tokens->push_back(next);
    }
    return out;
  }
  testing::TempDir dir_;
};

TEST_P(MoeNpuPath, ResidentAndStreamedAreBitIdenticalToCpuInt8) {
  Engine cpu(options("cpu", 16));
  std::vector<int32_t> cpu_tokens;
  const auto a = run(cpu, &cpu_tokens);
  for (uint32_t domains : {16u, 1u}) {
    Engine sim(options("sim", domains));
    const weights::Plan* plan = sim.plan();
    ASSERT_NE(plan, nullptr);
    EXPECT_EQ(plan->mode, domains == 1 ? weights::Residency::kStream : weights::Residency::kResident);
    if (domains > 1) {
      // One layer's experts in more than one domain: the expert, not the layer, is the unit.
      const model::LayerWeights& l = sim.model().weights().layers[0];
      std::set<uint32_t> used;
      for (const model::Linear& g : l.exp_gate) used.insert(plan->weights[size_t(g.index)].domain);
      EXPECT_GT(used.size(), 1u);
      for (size_t e = 0; e < l.exp_gate.size(); ++e) {  // an expert's three weights share a domain
        EXPECT_EQ(plan->weights[size_t(l.exp_up[e].index)].domain, plan->weights[size_t(l.exp_gate[e].index)].domain);
        EXPECT_EQ(plan->weights[size_t(l.exp_down[e].index)].domain, plan->weights[size_t(l.exp_gate[e].index)].domain);
      }
    }
    std::vector<int32_t> sim_tokens;
    const auto b = run(sim, &sim_tokens);
    EXPECT_EQ(sim_tokens, cpu_tokens) << domains << " domain(s)";
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0)
        << "logits differ with " << domains << " domain(s)";
  }
}

// Streamed with expert-sized slots (a 4 MiB window: each expert weight one slice, the budget holds
// >= cores + 1 experts) and with experts tiled (a budget of 1.5 experts: slices of a fraction of an
// expert), bit-identical to --cpu-int8 both ways.
TEST_P(MoeNpuPath, StreamedWithExpertSizedSlotsAndTiledExpertsAreBitIdenticalToCpuInt8) {
  Engine cpu(options("cpu", 16));
  std::vector<int32_t> cpu_tokens;
  const auto a = run(cpu, &cpu_tokens);
  const model::LayerWeights& l0 = cpu.model().weights().layers[0];
  uint64_t expert = 0;
  for (const model::Linear* w : {&l0.exp_gate[0], &l0.exp_up[0], &l0.exp_down[0]}) expert += uint64_t(w->n * w->k);
  for (const bool tiled : {false, true}) {
    EngineOptions o = options("sim", 1);
    o.npu.sim_window_bytes = 4u << 20;
    o.residency = weights::Residency::kStream;
    if (tiled) o.wcache_budget_bytes = expert * 3 / 2;
    Engine sim(o);
    const weights::Plan* plan = sim.plan();
    ASSERT_NE(plan, nullptr);
    ASSERT_EQ(plan->mode, weights::Residency::kStream);
    const size_t gate_slices = plan->weights[size_t(l0.exp_gate[0].index)].slices.size();
    if (tiled) {
      EXPECT_EQ(plan->expert_slot_bytes, 0u);
      EXPECT_GT(gate_slices, 1u);
    } else {
      EXPECT_GT(plan->expert_slot_bytes, 0u);
      EXPECT_GE(plan->expert_slots, sim.device()->caps().cores + 1);
      EXPECT_EQ(gate_slices, 1u);
    }
    std::vector<int32_t> sim_tokens;
    const auto b = run(sim, &sim_tokens);
    EXPECT_EQ(sim_tokens, cpu_tokens) << (tiled ? "tiled" : "expert-sized");
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << (tiled ? "tiled" : "expert-sized");
  }
}

// int4 experts (`--npu-wtype i4`, W4A8 by splitting; the streamed Qwen3-30B-A3B figures of
// bench/board_model_moe's `w4a8` rest on them): resident and streamed with expert-sized slots, the
// logits of the CPU int4 path (`--cpu-int4 w4a8`) bit for bit; the slots hold int4 experts (about
// twice as many as int8 ones in the same budget).
TEST_P(MoeNpuPath, Int4ExpertsResidentAndStreamedAreBitIdenticalToCpuInt4) {
  EngineOptions co = options("cpu", 16);
  co.cpu_int8 = false;
  co.cpu_int4 = "w4a8";
  Engine cpu(co);
  std::vector<int32_t> cpu_tokens;
  const auto a = run(cpu, &cpu_tokens);
  uint64_t slots_i8 = 0;
  for (const npu::Dtype wtype : {npu::Dtype::kI8, npu::Dtype::kI4}) {
    for (const bool streamed : {false, true}) {
      EngineOptions o = options("sim", streamed ? 1 : 16);
      o.npu_wtype = wtype == npu::Dtype::kI4 ? NpuWtype::kI4 : NpuWtype::kI8;
      o.npu.sim_window_bytes = 4u << 20;
      if (streamed) o.residency = weights::Residency::kStream;
      if (streamed) o.wcache_budget_bytes = 1u << 20;
      Engine sim(o);
      const weights::Plan* plan = sim.plan();
      ASSERT_NE(plan, nullptr);
      ASSERT_EQ(plan->wtype, wtype);
      EXPECT_EQ(plan->mode, streamed ? weights::Residency::kStream : weights::Residency::kResident);
      if (streamed && wtype == npu::Dtype::kI8) slots_i8 = plan->expert_slots;
      if (wtype == npu::Dtype::kI8) continue;  // only the slot count of the int8 plan is compared
      if (streamed) {
        EXPECT_GT(plan->expert_slot_bytes, 0u);
        EXPECT_GE(plan->expert_slots, 2 * slots_i8 - 1) << "int4 slots " << plan->expert_slots << ", int8 " << slots_i8;
      }
      std::vector<int32_t> sim_tokens;
      const auto b = run(sim, &sim_tokens);
      EXPECT_EQ(sim_tokens, cpu_tokens) << (streamed ? "streamed" : "resident");
      ASSERT_EQ(a.size(), b.size());
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << (streamed ? "streamed" : "resident");
      if (streamed) {
        EXPECT_GT(sim.residency_stats().evictions, 0u);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Presets, MoeNpuPath, ::testing::Values("tiny-mixtral", "tiny-qwen2moe", "tiny-qwen3moe"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace ork::runtime
