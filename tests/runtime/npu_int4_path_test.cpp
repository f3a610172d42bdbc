// `--npu-wtype i4` through the whole Engine on the simulated NPU: the logits are bit-identical to the
// CPU int4 path with the same scheme (`--cpu-int4 w4a8`), resident and streamed; the plan holds
// about half the int8 bytes; auto picks i4 for 4/5-bit sources only; the hybrid schedule's CPU and
// split calls give the same logits.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "gen_model/gen_model.h"
#include "model/model.h"
#include "model/temp_dir.h"
#include "model/test_models.h"
#include "runtime/context.h"
#include "runtime/engine.h"
#include "runtime/hybrid_matmul.h"
#include "runtime/npu_wtype.h"

namespace ork::runtime {
namespace {

class NpuInt4Path : public ::testing::Test {
 protected:
  void SetUp() override { gen::write_model(testing::small_q8_model(), dir_.file("m.gguf")); }
  EngineOptions options(const char* device) {
    EngineOptions o;
    o.model_path = dir_.file("m.gguf");
    o.device = device;
    o.threads = 2;
    if (std::strcmp(device, "cpu") == 0) {
      o.cpu_int4 = "w4a8";
    } else {
      o.npu_wtype = NpuWtype::kI4;
    }
    return o;
  }
  // Logits of a prefill and three decoded tokens.
  static std::vector<std::vector<float>> logits(Engine& e) {
    Context ctx(e, 64);
    std::vector<std::vector<float>> out;
    out.push_back(ctx.eval_all({1, 7, 300, 42, 5, 99, 250, 3}));
    for (int32_t t : {11, 12, 13}) {
      const float* l = ctx.eval({t});
      out.emplace_back(l, l + ctx.n_vocab());
    }
    return out;
  }
  testing::TempDir dir_;
};

TEST_F(NpuInt4Path, ResidentAndStreamedLogitsEqualTheCpuInt4PathBitForBit) {
  Engine cpu(options("cpu"));
  const auto want = logits(cpu);
  EngineOptions ro = options("sim");
  ro.residency = weights::Residency::kResident;
  Engine resident(ro);
  EngineOptions so = options("sim");
  so.residency = weights::Residency::kStream;
  so.wcache_budget_bytes = 256 << 10;  // a fraction of the ~0.7 MB of int4 weights: evictions
  Engine streamed(so);
  ASSERT_EQ(resident.plan()->wtype, npu::Dtype::kI4);
  ASSERT_EQ(streamed.plan()->mode, weights::Residency::kStream);
  for (Engine* e : {&resident, &streamed}) {
    const auto got = logits(*e);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].size(), want[i].size());
      EXPECT_EQ(std::memcmp(got[i].data(), want[i].data(), got[i].size() * sizeof(float)), 0)
          << (e == &resident ? "resident" : "streamed") << ", step " << i;
    }
  }
  EXPECT_GT(streamed.residency_stats().evictions, 0u) << "the streamed plan did not stream";
}

TEST_F(NpuInt4Path, TheI4PlanHoldsAboutHalfTheInt8Bytes) {
  EngineOptions i8 = options("sim");
  i8.npu_wtype = NpuWtype::kI8;
  const MemoryPlan p8 = plan_memory(i8, 64), p4 = plan_memory(options("sim"), 64);
  uint64_t b8 = 0, b4 = 0;
  for (uint64_t b : p8.weight_device_bytes) b8 += b;
  for (uint64_t b : p4.weight_device_bytes) b4 += b;
  ASSERT_GT(b8, 0u);
  EXPECT_LE(double(b4), 0.55 * double(b8)) << b4 << " i4 bytes against " << b8 << " i8";
  EXPECT_GE(double(b4), 0.45 * double(b8));
  Engine e(options("sim")), e8(i8);
  // What `ork mem` and ork_query_mem report after loading: the device weight bytes per domain.
  const EngineMemory m4 = e.memory(), m8 = e8.memory();
  ASSERT_EQ(m4.weight_device_bytes.size(), m8.weight_device_bytes.size());
  for (size_t d = 0; d < m4.weight_device_bytes.size(); ++d)
    EXPECT_LE(double(m4.weight_device_bytes[d]), 0.55 * double(m8.weight_device_bytes[d])) << "domain " << d;
  EXPECT_EQ(m4.weight_bytes, b4);
  for (const weights::WeightPlan& w : e.plan()->weights)
    for (const weights::Slice& s : w.slices) EXPECT_EQ(s.n0 % 64, 0) << w.linear->name();
}

TEST_F(NpuInt4Path, AutoPicksI4ForFourAndFiveBitSourcesOnly) {
  gen::ModelSpec q4 = testing::small_q8_model();
  q4.weight_type = quant::Type::Q4_0;
  gen::write_model(q4, dir_.file("q4.gguf"));
  gen::ModelSpec q5k = testing::small_q8_model();
  q5k.weight_type = quant::Type::Q5_K;
  gen::write_model(q5k, dir_.file("q5k.gguf"));
  const auto wtype_of = [&](const std::string& path) {
    const auto m = model::Model::load(path);
    return resolve_npu_wtype(NpuWtype::kAuto, m->weights());
  };
  EXPECT_EQ(wtype_of(dir_.file("m.gguf")), npu::Dtype::kI8);
  EXPECT_EQ(wtype_of(dir_.file("q4.gguf")), npu::Dtype::kI4);
  EXPECT_EQ(wtype_of(dir_.file("q5k.gguf")), npu::Dtype::kI4);
  EngineOptions o = options("sim");
  o.model_path = dir_.file("q4.gguf");
  o.npu_wtype = NpuWtype::kAuto;
  Engine e(o);
  EXPECT_EQ(e.plan()->wtype, npu::Dtype::kI4);
}

TEST_F(NpuInt4Path, RefusesBadNames) {
  EXPECT_THROW(parse_npu_wtype("int4"), Error);
  EXPECT_THROW(parse_npu_wtype("i4a8"), Error);
  EXPECT_EQ(parse_npu_wtype("auto"), NpuWtype::kAuto);
  EXPECT_EQ(parse_npu_wtype("i4a4"), NpuWtype::kI4A4);
  EXPECT_STREQ(npu_wtype_name(NpuWtype::kI4), "i4");
  EXPECT_STREQ(npu_wtype_name(NpuWtype::kI4A4), "i4a4");
  EXPECT_TRUE(int4_activations(NpuWtype::kI4A4));
  EXPECT_FALSE(int4_activations(NpuWtype::kI4));
}

// `--npu-wtype i4a4` (W4A4: the same int4 weights, activations rotated and quantized to int4, one
// int4 row per token in the jobs): resident, streamed, all on the CPU and split along N, the logits
// are those of `--device cpu --cpu-int4 w4a4`, bit for bit — and differ from W4A8's, so the
// activations really are int4 on the device.
TEST_F(NpuInt4Path, W4A4LogitsEqualTheCpuW4A4PathBitForBitOnEverySchedule) {
  std::FILE* f = std::fopen(dir_.file("split.json").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("{\"name\": \"split-everything\", \"submit_us\": 1, \"task_us\": 0.1, \"ddr_gbps\": 0.5, "
             "\"cpu_read_gbps\": 0.5, \"ddr_total_gbps\": 1, \"cpu_call_us\": 1, \"cpu_int8_gmacs\": 1000}",
             f);
  std::fclose(f);
  EngineOptions co = options("cpu");
  co.cpu_int4 = "w4a4";
  Engine cpu(co);
  const auto want = logits(cpu);
  Engine w4a8(options("sim"));
  const auto a8 = logits(w4a8);
  EngineOptions base = options("sim");
  base.npu_wtype = NpuWtype::kI4A4;
  EngineOptions resident = base, streamed = base, on_cpu = base, split = base;
  resident.residency = weights::Residency::kResident;
  streamed.residency = weights::Residency::kStream;
  streamed.wcache_budget_bytes = 256 << 10;
  on_cpu.schedule = Schedule::kCpu;
  split.schedule = Schedule::kAuto;
  split.npu.board_profile = dir_.file("split.json");
  const std::pair<const char*, const EngineOptions*> runs[] = {
      {"resident", &resident}, {"streamed", &streamed}, {"schedule cpu", &on_cpu}, {"split", &split}};
  for (const auto& [what, o] : runs) {
    Engine e(*o);
    ASSERT_EQ(e.plan()->wtype, npu::Dtype::kI4) << what;
    const auto got = logits(e);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].size(), want[i].size());
      EXPECT_EQ(std::memcmp(got[i].data(), want[i].data(), got[i].size() * sizeof(float)), 0)
          << what << ", step " << i;
    }
    if (o == &streamed) {
      EXPECT_GT(e.residency_stats().evictions, 0u) << "the streamed plan did not stream";
    }
    if (o == &split) {
      EXPECT_GT(e.hybrid()->stats().split_calls, 0u) << e.hybrid()->stats().to_text();
    }
  }
  EXPECT_NE(std::memcmp(a8[0].data(), want[0].data(), want[0].size() * sizeof(float)), 0)
      << "W4A4 gave W4A8's logits";
}

// --schedule cpu and auto with i4: the CPU side is the CPU int4 path (w4a8 per row), so every call —
// on the NPU, on the CPU, or split along N between them — gives the --cpu-int4 w4a8 logits.
TEST_F(NpuInt4Path, ScheduledCallsGiveTheCpuInt4LogitsBitForBit) {
  std::FILE* f = std::fopen(dir_.file("split.json").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("{\"name\": \"split-everything\", \"submit_us\": 1, \"task_us\": 0.1, \"ddr_gbps\": 0.5, "
             "\"cpu_read_gbps\": 0.5, \"ddr_total_gbps\": 1, \"cpu_call_us\": 1, \"cpu_int8_gmacs\": 1000}",
             f);
  std::fclose(f);
  Engine cpu(options("cpu"));
  const auto want = logits(cpu);
  EngineOptions on_cpu = options("sim");
  on_cpu.schedule = Schedule::kCpu;
  EngineOptions split = options("sim");
  split.schedule = Schedule::kAuto;
  split.npu.board_profile = dir_.file("split.json");
  for (const EngineOptions* o : {&on_cpu, &split}) {
    Engine e(*o);
    const auto got = logits(e);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(std::memcmp(got[i].data(), want[i].data(), got[i].size() * sizeof(float)), 0)
          << schedule_name(o->schedule) << ", step " << i;
    }
    const ScheduleStats s = e.hybrid()->stats();
    if (o == &on_cpu) {
      EXPECT_EQ(s.npu_calls + s.split_calls, 0u);
      EXPECT_GT(s.cpu_weight_bytes, 0u);
      continue;
    }
    EXPECT_GT(s.split_calls, 0u) << s.to_text();
    for (const ScheduleStats::Decision& d : s.decisions)
      for (int64_t r : d.choice.npu_rows) EXPECT_EQ(r % 64, 0) << d.what;
  }
}

}  // namespace
}  // namespace ork::runtime
