// Caller-provided internal memory through the C API (internal_mem_fds, like rknn_set_internal_mem):
// the plan names the bytes per domain, the device scratch is placed in caller memfds, the outputs
// equal ork's own allocation, the device allocates only the task arrays; memory that cannot be used.
// And the plan with share_weights_with agrees with the query after loading.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "ork/ork.h"

namespace {

const std::vector<int32_t> kPrompt = {1, 7, 300, 42, 5, 99, 250, 3};

class ApiInternalMem : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = make_model("m.gguf", 5);
    ork_model_options_init(&opts_);
    opts_.device = "sim";
    opts_.threads = 2;
    opts_.sim_window_bytes = uint64_t(2) << 20;  // about one layer per domain: several domains
  }
  void TearDown() override {
    for (int fd : fds_) close(fd);
  }
  std::string make_model(const std::string& name, uint64_t seed) {
    ork::gen::ModelSpec s = ork::testing::small_q8_model();
    s.seed = seed;
    const std::string path = dir_.file(name);
    ork::gen::write_model(s, path);
    return path;
  }
  int add_memfd(uint64_t size) {
    const int fd = memfd_create("ork-internal", 0);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, off_t(size)), 0);
    fds_.push_back(fd);
    return fd;
  }
  ork_model* load(const std::string& path, const ork_model_options& o, int expect = ORK_OK) {
    ork_model* m = nullptr;
    EXPECT_EQ(ork_model_load(path.c_str(), &o, &m), expect) << ork_last_error();
    return m;
  }
  ork_mem_info plan(const std::string& path, const ork_model_options& o) {
    ork_mem_info p{};
    EXPECT_EQ(ork_query_plan(path.c_str(), &o, 64, &p), ORK_OK) << ork_last_error();
    return p;
  }
  ork_mem_info query(ork_model* m) {
    ork_mem_info mi{};
    EXPECT_EQ(ork_query_mem(m, nullptr, &mi), ORK_OK) << ork_last_error();
    return mi;
  }
  // The prompt's last logits, then 6 greedy decode steps' logits.
  std::vector<float> run(ork_model* m) {
    ork_context* c = nullptr;
    EXPECT_EQ(ork_context_create(m, 64, &c), ORK_OK) << ork_last_error();
    std::vector<float> out;
    const float* l = nullptr;
    EXPECT_EQ(ork_eval(c, kPrompt.data(), int64_t(kPrompt.size()), &l), ORK_OK) << ork_last_error();
    for (int i = 0; i < 6 && l != nullptr; ++i) {
      out.insert(out.end(), l, l + 512);
      const int32_t next = int32_t(std::max_element(l, l + 512) - l);
      EXPECT_EQ(ork_eval(c, &next, 1, &l), ORK_OK) << ork_last_error();
    }
    ork_context_free(c);
    return out;
  }
  ork::testing::TempDir dir_;
  std::string path_;
  ork_model_options opts_;
  std::vector<int> fds_;
};

TEST_F(ApiInternalMem, ScratchInCallerMemoryGivesTheSameLogitsAndOnlyTaskArraysAreOrks) {
  const ork_mem_info p = plan(path_, opts_);
  ASSERT_GE(p.n_domains, 2u) << "the window should force several domains";
  ork_model* own = load(path_, opts_);
  const std::vector<float> expected = run(own);
  const ork_mem_info mo = query(own);
  EXPECT_EQ(mo.internal_device_bytes, p.internal_device_bytes);
  EXPECT_EQ(mo.internal_external_bytes, 0u);
  ork_model_free(own);

  std::vector<int> fds;
  std::vector<uint64_t> sizes;
  uint64_t caller = 0, tasks = 0;
  for (uint32_t d = 0; d < p.n_domains; ++d) {
    ASSERT_GT(p.internal_mem_bytes[d], 0u) << "domain " << d;
    ASSERT_LT(p.internal_mem_bytes[d], p.domains[d].internal_bytes) << "the task array is not in it";
    EXPECT_EQ(p.internal_mem_bytes[d] % 4096, 0u);
    sizes.push_back(p.internal_mem_bytes[d]);
    fds.push_back(add_memfd(sizes.back()));
    caller += p.internal_mem_bytes[d];
    tasks += p.domains[d].internal_bytes - p.internal_mem_bytes[d];
  }
  ork_model_options o = opts_;
  o.internal_mem_fds = fds.data();
  o.internal_mem_sizes = sizes.data();
  o.n_internal_mem = p.n_domains;
  ork_model* m = load(path_, o);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(run(m), expected);
  const ork_mem_info mi = query(m);
  EXPECT_EQ(mi.internal_external_bytes, caller);
  EXPECT_EQ(mi.internal_device_bytes, p.internal_device_bytes);  // the same scratch, elsewhere
  EXPECT_EQ(mi.domains[0].io_bytes, caller);  // the device's own count of imported bytes
  // The device maps the weights, the caller's memory and the task arrays: nothing else of ork's.
  EXPECT_EQ(mi.total_dma_bytes, mi.weight_bytes + caller + tasks);
  // Per domain one page for the slot's task array and one for the plan cache's task entries.
  EXPECT_LE(tasks, uint64_t(p.n_domains) * 2 * 4096) << "two pages of task entries per domain for this model";
  for (uint32_t d = 0; d < p.n_domains; ++d) {
    EXPECT_EQ(mi.domains[d].internal_bytes, p.domains[d].internal_bytes) << "domain " << d;
    EXPECT_EQ(mi.domains[d].total_bytes, mi.domains[d].weight_bytes + mi.domains[d].internal_bytes) << "domain " << d;
  }
  ork_model_free(m);
}

TEST_F(ApiInternalMem, WeightsAndScratchBothInCallerMemory) {
  const ork_mem_info p = plan(path_, opts_);
  ork_model* own = load(path_, opts_);
  const std::vector<float> expected = run(own);
  ork_model_free(own);
  std::vector<int> wfds, sfds;
  std::vector<uint64_t> wsizes, ssizes;
  for (uint32_t d = 0; d < p.n_domains; ++d) {
    wsizes.push_back(p.domains[d].weight_bytes);
    wfds.push_back(add_memfd(wsizes.back()));
    ssizes.push_back(p.internal_mem_bytes[d]);
    sfds.push_back(add_memfd(ssizes.back()));
  }
  ork_model_options o = opts_;
  o.weight_mem_fds = wfds.data();
  o.weight_mem_sizes = wsizes.data();
  o.n_weight_mem = p.n_domains;
  o.internal_mem_fds = sfds.data();
  o.internal_mem_sizes = ssizes.data();
  o.n_internal_mem = p.n_domains;
  ork_model* m = load(path_, o);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(run(m), expected);
  const ork_mem_info mi = query(m);
  uint64_t tasks = 0;
  for (uint32_t d = 0; d < p.n_domains; ++d) tasks += p.domains[d].internal_bytes - p.internal_mem_bytes[d];
  // All device memory is the caller's, but for the task arrays.
  EXPECT_EQ(mi.total_dma_bytes - mi.domains[0].io_bytes, tasks);
  EXPECT_EQ(mi.domains[0].io_bytes, mi.weight_external_bytes + mi.internal_external_bytes);
  ork_model_free(m);
}

TEST_F(ApiInternalMem, MemoryThatCannotHoldTheScratchIsRefused) {
  const ork_mem_info p = plan(path_, opts_);
  ASSERT_GE(p.n_domains, 2u);
  std::vector<int> fds;
  std::vector<uint64_t> sizes;
  for (uint32_t d = 0; d < p.n_domains; ++d) {
    sizes.push_back(p.internal_mem_bytes[d]);
    fds.push_back(add_memfd(sizes.back()));
  }
  ork_model_options o = opts_;
  o.internal_mem_fds = fds.data();
  o.internal_mem_sizes = sizes.data();
  o.n_internal_mem = p.n_domains;
  // One page short in the last domain: the message names the bytes needed.
  sizes.back() -= 4096;
  EXPECT_EQ(load(path_, o, ORK_ERR_BUFFER_TOO_SMALL), nullptr);
  EXPECT_NE(std::string(ork_last_error()).find(std::to_string(p.internal_mem_bytes[p.n_domains - 1])),
            std::string::npos)
      << ork_last_error();
  sizes.back() += 4096;
  o.n_internal_mem = p.n_domains - 1;  // a count other than the plan's domains
  EXPECT_EQ(load(path_, o, ORK_ERR_INVALID_ARG), nullptr);
  o.n_internal_mem = p.n_domains;
  o.internal_mem_sizes = nullptr;
  EXPECT_EQ(load(path_, o, ORK_ERR_INVALID_ARG), nullptr);
  o.internal_mem_sizes = sizes.data();
  std::vector<int> bad = fds;
  bad[0] = -1;  // a domain that needs memory without an fd
  o.internal_mem_fds = bad.data();
  EXPECT_EQ(load(path_, o, ORK_ERR_INVALID_ARG), nullptr);
  bad[0] = 1000000;  // not open: the import fails on the device
  EXPECT_EQ(load(path_, o, ORK_ERR_DEVICE), nullptr);
  o.internal_mem_fds = fds.data();
  o.device = "cpu";
  EXPECT_EQ(load(path_, o, ORK_ERR_INVALID_ARG), nullptr);
  o.device = "sim";
  // With a shared scratch the scratch is the other model's.
  ork_model* first = load(path_, opts_);
  o.share_scratch_with = first;
  EXPECT_EQ(load(path_, o, ORK_ERR_INVALID_ARG), nullptr);
  EXPECT_NE(std::string(ork_last_error()).find("share_scratch_with"), std::string::npos) << ork_last_error();
  o.share_scratch_with = nullptr;
  // Right-sized, it loads.
  ork_model* m = load(path_, o);
  ASSERT_NE(m, nullptr);
  // A model sharing that scratch cannot grow the caller's memory: a larger model is refused, naming
  // the bytes both would need.
  ork_model_options big = opts_;
  big.share_scratch_with = m;
  ork::gen::ModelSpec s;
  s.n_embd = 512;
  s.n_ff = 1024;
  s.n_layer = 1;
  s.n_vocab = 512;
  s.weight_type = ork::quant::Type::Q8_0;
  const std::string big_path = dir_.file("big.gguf");
  ork::gen::write_model(s, big_path);
  EXPECT_EQ(load(big_path, big, ORK_ERR_BUFFER_TOO_SMALL), nullptr);
  EXPECT_NE(std::string(ork_last_error()).find("needed"), std::string::npos) << ork_last_error();
  // The same model shares it fine (the same needs).
  ork_model* same = load(path_, big);
  ASSERT_NE(same, nullptr);
  EXPECT_EQ(run(same), run(m));
  ork_model_free(same);
  ork_model_free(m);
  ork_model_free(first);
}

TEST_F(ApiInternalMem, PlanWithSharedWeightsAgreesWithTheQueryAfterLoading) {
  const std::string twin_path = make_model("twin.gguf", 5), other_path = make_model("other.gguf", 6);
  // A window that holds both models: plans do not know what the device already holds.
  opts_.sim_window_bytes = 0;
  ork_model* a = load(path_, opts_);
  ASSERT_NE(a, nullptr);
  const ork_mem_info ma = query(a);
  ork_model_options o = opts_;
  o.share_weights_with = a;
  for (const std::string& path : {twin_path, other_path}) {
    SCOPED_TRACE(path);
    const ork_mem_info p = plan(path, o);
    ork_model* m = load(path, o);
    ASSERT_NE(m, nullptr);
    const ork_mem_info mi = query(m);
    EXPECT_EQ(p.weights_shared, mi.weights_shared);
    EXPECT_EQ(p.weight_shared_bytes, mi.weight_shared_bytes);
    EXPECT_EQ(p.weight_bytes, mi.weight_bytes);
    EXPECT_EQ(p.internal_device_bytes, mi.internal_device_bytes);
    EXPECT_EQ(ma.total_dma_bytes + p.total_dma_bytes, mi.total_dma_bytes) << "the plan is what loading adds";
    for (uint32_t d = 0; d < ORK_MAX_DOMAINS; ++d) {
      EXPECT_EQ(d < p.n_domains ? p.domains[d].weight_bytes : 0, mi.domains[d].weight_bytes) << "domain " << d;
      EXPECT_EQ(d < p.n_domains ? p.domains[d].internal_bytes : 0, mi.domains[d].internal_bytes) << "domain " << d;
    }
    if (path == twin_path) {
      EXPECT_EQ(p.weights_shared, 4u * 7u + 1u);  // every linear weight
      EXPECT_EQ(p.weight_bytes, 0u);
      EXPECT_EQ(p.weight_shared_bytes, ma.weight_bytes);
    } else {
      EXPECT_EQ(p.weights_shared, 0u);
      EXPECT_GT(p.weight_bytes, 0u);
    }
    ork_model_free(m);
  }
  // Without sharing the same file plans all its weights; a bad handle is refused.
  EXPECT_EQ(plan(twin_path, opts_).weights_shared, 0u);
  EXPECT_EQ(plan(twin_path, opts_).weight_bytes, ma.weight_bytes);
  ork_model_free(a);
  ork_mem_info p{};
  EXPECT_EQ(ork_query_plan(twin_path.c_str(), &o, 64, &p), ORK_ERR_BAD_HANDLE);
}

TEST_F(ApiInternalMem, PlanWithSharedWeightsAcrossDomainsAgreesToo) {
  // Several domains: the twin's matmuls run on A's weights, so its scratch is in A's domains.
  const std::string twin_path = make_model("twin.gguf", 5);
  ork_model* a = load(path_, opts_);
  ork_model_options o = opts_;
  o.share_weights_with = a;
  const ork_mem_info p = plan(twin_path, o);
  ASSERT_GE(p.n_domains, 2u);
  ork_model* twin = load(twin_path, o);
  const ork_mem_info mi = query(twin);
  EXPECT_EQ(p.weights_shared, mi.weights_shared);
  EXPECT_EQ(p.weight_bytes, 0u);
  EXPECT_EQ(mi.weight_bytes, 0u);
  EXPECT_EQ(p.internal_device_bytes, mi.internal_device_bytes);
  for (uint32_t d = 0; d < ORK_MAX_DOMAINS; ++d) {
    EXPECT_EQ(d < p.n_domains ? p.domains[d].internal_bytes : 0, mi.domains[d].internal_bytes) << "domain " << d;
  }
  ork_model_free(twin);
  // Its scratch in caller memory sized by that plan.
  std::vector<int> fds;
  std::vector<uint64_t> sizes;
  for (uint32_t d = 0; d < p.n_domains; ++d) {
    sizes.push_back(p.internal_mem_bytes[d]);
    fds.push_back(add_memfd(sizes.back()));
  }
  o.internal_mem_fds = fds.data();
  o.internal_mem_sizes = sizes.data();
  o.n_internal_mem = p.n_domains;
  ork_model* twin2 = load(twin_path, o);
  ASSERT_NE(twin2, nullptr);
  EXPECT_EQ(run(twin2), run(a));
  ork_model_free(twin2);
  ork_model_free(a);
}

}  // namespace
