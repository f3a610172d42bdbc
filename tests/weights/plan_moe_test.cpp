// weights::Plan for MoE models: expert-sized streaming slots (one slice per expert weight, the
// budget holding budget / expert_bytes experts, >= cores + 1), tiling only when an expert exceeds
// budget / (cores + 1), and the expert blocks the prefetcher follows.
#include <gtest/gtest.h>

#include "gen_model/gen_model.h"
#include "model/model.h"
#include "model/temp_dir.h"
#include "weights/packed.h"
#include "weights/plan.h"

namespace ork::weights {
namespace {

npu::Capabilities caps(uint64_t window, uint32_t domains, uint32_t cores = 3) {
  npu::Capabilities c;
  c.name = "test";
  c.simulated = true;
  c.cores = cores;
  c.domains = domains;
  c.window_bytes = window;
  return c;
}

// tiny-mixtral, 256 wide: each expert weight 256 × 256 int8, an expert ≈ 197 KB packed.
class PlanMoeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gen::ModelSpec s = gen::preset("tiny-mixtral");
    s.n_embd = 256;
    s.n_ff = 256;
    s.weight_type = quant::Type::Q8_0;
    gen::write_model(s, dir_.file("m.gguf"));
    model_ = model::Model::load(dir_.file("m.gguf"));
  }
  uint64_t expert_bytes() const {
    const model::LayerWeights& l = model_->weights().layers[0];
    uint64_t b = 0;
    for (const model::Linear* w : {&l.exp_gate[0], &l.exp_up[0], &l.exp_down[0]}) b += packed_bytes(w->n, w->k, npu::Dtype::kI8);
    return b;
  }
  testing::TempDir dir_;
  std::unique_ptr<model::Model> model_;
};

TEST_F(PlanMoeTest, StreamedExpertsGetSlotsOfTheirOwnSize) {
  PlanOptions o;
  o.residency = Residency::kStream;
  const npu::Capabilities c = caps(4u << 20, 1);
  const Plan p = make_plan(model_->weights(), c, o);
  ASSERT_EQ(p.mode, Residency::kStream);
  ASSERT_GT(p.expert_slot_bytes, 0u) << "budget " << p.budget_bytes;
  EXPECT_EQ(p.expert_slot_bytes, expert_bytes());
  EXPECT_EQ(p.expert_slots, p.budget_bytes / p.expert_slot_bytes);
  EXPECT_GE(p.expert_slots, c.cores + 1);
  // Each expert weight is one slice: an expert is three units of its native size.
  for (const model::LayerWeights& l : model_->weights().layers) {
    for (size_t e = 0; e < l.exp_gate.size(); ++e) {
      for (const model::Linear* w : {&l.exp_gate[e], &l.exp_up[e], &l.exp_down[e]}) {
        const WeightPlan& wp = p.weights[size_t(w->index)];
        ASSERT_EQ(wp.slices.size(), 1u) << w->name();
        EXPECT_EQ(wp.slices[0].bytes, packed_bytes(w->n, w->k, npu::Dtype::kI8));
      }
    }
  }
  // The prefetch queue is as deep as the budget holds expert weights, beside the one in use.
  EXPECT_GE(p.prefetch_slots, c.cores + 1);
  const model::Linear& g = model_->weights().layers[0].exp_gate[0];
  EXPECT_EQ(p.prefetch_slots, p.budget_bytes / packed_bytes(g.n, g.k, npu::Dtype::kI8) - 1);
}

TEST_F(PlanMoeTest, AnExpertLargerThanABudgetShareIsTiled) {
  PlanOptions o;
  o.residency = Residency::kStream;
  o.budget_bytes = expert_bytes();  // < (cores + 1) experts: slices of a fifth of it
  const Plan p = make_plan(model_->weights(), caps(4u << 20, 1), o);
  ASSERT_EQ(p.mode, Residency::kStream);
  EXPECT_EQ(p.expert_slot_bytes, 0u);
  EXPECT_EQ(p.expert_slots, 0u);
  EXPECT_EQ(p.prefetch_slots, 4u);  // cores + 1
  const model::Linear& g = model_->weights().layers[0].exp_gate[0];
  EXPECT_GT(p.weights[size_t(g.index)].slices.size(), 1u);
  for (const WeightPlan& w : p.weights) {
    for (const Slice& s : w.slices) EXPECT_LE(s.bytes, p.max_slice_bytes);
  }
}

TEST_F(PlanMoeTest, ExpertBlocksNameEachExpertsUnits) {
  for (const Residency r : {Residency::kResident, Residency::kStream}) {
    PlanOptions o;
    o.residency = r;
    o.budget_bytes = r == Residency::kStream ? 3 * expert_bytes() : o.budget_bytes;  // tiled experts too
    const Plan p = make_plan(model_->weights(), caps(64u << 20, 1), o);
    const auto& layers = model_->weights().layers;
    ASSERT_EQ(p.expert_blocks.size(), layers.size());
    ASSERT_EQ(p.unit_block.size(), p.units.size());
    for (size_t b = 0; b < p.expert_blocks.size(); ++b) {
      const ExpertBlock& blk = p.expert_blocks[b];
      const model::LayerWeights& l = layers[size_t(blk.layer)];
      ASSERT_EQ(blk.expert_first.size(), l.exp_gate.size() + 1);
      for (size_t e = 0; e < l.exp_gate.size(); ++e) {
        for (int32_t u = blk.expert_first[e]; u < blk.expert_first[e + 1]; ++u) {
          const int32_t w = p.units[size_t(u)].weight;
          EXPECT_TRUE(w == l.exp_gate[e].index || w == l.exp_up[e].index || w == l.exp_down[e].index);
          EXPECT_EQ(p.unit_block[size_t(u)], int32_t(b));
        }
      }
    }
    // Attention units are in no block.
    EXPECT_EQ(p.unit_block[size_t(p.first_unit[size_t(layers[0].wq.index)])], -1);
  }
}

TEST(PlanDense, HasNoExpertSlotsOrBlocks) {
  testing::TempDir dir;
  gen::write_model(gen::preset("tiny-llama"), dir.file("d.gguf"));
  const auto m = model::Model::load(dir.file("d.gguf"));
  PlanOptions o;
  o.residency = Residency::kStream;
  const Plan p = make_plan(m->weights(), caps(4u << 20, 1), o);
  EXPECT_EQ(p.expert_slot_bytes, 0u);
  EXPECT_TRUE(p.expert_blocks.empty());
  EXPECT_EQ(p.prefetch_slots, 4u);
}

}  // namespace
}  // namespace ork::weights
