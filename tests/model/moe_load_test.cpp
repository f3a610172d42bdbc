// Loading a MoE model validates its expert keys and tensors: each defect is one ork::Error naming the
// file and the key or tensor at fault.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "gguf/writer.h"
#include "model/model.h"
#include "rewrite_gguf.h"
#include "temp_dir.h"

namespace ork::model {
namespace {

using ork::testing::Edit;
using ork::testing::rewrite;
using ork::testing::TempDir;

class MoeLoad : public ::testing::Test {
 protected:
  void SetUp() override {
    good_ = dir_.file("good.gguf");
    gen::write_model(gen::preset("tiny-qwen3moe"), good_);
    mixtral_ = dir_.file("mixtral.gguf");
    gen::write_model(gen::preset("tiny-mixtral"), mixtral_);
  }
  void expect_error(const std::string& src, const Edit& e, std::initializer_list<const char*> needles) {
    const std::string bad = dir_.file("bad.gguf");
    rewrite(src, bad, e);
    try {
      Model::load(bad);
      ADD_FAILURE() << "no error for " << *needles.begin();
    } catch (const Error& err) {
      const std::string msg = err.what();
      EXPECT_NE(msg.find("bad.gguf"), std::string::npos) << msg;
      for (const char* n : needles) EXPECT_NE(msg.find(n), std::string::npos) << msg;
    }
  }
  TempDir dir_;
  std::string good_, mixtral_;
};

TEST_F(MoeLoad, GoodModelsLoad) {
  EXPECT_TRUE(Model::load(good_)->config().is_moe());
  EXPECT_TRUE(Model::load(mixtral_)->config().is_moe());
}

TEST_F(MoeLoad, ExpertKeys) {
  expect_error(good_, {{"qwen3moe.expert_count"}, {}, nullptr}, {"qwen3moe.expert_count", "needs experts"});
  expect_error(good_, {{"qwen3moe.expert_used_count"}, {}, nullptr}, {"qwen3moe.expert_used_count"});
  expect_error(good_, {{"qwen3moe.expert_used_count"}, {}, [](gguf::Writer& w) {
                 w.add_uint32("qwen3moe.expert_used_count", 9);
               }},
               {"qwen3moe.expert_used_count = 9"});
  expect_error(good_, {{"qwen3moe.expert_count"}, {}, [](gguf::Writer& w) {
                 w.add_uint32("qwen3moe.expert_count", 2000);
               }},
               {"qwen3moe.expert_count = 2000"});
  expect_error(good_, {{"qwen3moe.expert_feed_forward_length"}, {}, [](gguf::Writer& w) {
                 w.add_uint32_array("qwen3moe.expert_feed_forward_length", std::vector<uint32_t>(4, 64));
               }},
               {"qwen3moe.expert_feed_forward_length", "per-layer array"});
}

TEST_F(MoeLoad, ExpertTensors) {
  expect_error(good_, {{}, {"blk.1.ffn_gate_inp.weight"}, nullptr}, {"blk.1.ffn_gate_inp.weight"});
  expect_error(good_, {{}, {"blk.0.ffn_down_exps.weight"}, nullptr}, {"blk.0.ffn_down_exps.weight"});
  // Experts of the wrong width: expert_feed_forward_length disagrees with the tensors.
  expect_error(good_, {{"qwen3moe.expert_feed_forward_length"}, {}, [](gguf::Writer& w) {
                 w.add_uint32("qwen3moe.expert_feed_forward_length", 32);
               }},
               {"ffn_gate_exps.weight", "expected {64, 32, 8}"});
  // A dense architecture that declares experts.
  const std::string qwen2 = dir_.file("qwen2.gguf");
  gen::write_model(gen::preset("tiny-qwen2"), qwen2);
  expect_error(qwen2, {{}, {}, [](gguf::Writer& w) { w.add_uint32("qwen2.expert_count", 4); }},
               {"qwen2.expert_count = 4", "llama, qwen2moe and qwen3moe"});
}

TEST_F(MoeLoad, OlderMixtralLayoutIsRefusedByName) {
  // One 2-D tensor per expert (blk.N.ffn_gate.E.weight) instead of the 3-D ffn_gate_exps.
  const std::vector<float> expert(size_t(64 * 128), 0.01f);
  expect_error(mixtral_, {{}, {"blk.0.ffn_gate_exps.weight"}, [&](gguf::Writer& w) {
                 w.add_tensor("blk.0.ffn_gate.0.weight", quant::Type::F32, {64, 128}, expert.data(),
                              expert.size() * sizeof(float));
               }},
               {"blk.0.ffn_gate.0.weight", "older Mixtral layout"});
}

}  // namespace
}  // namespace ork::model
