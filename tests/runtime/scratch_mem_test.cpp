// The Engine's matmul scratch in caller memory (EngineOptions::scratch_mem): sized by plan_memory,
// bit-identical logits, the device holding no scratch buffer of ork's but the task arrays; memory that
// cannot be used (ScratchMemError with the bytes needed).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "runtime/context.h"
#include "runtime/engine.h"
#include "runtime/npu_wtype.h"

namespace ork::runtime {
namespace {

class ScratchMem : public ::testing::Test {
 protected:
  void SetUp() override { gen::write_model(testing::small_q8_model(), dir_.file("m.gguf")); }
  void TearDown() override {
    for (int fd : fds_) ::close(fd);
  }
  EngineOptions options() {
    EngineOptions o;
    o.model_path = dir_.file("m.gguf");
    o.device = "sim";
    o.threads = 2;
    o.npu.sim_window_bytes = 2u << 20;
    o.npu.sim_domains = 16;
    return o;
  }
  ExternalMemory memfd(uint64_t size) {
    const int fd = ::memfd_create("ork-scratch", 0);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::ftruncate(fd, off_t(size)), 0);
    fds_.push_back(fd);
    return {fd, size};
  }
  std::vector<float> run(Engine& e) {
    Context ctx(e, 64);
    std::vector<float> out = ctx.eval_all({1, 7, 300, 42, 5, 99, 250, 3});
    const float* l = ctx.eval({11});
    out.insert(out.end(), l, l + ctx.n_vocab());
    return out;
  }
  // Engine `base` with its scratch in caller memory sized by plan_memory: the logits of `base` with
  // its own scratch, the caller bytes imported, nothing else of ork's but weights and task arrays.
  void expect_caller_scratch(const EngineOptions& base);
  testing::TempDir dir_;
  std::vector<int> fds_;
};

TEST_F(ScratchMem, CallerMemoryHoldsTheScratchAndTheLogitsAreBitIdentical) {
  ASSERT_GT(plan_memory(options(), 64).domains_used, 1u);  // one memory per domain
  expect_caller_scratch(options());
}

// int4 weights (--npu-wtype i4) run through the same matmul scratch: the same holds.
TEST_F(ScratchMem, CallerMemoryHoldsTheInt4Scratch) {
  EngineOptions o = options();
  o.npu_wtype = NpuWtype::kI4;
  expect_caller_scratch(o);
}

void ScratchMem::expect_caller_scratch(const EngineOptions& base) {
  const MemoryPlan plan = plan_memory(base, 64);
  ASSERT_GE(plan.domains_used, 1u);
  ASSERT_EQ(plan.scratch_caller_bytes.size(), plan.domains_used);
  std::vector<float> expected;
  {
    Engine own(base);
    expected = run(own);
  }
  EngineOptions o = base;
  uint64_t caller = 0, tasks = 0;
  for (uint32_t d = 0; d < plan.domains_used; ++d) {
    o.scratch_mem.push_back(memfd(plan.scratch_caller_bytes[d]));
    caller += plan.scratch_caller_bytes[d];
    tasks += plan.scratch_device_bytes[d] - plan.scratch_caller_bytes[d];
  }
  Engine e(o);
  const std::vector<float> got = run(e);
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)), 0) << "logits differ";
  const EngineMemory m = e.memory();
  EXPECT_EQ(m.scratch_external_bytes, caller);
  for (uint32_t d = 0; d < plan.domains_used; ++d) {
    EXPECT_EQ(m.scratch_device_bytes[d], plan.scratch_device_bytes[d]) << "domain " << d;
  }
  const npu::Counters c = e.device()->counters();
  EXPECT_EQ(c.imported_bytes, caller);
  EXPECT_EQ(c.imports, uint64_t(plan.domains_used));
  // What ork allocated itself: the weights and the task arrays, nothing else.
  EXPECT_EQ(c.total_mapped_bytes - c.imported_bytes, m.weight_bytes + tasks);
}

TEST_F(ScratchMem, MemoryThatCannotHoldTheScratchIsRefused) {
  const MemoryPlan plan = plan_memory(options(), 64);
  EngineOptions o = options();
  for (uint32_t d = 0; d < plan.domains_used; ++d) o.scratch_mem.push_back(memfd(plan.scratch_caller_bytes[d]));
  o.scratch_mem[1].size -= 4096;
  try {
    Engine e(o);
    FAIL() << "a short memory was accepted";
  } catch (const ScratchMemError& err) {
    EXPECT_EQ(err.domain(), 1u);
    EXPECT_EQ(err.needed(), plan.scratch_caller_bytes[1]);
  }
  o.scratch_mem[1].size += 4096;
  o.scratch_mem.pop_back();
  try {
    Engine e(o);
    FAIL() << "a wrong count was accepted";
  } catch (const ScratchMemError& err) {
    EXPECT_EQ(err.needed(), 0u);
  }
}

}  // namespace
}  // namespace ork::runtime
