// "Allocate outside" through the C API: the plan query before loading, the weights placed in caller
// memfds (one per planned domain), the same outputs as ork's own allocation, no weight buffer of
// ork's on the device, and the memory that cannot be used.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "ork/ork.h"

namespace {

const std::vector<int32_t> kPrompt = {1, 7, 300, 42, 5, 99, 250, 3};

class ApiWeightMem : public ::testing::Test {
 protected:
  void SetUp() override {
    ork::gen::ModelSpec s = ork::testing::small_q8_model();
    s.seed = 5;
    path_ = dir_.file("m.gguf");
    ork::gen::write_model(s, path_);
    ork_model_options_init(&opts_);
    opts_.device = "sim";
    opts_.threads = 2;
    opts_.sim_window_bytes = uint64_t(2) << 20;  // about one layer per domain: several domains
  }
  void TearDown() override {
    for (size_t i = 0; i < fds_.size(); ++i) {
      munmap(maps_[i], sizes_[i]);
      close(fds_[i]);
    }
  }
  // A memfd of `size` bytes (mapped by the test too), one per domain.
  void add_memfd(uint64_t size) {
    const int fd = memfd_create("ork-weights", 0);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, off_t(size)), 0);
    void* p = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    ASSERT_NE(p, MAP_FAILED);
    fds_.push_back(fd);
    sizes_.push_back(size);
    maps_.push_back(static_cast<uint8_t*>(p));
  }
  ork_model* load(const ork_model_options& o, int expect = ORK_OK) {
    ork_model* m = nullptr;
    EXPECT_EQ(ork_model_load(path_.c_str(), &o, &m), expect) << ork_last_error();
    return m;
  }
  // Greedy generation of 8 tokens after the prompt, and the prompt's last logits.
  std::pair<std::vector<int32_t>, std::vector<float>> run(ork_model* m) {
    ork_context* c = nullptr;
    EXPECT_EQ(ork_context_create(m, 64, &c), ORK_OK);
    const float* l = nullptr;
    EXPECT_EQ(ork_eval(c, kPrompt.data(), int64_t(kPrompt.size()), &l), ORK_OK) << ork_last_error();
    std::vector<float> logits(l, l + 512);
    ork_context_reset(c);
    ork_sampler_params sp;
    ork_sampler_params_init(&sp);
    sp.temperature = 0;
    ork_sampler* s = nullptr;
    EXPECT_EQ(ork_sampler_create(&sp, &s), ORK_OK);
    std::vector<int32_t> out(8);
    int64_t n = 0;
    EXPECT_EQ(ork_generate(c, s, kPrompt.data(), int64_t(kPrompt.size()), 8, out.data(), 8, &n, nullptr, nullptr),
              ORK_OK)
        << ork_last_error();
    out.resize(size_t(n));
    ork_sampler_free(s);
    ork_context_free(c);
    return {out, logits};
  }
  ork::testing::TempDir dir_;
  std::string path_;
  ork_model_options opts_;
  std::vector<int> fds_;
  std::vector<uint64_t> sizes_;
  std::vector<uint8_t*> maps_;
};

TEST_F(ApiWeightMem, WeightsInCallerMemoryGiveTheSameTokensAndNoWeightBufferOfOrks) {
  ork_mem_info plan{};
  ASSERT_EQ(ork_query_plan(path_.c_str(), &opts_, 64, &plan), ORK_OK) << ork_last_error();
  ASSERT_GE(plan.n_domains, 2u) << "the window should force several domains";

  ork_model* own = load(opts_);
  const auto expected = run(own);
  ork_mem_info mo{};
  ASSERT_EQ(ork_query_mem(own, nullptr, &mo), ORK_OK);
  EXPECT_EQ(mo.weight_bytes, plan.weight_bytes);  // the plan's sizes are what loading takes
  EXPECT_EQ(mo.weight_external_bytes, 0u);
  ork_model_free(own);

  std::vector<uint64_t> sizes;
  for (uint32_t d = 0; d < plan.n_domains; ++d) {
    ASSERT_GT(plan.domains[d].weight_bytes, 0u);
    sizes.push_back(plan.domains[d].weight_bytes);
    add_memfd(sizes.back());
  }
  ork_model_options o = opts_;
  o.weight_mem_fds = fds_.data();
  o.weight_mem_sizes = sizes.data();
  o.n_weight_mem = plan.n_domains;
  ork_model* m = load(o);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(run(m), expected);

  ork_mem_info mi{};
  ASSERT_EQ(ork_query_mem(m, nullptr, &mi), ORK_OK);
  EXPECT_EQ(mi.weight_bytes, plan.weight_bytes);
  EXPECT_EQ(mi.weight_external_bytes, plan.weight_bytes);
  EXPECT_EQ(mi.domains[0].io_bytes, plan.weight_bytes);  // the device's count of imported bytes
  // Everything mapped is the caller's memory or the matmul scratch: no weight buffer of ork's.
  EXPECT_EQ(mi.total_dma_bytes, mi.weight_external_bytes + mi.internal_device_bytes);
  for (uint32_t d = 0; d < plan.n_domains; ++d) {
    EXPECT_EQ(mi.domains[d].weight_bytes, plan.domains[d].weight_bytes) << "domain " << d;
    EXPECT_EQ(mi.domains[d].total_bytes, plan.domains[d].weight_bytes + mi.domains[d].internal_bytes) << "domain " << d;
    // The packed weights are in the caller's memory, seen through the caller's own mapping.
    EXPECT_TRUE(std::any_of(maps_[d], maps_[d] + sizes[d], [](uint8_t b) { return b != 0; })) << "domain " << d;
  }
  ork_model_free(m);
}

TEST_F(ApiWeightMem, MemoryThatCannotHoldTheWeightsIsRefused) {
  ork_mem_info plan{};
  ASSERT_EQ(ork_query_plan(path_.c_str(), &opts_, 0, &plan), ORK_OK) << ork_last_error();
  ASSERT_GE(plan.n_domains, 2u);
  std::vector<uint64_t> sizes;
  for (uint32_t d = 0; d < plan.n_domains; ++d) {
    sizes.push_back(plan.domains[d].weight_bytes);
    add_memfd(sizes.back());
  }
  ork_model_options o = opts_;
  o.weight_mem_fds = fds_.data();
  o.weight_mem_sizes = sizes.data();
  o.n_weight_mem = plan.n_domains;
  // One page short in the last domain: the message names the bytes needed.
  sizes.back() -= 4096;
  EXPECT_EQ(load(o, ORK_ERR_BUFFER_TOO_SMALL), nullptr);
  EXPECT_NE(std::string(ork_last_error()).find(std::to_string(plan.domains[plan.n_domains - 1].weight_bytes)),
            std::string::npos)
      << ork_last_error();
  sizes.back() += 4096;
  // A count other than the plan's domains; NULL arrays; a bad fd; a streaming plan; the cpu.
  o.n_weight_mem = plan.n_domains - 1;
  EXPECT_EQ(load(o, ORK_ERR_INVALID_ARG), nullptr);
  o.n_weight_mem = plan.n_domains;
  o.weight_mem_sizes = nullptr;
  EXPECT_EQ(load(o, ORK_ERR_INVALID_ARG), nullptr);
  o.weight_mem_sizes = sizes.data();
  std::vector<int> bad_fds = fds_;
  bad_fds[0] = -1;
  o.weight_mem_fds = bad_fds.data();
  EXPECT_EQ(load(o, ORK_ERR_INVALID_ARG), nullptr);
  bad_fds[0] = 1000000;  // not open: the import fails on the device
  EXPECT_EQ(load(o, ORK_ERR_DEVICE), nullptr);
  o.weight_mem_fds = fds_.data();
  o.residency = "stream";
  EXPECT_EQ(load(o, ORK_ERR_INVALID_ARG), nullptr);
  EXPECT_NE(std::string(ork_last_error()).find("resident"), std::string::npos) << ork_last_error();
  o.residency = nullptr;
  o.device = "cpu";
  EXPECT_EQ(load(o, ORK_ERR_INVALID_ARG), nullptr);
  // The same memory, right-sized, then loads.
  o.device = "sim";
  ork_model* m = load(o);
  ASSERT_NE(m, nullptr);
  ork_model_free(m);
  // The plan query's own bad input.
  EXPECT_EQ(ork_query_plan(nullptr, &opts_, 0, &plan), ORK_ERR_INVALID_ARG);
  EXPECT_EQ(ork_query_plan(path_.c_str(), &opts_, -1, &plan), ORK_ERR_INVALID_ARG);
  EXPECT_EQ(ork_query_plan(path_.c_str(), &opts_, 0, nullptr), ORK_ERR_INVALID_ARG);
  EXPECT_EQ(ork_query_plan(dir_.file("missing.gguf").c_str(), &opts_, 0, &plan), ORK_ERR_LOAD);
}

}  // namespace
