// weights::ExpertRoute: the order the prefetcher loads units in when a MoE layer's experts are named
// (exactly by the router, or guessed), and that unnamed experts are never on the way.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "model/model.h"
#include "model/temp_dir.h"
#include "weights/expert_route.h"
#include "weights/plan.h"

namespace ork::weights {
namespace {

class ExpertRouteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gen::ModelSpec s = gen::preset("tiny-mixtral");  // 2 layers of 8 experts
    gen::write_model(s, dir_.file("m.gguf"));
    model_ = model::Model::load(dir_.file("m.gguf"));
    npu::Capabilities c;
    c.name = "test";
    c.simulated = true;
    c.cores = 3;
    c.domains = 1;
    c.window_bytes = 64u << 20;
    PlanOptions o;
    o.residency = Residency::kStream;
    plan_ = make_plan(model_->weights(), c, o);
  }
  // Units of expert e of layer il (its gate, up, down slices).
  std::vector<int32_t> expert_units(size_t il, int32_t e) const {
    const ExpertBlock& b = plan_.expert_blocks[il];
    std::vector<int32_t> u;
    for (int32_t i = b.expert_first[size_t(e)]; i < b.expert_first[size_t(e + 1)]; ++i) u.push_back(i);
    return u;
  }
  int32_t unit_of(const model::Linear& l) const { return plan_.first_unit[size_t(l.index)]; }
  testing::TempDir dir_;
  std::unique_ptr<model::Model> model_;
  Plan plan_;
};

TEST_F(ExpertRouteTest, NothingNamedSkipsEveryExpert) {
  ASSERT_EQ(plan_.expert_blocks.size(), 2u);
  const ExpertRoute r(plan_);
  const auto& layers = model_->weights().layers;
  const std::vector<int32_t> ahead = r.units_ahead(unit_of(layers[0].wo), 1);
  ASSERT_EQ(ahead.size(), 2u);
  EXPECT_EQ(ahead[1], unit_of(layers[1].wq));  // past layer 0's experts to layer 1's attention
  // A whole cycle visits no expert unit.
  for (int32_t u : r.units_ahead(unit_of(layers[0].wq), uint32_t(plan_.units.size()))) {
    EXPECT_EQ(plan_.unit_block[size_t(u)], -1) << u;
  }
}

TEST_F(ExpertRouteTest, NamedExpertsComeInTheirOrderThenTheNextLayer) {
  ExpertRoute r(plan_);
  r.name(0, {1, 6});
  r.name(1, {3});
  const auto& layers = model_->weights().layers;
  std::vector<int32_t> want;
  for (int32_t e : {1, 6}) {
    for (int32_t u : expert_units(0, e)) want.push_back(u);
  }
  for (const model::Linear* l : {&layers[1].wq, &layers[1].wk, &layers[1].wv, &layers[1].wo}) want.push_back(unit_of(*l));
  for (int32_t u : expert_units(1, 3)) want.push_back(u);
  want.push_back(unit_of(model_->weights().output));
  const std::vector<int32_t> ahead = r.units_ahead(unit_of(layers[0].wo), uint32_t(want.size()));
  ASSERT_EQ(ahead.size(), want.size() + 1);
  EXPECT_EQ(std::vector<int32_t>(ahead.begin() + 1, ahead.end()), want);
  // From inside a named expert: the rest of it, then the next named one.
  const std::vector<int32_t> mid = r.units_ahead(expert_units(0, 1)[1], 2);
  EXPECT_EQ(mid[1], expert_units(0, 1)[2]);
  EXPECT_EQ(mid[2], expert_units(0, 6)[0]);
  // A unit of an expert that was not named (a wrong guess being used): on to the next layer.
  EXPECT_EQ(r.units_ahead(expert_units(0, 4).back(), 1)[1], unit_of(layers[1].wq));
  // Renaming replaces: layer 1 now has no experts ahead.
  r.name(1, {});
  EXPECT_EQ(r.units_ahead(unit_of(layers[1].wo), 1)[1], unit_of(model_->weights().output));
}

TEST_F(ExpertRouteTest, RefusesBlocksAndExpertsOutOfRange) {
  ExpertRoute r(plan_);
  EXPECT_THROW(r.name(2, {0}), Error);
  EXPECT_THROW(r.name(0, {8}), Error);
  EXPECT_THROW(r.name(0, {-1}), Error);
}

}  // namespace
}  // namespace ork::weights
