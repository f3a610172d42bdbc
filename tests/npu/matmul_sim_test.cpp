// Matmul through the whole path on the simulated device: Device::open_sim → pack → plan → regcmds →
// submit → SimKernel → executor → C. Parity suite, plan reuse, scratch per domain, failure paths.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/fp16.h"
#include "npu/device.h"
#include "npu/int8_reference.h"
#include "npu/matmul.h"
#include "npu/probe_matmul.h"
#include "npu/probe_stream.h"
#include "npu/regcmd_gen.h"
#include "npu/registers.h"

namespace ork::npu {
namespace {

using testing::fill8;
using testing::ref_i8;



TEST(MatmulSimTest, ParitySuiteAllShapesPass) {
  auto dev = Device::open_sim({});
  const MatmulProbeResult r = probe_matmul(*dev);
  for (const MatmulProbeShape& s : r.shapes) {
    EXPECT_TRUE(s.ok) << s.m << "x" << s.k << "x" << s.n << " " << dtype_name(s.dtype) << " err "
                      << s.max_err << " " << s.error;
    if (s.dtype == Dtype::kI8) {
      EXPECT_EQ(s.max_err, 0.0);
    }
  }
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(r.passed, int(matmul_probe_plan(3).size()));
  EXPECT_FALSE(r.stopped);
  const std::string json = r.to_json();
  EXPECT_EQ(json.rfind(str_cat("{\"passed\":", r.passed, ",\"failed\":0,\"stopped\":false,\"shapes\":[{\"phase\":"
                               "\"single-task\",\"cores\":1,\"m\":1,\"k\":33,\"n\":1,\"dtype\":\"i8\",\"ok\":true,"
                               "\"max_err\":0"),
                       0),
            0u)
      << json.substr(0, 200);
  // Every buffer of the probe was released.
  EXPECT_EQ(dev->counters().total_mapped_bytes, 0u);
}

TEST(MatmulSimTest, PlanIsReusedAcrossCalls) {
  auto dev = Device::open_sim({});
  MatmulScratch scratch(*dev);
  const int64_t m = 8, k = 96, n = 64;
  const auto b = fill8(n * k, 3);
  PackedWeight w = pack_weight(*dev, b.data(), n, k, 0);
  std::vector<int32_t> c(size_t(m * n));
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const auto a = fill8(m * k, seed);
    matmul_i8(*dev, scratch, w, a.data(), m, c.data());
    EXPECT_EQ(c, ref_i8(a, b, m, k, n));
  }
  EXPECT_EQ(scratch.plans_built(), 1u);
  EXPECT_EQ(dev->counters().submits, 3u);
}

TEST(MatmulSimTest, WeightsInTwoDomainsUseTheirOwnScratch) {
  auto dev = Device::open_sim({});
  MatmulScratch scratch(*dev);
  const int64_t m = 4, k = 64, n = 32;
  const auto a = fill8(m * k, 1), b0 = fill8(n * k, 2), b1 = fill8(n * k, 9);
  PackedWeight w0 = pack_weight(*dev, b0.data(), n, k, 0);
  PackedWeight w1 = pack_weight(*dev, b1.data(), n, k, 1);
  std::vector<int32_t> c(size_t(m * n));
  matmul_i8(*dev, scratch, w1, a.data(), m, c.data());
  EXPECT_EQ(c, ref_i8(a, b1, m, k, n));
  matmul_i8(*dev, scratch, w0, a.data(), m, c.data());
  EXPECT_EQ(c, ref_i8(a, b0, m, k, n));
  EXPECT_GT(scratch.bytes(0), 0u);
  EXPECT_GT(scratch.bytes(1), 0u);
  EXPECT_GT(dev->counters().mapped_bytes[1], 0u);
}

TEST(MatmulSimTest, F16ThroughDevice) {
  auto dev = Device::open_sim({});
  MatmulScratch scratch(*dev);
  const int64_t m = 3, k = 50, n = 18;
  std::vector<uint16_t> a(size_t(m * k)), b(size_t(n * k));
  for (size_t i = 0; i < a.size(); ++i) a[i] = f32_to_f16(float(int(i % 7) - 3) * 0.25f);
  for (size_t i = 0; i < b.size(); ++i) b[i] = f32_to_f16(float(int(i % 5) - 2) * 0.5f);
  PackedWeight w = pack_weight_f16(*dev, b.data(), n, k, 0);
  std::vector<float> c(size_t(m * n));
  matmul_f16(*dev, scratch, w, a.data(), m, c.data());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float ref = 0;
      for (int64_t kk = 0; kk < k; ++kk)
        ref += f16_to_f32(a[size_t(i * k + kk)]) * f16_to_f32(b[size_t(j * k + kk)]);
      EXPECT_EQ(c[size_t(i * n + j)], ref);  // small exact values: no rounding anywhere
    }
  EXPECT_THROW(matmul_i8(*dev, scratch, w, nullptr, m, nullptr), Error);
}

TEST(MatmulSimTest, LoadPackedBytesMatchesPackWeight) {
  auto dev = Device::open_sim({});
  MatmulScratch scratch(*dev);
  const int64_t m = 4, k = 40, n = 35;
  const auto a = fill8(m * k, 5), b = fill8(n * k, 6);
  std::vector<uint8_t> packed(packed_weight_bytes(n, k, Dtype::kI8));
  pack_weight_into(b.data(), n, k, packed.data());
  PackedWeight w = load_packed_weight(*dev, packed.data(), n, k, Dtype::kI8, 0);
  std::vector<int32_t> c(size_t(m * n));
  matmul_i8(*dev, scratch, w, a.data(), m, c.data());
  EXPECT_EQ(c, ref_i8(a, b, m, k, n));
}

// A plan's task list kept after its weight buffer is destroyed: the submit faults in the simulator.
TEST(MatmulSimTest, StaleTaskListAfterFreeFaults) {
  auto dev = Device::open_sim({});
  const int64_t m = 4, k = 64, n = 32;
  const auto a = fill8(m * k, 1), b = fill8(n * k, 2);
  PackedWeight w = pack_weight(*dev, b.data(), n, k, 0);
  const SplitPlan plan = plan_split(m, k, n, Dtype::kI8, dev->caps().cores);
  Buffer abuf = dev->alloc(plan.a_bytes, 0), cbuf = dev->alloc(plan.c_bytes, 0);
  Buffer regcmd = dev->alloc(plan.tasks.size() * kRegcmdStride, 0);
  Buffer tasks = dev->alloc(plan.tasks.size() * sizeof(uapi::Task), 0, kTaskBufferFlags);
  build_tasks(plan, TaskAddresses{abuf.iova(), w.buf.iova(), cbuf.iova(), regcmd.iova()}, regcmd.host(),
              reinterpret_cast<uapi::Task*>(tasks.host()));
  pack_a_for_plan(plan, a.data(), abuf.host());
  uapi::Submit s = make_submit(plan, tasks.obj_addr(), 0);
  dev->submit(s);  // fine while the weight lives
  w.buf.reset();   // destroy the weight; keep the stale task list
  uapi::Submit s2 = make_submit(plan, tasks.obj_addr(), 0);
  try {
    dev->submit(s2);
    FAIL() << "submit of a task touching a freed buffer succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NPU fault"), std::string::npos) << e.what();
  }
  EXPECT_EQ(dev->counters().faults, 1u);
}

TEST(MatmulSimTest, MalformedTaskRejectedAtSubmit) {
  auto dev = Device::open_sim({});
  const int64_t m = 4, k = 64, n = 32;
  const auto a = fill8(m * k, 1), b = fill8(n * k, 2);
  PackedWeight w = pack_weight(*dev, b.data(), n, k, 0);
  const SplitPlan plan = plan_split(m, k, n, Dtype::kI8, 1);
  Buffer abuf = dev->alloc(plan.a_bytes, 0), cbuf = dev->alloc(plan.c_bytes, 0);
  Buffer regcmd = dev->alloc(plan.tasks.size() * kRegcmdStride, 0);
  Buffer tasks = dev->alloc(plan.tasks.size() * sizeof(uapi::Task), 0, kTaskBufferFlags);
  auto* task = reinterpret_cast<uapi::Task*>(tasks.host());
  build_tasks(plan, TaskAddresses{abuf.iova(), w.buf.iova(), cbuf.iova(), regcmd.iova()}, regcmd.host(),
              task);
  // Unknown register in the stream.
  const uint64_t bad = reg::encode(reg::kTargetCore, 0x3ff0, 1);
  std::memcpy(regcmd.host() + 8 * 52, &bad, 8);
  uapi::Submit s = make_submit(plan, tasks.obj_addr(), 0);
  try {
    dev->submit(s);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("register 0x3ff0 of target 0x801 is not modelled"), std::string::npos)
        << e.what();
  }
  // Zero amount.
  build_tasks(plan, TaskAddresses{abuf.iova(), w.buf.iova(), cbuf.iova(), regcmd.iova()}, regcmd.host(),
              task);
  task[0].regcfg_amount = 0;
  s = make_submit(plan, tasks.obj_addr(), 0);
  try {
    dev->submit(s);
    FAIL();
  } catch (const Error& e) {
    // The driver programs a 4-entry fetch from regcfg_amount 0: the task never starts.
    EXPECT_NE(std::string(e.what()).find("NPU job timed out"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("short fetch"), std::string::npos) << e.what();
  }
}

TEST(MatmulSimTest, ZeroTaskSubmitIsRejected) {
  auto dev = Device::open_sim({});
  const SplitPlan plan = plan_split(4, 32, 32, Dtype::kI8, 1);
  Buffer tasks = dev->alloc(sizeof(uapi::Task), 0, kTaskBufferFlags);
  uapi::Submit s = make_submit(plan, tasks.obj_addr(), 0);
  s.task_number = 0;
  EXPECT_THROW(dev->submit(s), Error);
}

TEST(StreamProbeTest, CyclesFarMoreThanTheWindowWithoutLeaking) {
  auto dev = Device::open_sim({});
  const StreamProbeResult r = probe_stream(*dev);  // 100 × 256 MiB
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.iters, 100u);
  EXPECT_EQ(r.weight_bytes, uint64_t(256) << 20);
  EXPECT_GE(r.bytes_cycled, uint64_t(26'800'000'000));
  EXPECT_LE(r.peak_resident_bytes, r.weight_bytes);
  EXPECT_EQ(r.leaked_iova_bytes, 0u);
  EXPECT_NE(r.to_json().find("\"leaked_iova_bytes\":0"), std::string::npos) << r.to_json();
}

TEST(StreamProbeTest, SmallWindowStillCycles) {
  sim::SimOptions o;
  o.window_bytes = uint64_t(64) << 20;  // a 64 MiB window: 10 × 16 MiB would not fit at once
  auto dev = Device::open_sim(o);
  const StreamProbeResult r = probe_stream(*dev, 10, uint64_t(16) << 20);
  EXPECT_EQ(r.bytes_cycled, uint64_t(160) << 20);
  EXPECT_EQ(r.leaked_iova_bytes, 0u);
  EXPECT_THROW(probe_stream(*dev, 0), Error);
}

}  // namespace
}  // namespace ork::npu
