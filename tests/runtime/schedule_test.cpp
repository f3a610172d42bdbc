// The hybrid schedule (runtime/schedule.h): the board cost model's choice per call shape, the NPU
// job estimate against what the simulator prices for the same job, and through the whole Engine the
// same logits whichever device each matmul runs on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "gen_model/gen_model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "npu/device.h"
#include "npu/job_estimate.h"
#include "npu/matmul.h"
#include "npu/matmul_job.h"
#include "runtime/context.h"
#include "runtime/cpu_int4_cost.h"
#include "runtime/engine.h"
#include "runtime/hybrid_matmul.h"
#include "runtime/schedule.h"

namespace ork::runtime {
namespace {

const npu::sim::BoardProfile kProfile{};

TEST(Schedule, ParsesTheThreeNamesAndRejectsOthers) {
  EXPECT_EQ(parse_schedule("auto"), Schedule::kAuto);
  EXPECT_EQ(parse_schedule("npu"), Schedule::kNpu);
  EXPECT_EQ(parse_schedule("cpu"), Schedule::kCpu);
  try {
    parse_schedule("gpu");
    FAIL() << "accepted gpu";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'gpu'"), std::string::npos) << e.what();
  }
}

TEST(Schedule, AutoPutsASmallDecodeMatmulOnTheCpuAndAPrefillOnTheNpu) {
  const Scheduler s(Schedule::kAuto, kProfile, 3, 128, true);
  const int64_t small[] = {256};
  const Choice decode = s.choose(1, 256, small);
  EXPECT_TRUE(decode.cpu) << "npu " << decode.npu_ns << " ns, cpu " << decode.cpu_ns << " ns";
  EXPECT_GT(decode.npu_ns, kProfile.submit_us * 1e3) << "a job costs at least its submit";
  const int64_t big[] = {4096};
  const Choice prefill = s.choose(128, 4096, big);
  EXPECT_FALSE(prefill.cpu) << "npu " << prefill.npu_ns << " ns, cpu " << prefill.cpu_ns << " ns";
  EXPECT_LT(prefill.npu_ns, prefill.cpu_ns);
}

TEST(Schedule, TheChoiceFollowsTheProfile) {
  npu::sim::BoardProfile cheap_submit = kProfile;
  cheap_submit.submit_us = 0.5;
  cheap_submit.task_us = 0.1;
  cheap_submit.cpu_read_gbps = 1;  // a slow CPU
  const int64_t n[] = {256};
  EXPECT_TRUE(Scheduler(Schedule::kAuto, kProfile, 3, 128, true).choose(1, 256, n).cpu);
  EXPECT_FALSE(Scheduler(Schedule::kAuto, cheap_submit, 3, 128, true).choose(1, 256, n).cpu);
}

TEST(Schedule, FixedSchedulesAndStreamedPlansDoNotDecide) {
  const int64_t n[] = {256};
  EXPECT_FALSE(Scheduler(Schedule::kNpu, kProfile, 3, 128, true).choose(1, 256, n).cpu);
  const int64_t big[] = {4096};
  EXPECT_TRUE(Scheduler(Schedule::kCpu, kProfile, 3, 128, true).choose(128, 4096, big).cpu);
  const Scheduler streamed(Schedule::kAuto, kProfile, 3, 128, false);
  EXPECT_FALSE(streamed.choose(1, 256, n).cpu);
  EXPECT_FALSE(streamed.fixed_reason().empty());
}

TEST(Schedule, GroupCostsOneSubmitOnTheNpuAndEveryWeightOnTheCpu) {
  const Scheduler s(Schedule::kAuto, kProfile, 3, 128, true);
  const int64_t one[] = {512}, three[] = {512, 512, 512};
  const Choice a = s.choose(1, 512, one), b = s.choose(1, 512, three);
  EXPECT_NEAR(b.cpu_ns, 3 * a.cpu_ns, 1e-6 * b.cpu_ns);
  EXPECT_LT(b.npu_ns, 3 * a.npu_ns) << "one submit for the group";
}

// The estimate prices the job ork submits exactly as the simulator prices the tasks it decodes.
TEST(Schedule, NpuEstimateEqualsTheSimulatorsModeledTime) {
  npu::DeviceOptions o;
  o.kind = "sim";
  o.sim_timing_only = true;
  auto dev = npu::Device::open(o);
  npu::MatmulScratch scratch(*dev);
  for (const auto& [m, k, ns] : std::vector<std::tuple<int64_t, int64_t, std::vector<int64_t>>>{
           {1, 1536, {1536, 256, 256}}, {1, 8960, {1536}}, {128, 1536, {8960, 8960}}, {37, 896, {4864}}}) {
    std::vector<npu::PackedWeight> ws(ns.size());
    std::vector<const npu::PackedWeight*> wp;
    std::vector<std::vector<int32_t>> c(ns.size());
    std::vector<void*> cp;
    for (size_t i = 0; i < ns.size(); ++i) {
      ws[i].n = ns[i], ws[i].k = k, ws[i].dtype = npu::Dtype::kI8;
      ws[i].buf = dev->alloc(npu::packed_weight_bytes(ns[i], k, npu::Dtype::kI8), 0);
      wp.push_back(&ws[i]);
      c[i].resize(size_t(m * ns[i]));
      cp.push_back(c[i].data());
    }
    std::vector<int8_t> a(size_t(m * k), 1);
    npu::run_matmul_group(*dev, scratch, wp, a.data(), m, cp);  // warm: the job is built once
    const double before = dev->sim_kernel()->stats().modeled_ns;
    npu::run_matmul_group(*dev, scratch, wp, a.data(), m, cp);
    const double modeled = dev->sim_kernel()->stats().modeled_ns - before;
    EXPECT_NEAR(npu::estimate_job_ns(kProfile, m, k, ns, dev->caps().cores, 128), modeled, 1e-6 * modeled)
        << "m " << m << " k " << k;
  }
}

class ScheduleEngine : public ::testing::Test {
 protected:
  // The test model's weights are tiny: with the built-in profile every call is cheaper on the CPU
  // than one submit. This profile's slow CPU arithmetic keeps an 8-row prefill on the NPU.
  void SetUp() override {
    gen::write_model(testing::small_q8_model(), dir_.file("m.gguf"));
    std::FILE* f = std::fopen(dir_.file("board.json").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("{\"name\": \"slow-cpu-arithmetic\", \"cpu_int8_gmacs\": 1}", f);
    std::fclose(f);
  }
  EngineOptions options(Schedule s) {
    EngineOptions o;
    o.model_path = dir_.file("m.gguf");
    o.device = "sim";
    o.threads = 2;
    o.schedule = s;
    o.npu.board_profile = dir_.file("board.json");
    return o;
  }
  testing::TempDir dir_;
};

TEST_F(ScheduleEngine, TheTokensAreTheSameWhicheverDeviceRunsEachMatmul) {
  Engine npu_only(options(Schedule::kNpu)), cpu_only(options(Schedule::kCpu)), hybrid(options(Schedule::kAuto));
  ASSERT_NE(hybrid.hybrid(), nullptr);
  EXPECT_EQ(npu_only.hybrid(), nullptr);
  Context a(npu_only, 64), b(cpu_only, 64), c(hybrid, 64);
  const std::vector<int32_t> prompt = {1, 7, 300, 42, 5, 99, 250, 3};
  const std::vector<float> la = a.eval_all(prompt), lb = b.eval_all(prompt), lc = c.eval_all(prompt);
  ASSERT_EQ(la.size(), lb.size());
  ASSERT_EQ(la.size(), lc.size());
  EXPECT_EQ(std::memcmp(la.data(), lb.data(), la.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(la.data(), lc.data(), la.size() * sizeof(float)), 0);
  for (int32_t t : {11, 12, 13}) {
    const float* x = a.eval({t});
    const float* y = b.eval({t});
    const float* z = c.eval({t});
    EXPECT_EQ(std::memcmp(x, y, size_t(a.n_vocab()) * sizeof(float)), 0) << "token " << t;
    EXPECT_EQ(std::memcmp(x, z, size_t(a.n_vocab()) * sizeof(float)), 0) << "token " << t;
  }
  // The CPU schedule submits nothing; auto ran its decode matmuls on the CPU, where one submit costs
  // more than reading the small weights, and its 8-row prefill on the NPU.
  EXPECT_EQ(cpu_only.device()->counters().submits, 0u);
  const ScheduleStats s = hybrid.hybrid()->stats();
  bool cpu_decode = false, npu_prefill = false;
  for (const ScheduleStats::Decision& d : s.decisions) {
    if (d.choice.split) {
      EXPECT_LT(d.choice.split_ns, std::min(d.choice.cpu_ns, d.choice.npu_ns)) << d.what << " m=" << d.m;
    } else {
      EXPECT_EQ(d.choice.cpu, d.choice.cpu_ns < d.choice.npu_ns) << d.what << " m=" << d.m;
    }
    if (d.m == 1 && d.choice.cpu) cpu_decode = true;
    if (d.m == 8 && !d.choice.cpu) npu_prefill = true;
  }
  EXPECT_TRUE(cpu_decode) << s.to_text();
  EXPECT_TRUE(npu_prefill) << s.to_text();
  EXPECT_GT(s.cpu_calls, 0u);
  EXPECT_GT(s.npu_calls, 0u);
  EXPECT_GT(s.cpu_modeled_ns, 0);
  EXPECT_GT(s.cpu_weight_bytes, 0u);
  EXPECT_EQ(hybrid.memory().cpu_weight_bytes, s.cpu_weight_bytes);
}

// A profile under which splitting pays for every call of the small test model (slow DDR on both
// sides, a shared total of both, cheap calls): split calls give the same logits as NPU-only ones.
TEST_F(ScheduleEngine, SplitCallsGiveTheSameLogitsAsTheNpuAlone) {
  std::FILE* f = std::fopen(dir_.file("split.json").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("{\"name\": \"split-everything\", \"submit_us\": 1, \"task_us\": 0.1, \"ddr_gbps\": 0.5, "
             "\"cpu_read_gbps\": 0.5, \"ddr_total_gbps\": 1, \"cpu_call_us\": 1, \"cpu_int8_gmacs\": 1000}",
             f);
  std::fclose(f);
  EngineOptions split_opts = options(Schedule::kAuto);
  split_opts.npu.board_profile = dir_.file("split.json");
  Engine npu_only(options(Schedule::kNpu)), split(split_opts);
  Context a(npu_only, 64), c(split, 64);
  const std::vector<int32_t> prompt = {1, 7, 300, 42, 5, 99, 250, 3};
  const std::vector<float> la = a.eval_all(prompt), lc = c.eval_all(prompt);
  ASSERT_EQ(la.size(), lc.size());
  EXPECT_EQ(std::memcmp(la.data(), lc.data(), la.size() * sizeof(float)), 0);
  for (int32_t t : {11, 12, 13}) {
    const float* x = a.eval({t});
    const float* z = c.eval({t});
    EXPECT_EQ(std::memcmp(x, z, size_t(a.n_vocab()) * sizeof(float)), 0) << "token " << t;
  }
  const ScheduleStats s = split.hybrid()->stats();
  bool split_decode = false, split_prefill = false;
  for (const ScheduleStats::Decision& d : s.decisions) {
    if (!d.choice.split) continue;
    EXPECT_LT(d.choice.split_ns, std::min(d.choice.cpu_ns, d.choice.npu_ns)) << d.what;
    EXPECT_GT(d.choice.split_ns, d.choice.split_npu_ns * 0.999) << d.what << ": the call outlasts neither side";
    for (int64_t r : d.choice.npu_rows) EXPECT_EQ(r % 32, 0) << d.what;
    if (d.m == 1) split_decode = true;
    if (d.m == 8) split_prefill = true;
  }
  EXPECT_TRUE(split_decode) << s.to_text();
  EXPECT_TRUE(split_prefill) << s.to_text();
  EXPECT_GT(s.split_calls, 0u);
  EXPECT_NE(s.to_text().find("split"), std::string::npos);
  EXPECT_NE(s.to_json().find("\"device\":\"split\""), std::string::npos) << s.to_json();
}

TEST(Schedule, AutoSplitsALargeDecodeWeightBetweenTheNpuAndTheCpu) {
  const Scheduler s(Schedule::kAuto, kProfile, 3, 128, true);
  const int64_t gate_up[] = {8960, 8960};
  const Choice c = s.choose(1, 1536, gate_up);
  ASSERT_TRUE(c.split) << "npu " << c.npu_ns << " cpu " << c.cpu_ns << " split " << c.split_ns;
  ASSERT_EQ(c.npu_rows.size(), 2u);
  for (int64_t r : c.npu_rows) {
    EXPECT_EQ(r % 32, 0);
    EXPECT_GT(r, 0);
    EXPECT_LT(r, 8960);
  }
  EXPECT_LT(c.split_ns, c.npu_ns);
  // Both read at once, so the call takes at least the bytes over the shared bandwidth.
  const double bytes = 2.0 * 8960 * 1536;
  EXPECT_GT(c.split_ns, bytes / kProfile.ddr_total_gbps);
  // Not split when the CPU cannot take rows (a streamed plan, or weights the NPU cannot split).
  EXPECT_FALSE(s.choose(1, 1536, gate_up, false).split);
  EXPECT_FALSE(Scheduler(Schedule::kNpu, kProfile, 3, 128, true).choose(1, 1536, gate_up).split);
  EXPECT_FALSE(Scheduler(Schedule::kAuto, kProfile, 3, 128, false).choose(1, 1536, gate_up).split);
}

// --npu-wtype i4: the NPU side is priced as its int4 job (2 int4 rows per token), the CPU side by
// the CPU int4 path's bytes (half a byte per weight), and splits move in 64-row steps.
TEST(Schedule, Int4WeightsArePricedAsInt4OnBothSides) {
  const Scheduler s8(Schedule::kAuto, kProfile, 3, 128, true);
  const Scheduler s4(Schedule::kAuto, kProfile, 3, 128, true, npu::Dtype::kI4);
  EXPECT_EQ(s4.cpu_ns(1, 1536, 8960), cost_cpu_int4_matmul_ns(kProfile, 1, 1536, 8960));
  EXPECT_DOUBLE_EQ(cpu_int4_matmul_bytes(1536, 8960), 8960.0 * 768 + 4.0 * 8960);
  EXPECT_DOUBLE_EQ(cost_cpu_int4_matmul_ns(kProfile, 1, 1536, 8960),
                   kProfile.cpu_call_us * 1e3 + cpu_int4_matmul_bytes(1536, 8960) / kProfile.cpu_read_gbps);
  EXPECT_LT(s4.cpu_ns(1, 1536, 8960), 0.51 * s8.cpu_ns(1, 1536, 8960));
  const int64_t gate_up[] = {8960, 8960};
  const Choice c4 = s4.choose(1, 1536, gate_up), c8 = s8.choose(1, 1536, gate_up);
  EXPECT_DOUBLE_EQ(c4.npu_ns, npu::estimate_job_ns(kProfile, 1, 1536, gate_up, 3, 128, npu::Dtype::kI4));
  EXPECT_LT(c4.npu_ns, c8.npu_ns);
  ASSERT_TRUE(c4.split);
  for (int64_t r : c4.npu_rows) EXPECT_EQ(r % 64, 0);
  EXPECT_LT(c4.split_ns, c8.split_ns);
  EXPECT_THROW(Scheduler(Schedule::kAuto, kProfile, 3, 128, true, npu::Dtype::kF16), Error);
}

// W4A4 (`--npu-wtype i4a4`): one int4 row per token instead of W4A8's two, so a prefill job is
// priced as the W4A8 job of half the tokens; int4 activations need int4 weights.
TEST(Schedule, Int4ActivationsArePricedAsOneInt4RowPerToken) {
  const Scheduler s4a4(Schedule::kAuto, kProfile, 3, 256, true, npu::Dtype::kI4, true);
  EXPECT_TRUE(s4a4.int4_activations());
  const int64_t gate_up[] = {8960, 8960};
  EXPECT_DOUBLE_EQ(s4a4.choose(128, 1536, gate_up).npu_ns,
                   npu::estimate_job_ns(kProfile, 128, 1536, gate_up, 3, 256, npu::Dtype::kI4, true));
  EXPECT_DOUBLE_EQ(npu::estimate_job_ns(kProfile, 128, 1536, gate_up, 3, 256, npu::Dtype::kI4, true),
                   npu::estimate_job_ns(kProfile, 64, 1536, gate_up, 3, 128, npu::Dtype::kI4, false));
  EXPECT_LT(npu::estimate_job_ns(kProfile, 128, 1536, gate_up, 3, 128, npu::Dtype::kI4, true),
            npu::estimate_job_ns(kProfile, 128, 1536, gate_up, 3, 128, npu::Dtype::kI4, false));
  EXPECT_THROW(Scheduler(Schedule::kAuto, kProfile, 3, 128, true, npu::Dtype::kI8, true), Error);
}

}  // namespace
}  // namespace ork::runtime
