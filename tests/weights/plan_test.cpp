// weights::Plan: IOVA footprints, N-slicing, resident placement along the forward pass, and the
// switch to streaming when the domains run out.
#include <gtest/gtest.h>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "model/model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
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

class PlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const gen::ModelSpec s = testing::small_q8_model();
    gen::write_model(s, dir_.file("m.gguf"));
    model_ = model::Model::load(dir_.file("m.gguf"));
  }
  testing::TempDir dir_;
  std::unique_ptr<model::Model> model_;
};

TEST(IovaFootprint, PageRoundedPowerOfTwo) {
  EXPECT_EQ(iova_footprint(1), 4096u);
  EXPECT_EQ(iova_footprint(4096), 4096u);
  EXPECT_EQ(iova_footprint(4097), 8192u);
  EXPECT_EQ(iova_footprint(64u << 20), 64u << 20);
  EXPECT_EQ(iova_footprint((64u << 20) + 1), 128u << 20);
}

TEST_F(PlanTest, FitsOneDomainWhenTheWindowIsLarge) {
  const Plan p = make_plan(model_->weights(), caps(uint64_t(4) << 30, 16), {});
  EXPECT_EQ(p.mode, Residency::kResident);
  EXPECT_EQ(p.domains_used, 1u);
  EXPECT_EQ(p.units.size(), p.weights.size());  // no weight needs slicing
  uint64_t total = 0;
  for (const auto& w : p.weights) total += w.bytes();
  EXPECT_EQ(p.domain_bytes[0], total);
}

TEST_F(PlanTest, SpreadsLayersOverDomainsInForwardOrder) {
  const Plan p = make_plan(model_->weights(), caps(2u << 20, 16), {});
  ASSERT_EQ(p.mode, Residency::kResident) << p.reason;
  EXPECT_GT(p.domains_used, 1u);
  // Domains never decrease along the forward pass, and a layer's 7 weights share one domain.
  for (size_t i = 1; i < p.weights.size(); ++i) EXPECT_GE(p.weights[i].domain, p.weights[i - 1].domain);
  for (size_t l = 0; l + 7 <= p.weights.size() - 1; l += 7) {
    for (size_t j = 1; j < 7; ++j) EXPECT_EQ(p.weights[l + j].domain, p.weights[l].domain);
  }
  // Each domain holds what the IOVA allocator can place: footprints + scratch + two largest slots.
  for (uint32_t d = 0; d < p.domains_used; ++d) {
    uint64_t fp = 0, big = 0;
    for (const auto& w : p.weights) {
      if (w.domain != d) continue;
      for (const auto& s : w.slices) {
        fp += s.footprint;
        big = std::max(big, s.footprint);
      }
    }
    EXPECT_LE(fp, 2u << 20) << "domain " << d;
  }
}

TEST_F(PlanTest, StreamsWhenTheDomainsRunOut) {
  const Plan p = make_plan(model_->weights(), caps(2u << 20, 1), {});
  EXPECT_EQ(p.mode, Residency::kStream);
  EXPECT_NE(p.reason.find("domains"), std::string::npos) << p.reason;
  EXPECT_EQ(p.domains_used, 1u);
  EXPECT_GT(p.budget_bytes, 0u);
  EXPECT_LE(p.budget_bytes, (2u << 20) / 2);
  // Every slice fits the per-slot size, so (cores + 2) slices fit the budget.
  for (const auto& w : p.weights) {
    for (const auto& s : w.slices) EXPECT_LE(s.bytes, p.max_slice_bytes);
  }
}

TEST_F(PlanTest, ForcedResidentFailsClearlyAndForcedStreamStreams) {
  PlanOptions o;
  o.residency = Residency::kResident;
  try {
    make_plan(model_->weights(), caps(2u << 20, 1), o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be resident"), std::string::npos) << e.what();
  }
  o.residency = Residency::kStream;
  EXPECT_EQ(make_plan(model_->weights(), caps(uint64_t(4) << 30, 16), o).mode, Residency::kStream);
}

TEST_F(PlanTest, LargeWeightsAreSlicedAlongN) {
  PlanOptions o;
  o.residency = Residency::kStream;
  o.budget_bytes = 256u << 10;  // slots of 32 KiB → the 256×512 weights split
  const Plan p = make_plan(model_->weights(), caps(4u << 20, 1), o);
  bool sliced = false;
  for (const auto& w : p.weights) {
    int64_t next = 0;
    for (const auto& s : w.slices) {
      EXPECT_EQ(s.n0, next);
      EXPECT_EQ(s.n0 % 32, 0);
      EXPECT_EQ(s.bytes, packed_bytes(s.n1 - s.n0, w.linear->k));
      next = s.n1;
    }
    EXPECT_EQ(next, w.linear->n);
    sliced |= w.slices.size() > 1;
  }
  EXPECT_TRUE(sliced);
  // Units list every slice once, in forward order.
  size_t u = 0;
  for (size_t w = 0; w < p.weights.size(); ++w) {
    EXPECT_EQ(p.first_unit[w], int32_t(u));
    for (size_t s = 0; s < p.weights[w].slices.size(); ++s, ++u) {
      EXPECT_EQ(p.units[u].weight, int32_t(w));
      EXPECT_EQ(p.units[u].slice, int32_t(s));
    }
  }
  EXPECT_EQ(u, p.units.size());
}

TEST(PlanLargeOutput, AnOutputWeightOfHalfAWindowStaysResident) {
  // Output 4096 × 256 int8 = 1 MiB, half of a 2 MiB window: in quarter-window slices it does not fit
  // a domain of its own (the whole model used to stream); its slices are made finer instead.
  gen::ModelSpec s = testing::small_q8_model();
  s.n_vocab = 4096;
  testing::TempDir dir;
  gen::write_model(s, dir.file("m.gguf"));
  const auto model = model::Model::load(dir.file("m.gguf"));
  const Plan p = make_plan(model->weights(), caps(2u << 20, 16), {});
  ASSERT_EQ(p.mode, Residency::kResident) << p.reason;
  const WeightPlan& out = p.weights.back();
  EXPECT_EQ(out.linear->n, 4096);
  EXPECT_GT(out.slices.size(), 2u);  // finer than the quarter-window slices
  for (const Slice& sl : out.slices) EXPECT_LT(sl.bytes, (2u << 20) / 4);
  EXPECT_GT(out.domain, p.weights.front().domain);  // a domain of its own, after the layers
  // The layers kept their quarter-window slicing.
  EXPECT_EQ(p.weights.front().slices.size(), 1u);
}

TEST(Residency, ParsesNames) {
  EXPECT_EQ(parse_residency("auto"), Residency::kAuto);
  EXPECT_EQ(parse_residency("stream"), Residency::kStream);
  EXPECT_THROW(parse_residency("always"), Error);
}

}  // namespace
}  // namespace ork::weights
