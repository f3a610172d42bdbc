// ork_query_experts through the C API: a dense model has none; a Mixtral-style model's experts on the
// CPU, resident on the simulated NPU and streamed with expert-sized slots; what a context's passes
// ran; the growing struct's size rule (a shorter or longer caller struct); bad input.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "ork/ork.h"

namespace {

const std::vector<int32_t> kPrompt = {1, 7, 300, 42, 5, 99, 250, 3};

class ApiExperts : public ::testing::Test {
 protected:
  void SetUp() override {
    ork::gen::ModelSpec s = ork::gen::preset("tiny-mixtral");  // 2 layers of 8 experts, 2 used
    s.n_embd = 256;
    s.n_ff = 256;
    s.weight_type = ork::quant::Type::Q8_0;
    ork::gen::write_model(s, moe_ = dir_.file("moe.gguf"));
    ork::gen::ModelSpec d = ork::gen::preset("default");
    ork::gen::write_model(d, dense_ = dir_.file("dense.gguf"));
  }
  ork_model* load(const std::string& path, const char* device, const char* residency, uint64_t window_mib) {
    ork_model_options o;
    ork_model_options_init(&o);
    o.device = device;
    o.residency = residency;
    o.threads = 2;
    o.sim_window_bytes = window_mib << 20;
    o.sim_domains = 4;
    ork_model* m = nullptr;
    EXPECT_EQ(ork_model_load(path.c_str(), &o, &m), ORK_OK) << ork_last_error();
    return m;
  }
  static ork_expert_info query(const ork_model* m, const ork_context* c) {
    ork_expert_info x;
    ork_expert_info_init(&x);
    EXPECT_EQ(ork_query_experts(m, c, &x), ORK_OK) << ork_last_error();
    EXPECT_EQ(x.struct_size, sizeof(ork_expert_info));
    return x;
  }
  ork::testing::TempDir dir_;
  std::string moe_, dense_;
};

// GGUF bytes of one q8_0 expert: gate and up (256 × 256) and down (256 × 256), 34 bytes per 32 weights.
constexpr uint64_t kGgufExpertBytes = 3 * 256 * 256 / 32 * 34;

TEST_F(ApiExperts, ADenseModelHasNone) {
  ork_model* m = load(dense_, "cpu", nullptr, 0);
  const ork_expert_info x = query(m, nullptr);
  EXPECT_EQ(x.placement, uint32_t(ORK_EXPERTS_NONE));
  EXPECT_EQ(x.n_moe_layers, 0u);
  EXPECT_EQ(x.experts_total, 0u);
  EXPECT_EQ(x.expert_bytes, 0u);
  ork_model_free(m);
}

TEST_F(ApiExperts, OnTheCpuAContextCountsTheExpertsItRan) {
  ork_model* m = load(moe_, "cpu", nullptr, 0);
  const ork_expert_info x = query(m, nullptr);
  EXPECT_EQ(x.placement, uint32_t(ORK_EXPERTS_CPU));
  EXPECT_EQ(x.n_moe_layers, 2u);
  EXPECT_EQ(x.n_expert, 8u);
  EXPECT_EQ(x.n_expert_used, 2u);
  EXPECT_EQ(x.experts_total, 16u);
  EXPECT_EQ(x.expert_bytes, kGgufExpertBytes);
  EXPECT_EQ(x.experts_resident, 0u);
  EXPECT_EQ(x.experts_streamed, 0u);
  EXPECT_EQ(x.tokens_routed, 0u);  // no context named
  ork_context* c = nullptr;
  ASSERT_EQ(ork_context_create(m, 32, &c), ORK_OK) << ork_last_error();
  const float* l = nullptr;
  ASSERT_EQ(ork_eval(c, kPrompt.data(), int64_t(kPrompt.size()), &l), ORK_OK) << ork_last_error();
  const ork_expert_info y = query(nullptr, c);
  EXPECT_EQ(y.tokens_routed, kPrompt.size());
  // Each layer runs every expert some token chose, once: at least 2, at most 8 of them.
  EXPECT_GE(y.expert_runs, 2u * 2u);
  EXPECT_LE(y.expert_runs, 2u * 8u);
  EXPECT_EQ(y.expert_bytes_read, y.expert_runs * kGgufExpertBytes);  // only the experts that ran
  ork_context_free(c);
  ork_model_free(m);
}

TEST_F(ApiExperts, ResidentOnTheDeviceEveryExpertIsThere) {
  ork_model* m = load(moe_, "sim", "resident", 64);
  const ork_expert_info x = query(m, nullptr);
  EXPECT_EQ(x.placement, uint32_t(ORK_EXPERTS_RESIDENT));
  EXPECT_GE(x.resident_domains, 1u);
  EXPECT_EQ(x.experts_resident, 16u);
  EXPECT_EQ(x.experts_streamed, 0u);
  EXPECT_EQ(x.expert_slot_bytes, 0u);
  EXPECT_GT(x.expert_bytes, 3u * 256u * 256u - 1);  // int8 and padding: at least a byte per weight
  ork_model_free(m);
}

TEST_F(ApiExperts, ConcurrentStreamedExpertsUseExpertSizedSlots) {
  ork_model* m = load(moe_, "sim", "stream", 4);  // the prefetcher loads on its own thread
  const ork_expert_info x = query(m, nullptr);
  EXPECT_EQ(x.placement, uint32_t(ORK_EXPERTS_STREAMED));
  EXPECT_EQ(x.experts_streamed, 16u);
  EXPECT_EQ(x.expert_slot_bytes, x.expert_bytes);
  EXPECT_GE(x.expert_slots, 4u);  // >= cores + 1
  EXPECT_LT(x.expert_slots, 16u) << "the budget holds every expert: nothing streams";
  ork_context* c = nullptr;
  ASSERT_EQ(ork_context_create(m, 32, &c), ORK_OK) << ork_last_error();
  const float* l = nullptr;
  ASSERT_EQ(ork_eval(c, kPrompt.data(), int64_t(kPrompt.size()), &l), ORK_OK) << ork_last_error();
  const ork_expert_info y = query(nullptr, c);
  EXPECT_GT(y.expert_runs, 0u);
  EXPECT_LE(y.experts_resident, uint64_t(y.expert_slots));  // the budget bounds what is on the device
  ork_context_free(c);
  ork_model_free(m);
}

TEST_F(ApiExperts, AShorterCallerStructIsFilledOnlyAsFarAsItReaches) {
  ork_model* m = load(moe_, "cpu", nullptr, 0);
  // A caller whose header ended before expert_slot_bytes: the bytes after it are not touched.
  const uint32_t old_size = uint32_t(offsetof(ork_expert_info, expert_slot_bytes));
  std::vector<unsigned char> buf(sizeof(ork_expert_info) + 16, 0xAB);
  ork_expert_info* x = reinterpret_cast<ork_expert_info*>(buf.data());
  x->struct_size = old_size;
  ASSERT_EQ(ork_query_experts(m, nullptr, x), ORK_OK) << ork_last_error();
  EXPECT_EQ(x->struct_size, old_size);
  EXPECT_EQ(x->n_expert, 8u);
  EXPECT_EQ(x->expert_bytes, kGgufExpertBytes);
  for (size_t i = old_size; i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xAB) << "byte " << i;
  // A caller whose struct is longer (a newer header): ork fills what it knows and says how much.
  std::fill(buf.begin(), buf.end(), 0xAB);
  x->struct_size = uint32_t(buf.size());
  ASSERT_EQ(ork_query_experts(m, nullptr, x), ORK_OK) << ork_last_error();
  EXPECT_EQ(x->struct_size, sizeof(ork_expert_info));
  EXPECT_EQ(x->experts_total, 16u);
  for (size_t i = sizeof(ork_expert_info); i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xAB) << "byte " << i;
  ork_model_free(m);
}

TEST_F(ApiExperts, BadInputGivesAStatusAndAMessage) {
  ork_model* m = load(moe_, "cpu", nullptr, 0);
  ork_expert_info x;
  ork_expert_info_init(&x);
  x.struct_size = 4;
  x.n_expert = 77;
  EXPECT_EQ(ork_query_experts(m, nullptr, &x), ORK_ERR_INVALID_ARG);
  EXPECT_NE(std::string(ork_last_error()).find("struct_size 4"), std::string::npos) << ork_last_error();
  EXPECT_EQ(x.n_expert, 77u);  // nothing written on failure
  ork_expert_info_init(&x);
  EXPECT_EQ(ork_query_experts(nullptr, nullptr, &x), ORK_ERR_INVALID_ARG);
  EXPECT_EQ(ork_query_experts(m, nullptr, nullptr), ORK_ERR_INVALID_ARG);
  int fake = 0;
  EXPECT_EQ(ork_query_experts(reinterpret_cast<ork_model*>(&fake), nullptr, &x), ORK_ERR_BAD_HANDLE);
  ork_expert_info_init(nullptr);  // a no-op, not a crash
  ork_model_free(m);
}

}  // namespace
