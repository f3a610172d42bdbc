// gemma2, gemma3 and phi3 on the NPU path (simulated): resident and streamed, bit-identical to the
// CPU int8 path, as llama's are (npu_path_test.cpp) — phi3's fused QKV and gate/up go to the device
// as the row views Weights splits them into.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "runtime/context.h"
#include "runtime/engine.h"

namespace ork::runtime {
namespace {

class ArchNpuPath : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    gen::ModelSpec s = gen::preset(GetParam());
    s.n_embd = 256;
    s.n_ff = 512;
    s.weight_type = quant::Type::Q8_0;
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
  // All-token logits of a prompt longer than the presets' windows of 8, then 6 greedy decode steps.
  std::vector<float> run(Engine& e) {
    Context ctx(e, 64);
    const std::vector<int32_t> prompt = {1, 7, 300, 42, 5, 99, 250, 3, 17, 18, 400, 77};
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

TEST_P(ArchNpuPath, ResidentAndStreamedAreBitIdenticalToCpuInt8) {
  Engine cpu(options("cpu", 16));
  const auto a = run(cpu);
  for (uint32_t domains : {16u, 1u}) {
    Engine sim(options("sim", domains));
    ASSERT_NE(sim.plan(), nullptr);
    EXPECT_EQ(sim.plan()->mode, domains == 1 ? weights::Residency::kStream : weights::Residency::kResident);
    const auto b = run(sim);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0)
        << "logits differ with " << domains << " domain(s)";
  }
}

INSTANTIATE_TEST_SUITE_P(Presets, ArchNpuPath, ::testing::Values("tiny-gemma2", "tiny-gemma3", "tiny-phi3"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace ork::runtime
