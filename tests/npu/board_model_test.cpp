// The board cost model: its arithmetic, its profile file, and the simulator's accounting of modeled
// time (timing-only runs model the same time without computing).
#include <gtest/gtest.h>

#include <algorithm>

#include <cstdio>
#include <fstream>

#include "npu/device.h"
#include "npu/layout_int4.h"
#include "npu/matmul.h"
#include "npu/matmul_int4.h"
#include "npu/sim/board_model.h"

namespace ork::npu {
namespace {

using sim::BoardProfile;
using sim::TaskWork;

TEST(BoardModel, TaskTimeIsTheSlowerOfComputeAndMemoryPlusOverheads) {
  BoardProfile p;
  p.npu_clock_ghz = 1, p.int8_macs_per_cycle = 1000, p.fp16_macs_per_cycle = 500, p.mac_efficiency = 1;
  p.ddr_gbps = 10, p.submit_us = 100, p.task_us = 2, p.domain_switch_us = 50;
  std::array<std::vector<TaskWork>, 3> one{};
  one[0] = {TaskWork{false, 1'000'000, 1000}};  // compute-bound: 1000 ns vs 100 ns
  sim::JobCost c = sim::cost_job(p, one, false);
  EXPECT_DOUBLE_EQ(c.core_busy_ns[0], 2000 + 1000);
  EXPECT_DOUBLE_EQ(c.total_ns, 100000 + 3000);
  one[0] = {TaskWork{true, 1'000'000, 1000}};  // fp16 at half the rate
  EXPECT_DOUBLE_EQ(sim::cost_job(p, one, false).core_busy_ns[0], 2000 + 2000);
  p.int4_macs_per_cycle = 2000;
  one[0] = {TaskWork{false, 1'000'000, 1000, /*int4=*/true}};  // int4 at twice the int8 rate
  EXPECT_DOUBLE_EQ(sim::cost_job(p, one, false).core_busy_ns[0], 2000 + 500);
  one[0] = {TaskWork{false, 1000, 1'000'000}};  // memory-bound: 100 µs at 10 GB/s
  c = sim::cost_job(p, one, true);
  EXPECT_DOUBLE_EQ(c.core_busy_ns[0], 2000 + 100000);
  EXPECT_DOUBLE_EQ(c.total_ns, 100000 + 50000 + 102000);
  EXPECT_EQ(c.ddr_bytes, 1'000'000u);
  // Three cores share the DDR: the same bytes per core take three times as long.
  std::array<std::vector<TaskWork>, 3> three{};
  for (auto& v : three) v = {TaskWork{false, 1000, 1'000'000}};
  c = sim::cost_job(p, three, false);
  for (double t : c.core_busy_ns) EXPECT_DOUBLE_EQ(t, 2000 + 300000);
  EXPECT_EQ(sim::cost_job(p, {}, false).total_ns, 0);
}

// Two readers at once (a matmul split along N): each moves its bytes after its fixed part at the rate
// it reaches alone; together they never exceed ddr_total_gbps.
TEST(BoardModel, OverlappedSidesShareTheDdr) {
  sim::BoardProfile p;
  p.ddr_total_gbps = 10;  // bytes per ns
  // Rates 4 + 4 below the total: each side takes its own time.
  EXPECT_DOUBLE_EQ(sim::cost_overlapped_ns(p, {1100, 100, 4000}, {1010, 10, 4000}), 1100);
  // Rates 8 + 8 above it, both moving from t = 0: 16000 bytes at 10 per ns.
  EXPECT_NEAR(sim::cost_overlapped_ns(p, {1000, 0, 8000}, {1000, 0, 8000}), 1600, 1e-6);
  // The NPU's fixed 500 ns first: the CPU moves alone (8/ns), then both share; CPU 8000 bytes, NPU
  // 8000 bytes at 8/ns alone. 0..500: CPU moves 4000; then 16/ns asked, 10 given (5 each): the CPU's
  // last 4000 take 800 ns (t = 1300), the NPU has 4000 left at t = 1300, alone at 8/ns: 500 more.
  EXPECT_NEAR(sim::cost_overlapped_ns(p, {1500, 500, 8000}, {1000, 0, 8000}), 1800, 1e-6);
  // A side with no bytes takes its own time.
  EXPECT_DOUBLE_EQ(sim::cost_overlapped_ns(p, {300, 300, 0}, {200, 0, 1000}), 300);
  // Never faster than the slower side alone, never slower than both one after the other.
  for (double f : {0.1, 0.5, 0.9}) {
    const sim::OverlapSide npu{134e3 + f * 1e6, 134e3, f * 26e6}, cpu{10e3 + (1 - f) * 26e6 / 17, 10e3, (1 - f) * 26e6};
    const double t = sim::cost_overlapped_ns(sim::BoardProfile{}, npu, cpu);
    EXPECT_GE(t, std::max(npu.ns, cpu.ns) - 1e-6);
    EXPECT_LE(t, npu.ns + cpu.ns);
    EXPECT_GE(t, 26e6 / sim::BoardProfile{}.ddr_total_gbps);
  }
}

TEST(BoardModel, ProfileFileOverridesNamedFieldsAndRejectsTheRest) {
  const std::string path = ::testing::TempDir() + "/ork_board_profile.json";
  auto write = [&](const char* text) { std::ofstream(path) << text; };
  write(R"({"name": "my-board", "ddr_gbps": 19.5, "submit_us": 80})");
  const BoardProfile p = sim::load_board_profile(path);
  EXPECT_EQ(p.name, "my-board");
  EXPECT_EQ(p.ddr_gbps, 19.5);
  EXPECT_EQ(p.submit_us, 80);
  EXPECT_EQ(p.task_us, BoardProfile{}.task_us);
  EXPECT_NE(sim::board_profile_json(p).find("\"ddr_gbps\":19.5"), std::string::npos);
  for (const auto& [text, needle] : std::vector<std::pair<const char*, const char*>>{
           {R"({"ddr_gbs": 19})", "unknown board profile field \"ddr_gbs\""},
           {R"({"submit_us": -1})", "\"submit_us\" must be a positive number"},
           {R"({"submit_us": "fast"})", "\"submit_us\" must be a positive number"},
           {R"({"mac_efficiency": 1.5})", "at most 1"},
           {R"([1, 2])", "a JSON object"},
           {R"({"name": 3})", "\"name\" must be a string"},
           {"{not json", "not a JSON board profile"}}) {
    write(text);
    try {
      sim::load_board_profile(path);
      ADD_FAILURE() << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(sim::load_board_profile(path + ".missing"), Error);
  std::remove(path.c_str());
}

TEST(BoardModel, TheSimulatorAccountsModeledTimeAndTimingOnlyModelsTheSame) {
  double modeled[2] = {0, 0};
  for (int timing_only = 0; timing_only < 2; ++timing_only) {
    sim::SimOptions o;
    o.timing_only = timing_only == 1;
    auto dev = Device::open_sim(o);
    const int64_t m = 8, k = 512, n = 256;
    std::vector<int8_t> a(size_t(m * k), 3), b(size_t(n * k), 2);
    PackedWeight w = pack_weight(*dev, b.data(), n, k, 0);
    MatmulScratch scratch(*dev);
    std::vector<int32_t> c(size_t(m * n), -1);
    matmul_i8(*dev, scratch, w, a.data(), m, c.data());
    matmul_i8(*dev, scratch, w, a.data(), m, c.data());
    const sim::SimStats s = dev->sim_kernel()->stats();
    EXPECT_EQ(s.submits, 2u);
    EXPECT_GT(s.modeled_ns, 2 * o.board.submit_us * 1e3);
    // Three tasks (N over three cores), each reading A once: 2 submits × (3·A + B + C).
    EXPECT_EQ(s.modeled_ddr_bytes, 2 * uint64_t(3 * m * k + n * k + m * n * 4));
    double busy = 0;
    for (double t : s.modeled_core_busy_ns) busy += t;
    EXPECT_GT(busy, 0);
    modeled[timing_only] = s.modeled_ns;
    if (timing_only == 0) {
      EXPECT_EQ(c[0], 3 * 2 * k);  // computed
    } else {
      EXPECT_NE(c[0], 3 * 2 * k);  // not computed: whatever the scratch held
    }
  }
  EXPECT_DOUBLE_EQ(modeled[0], modeled[1]);
}

// The simulator prices an int4 task from its own precision field (CNA_CONV_CON1 = int4): its MACs at
// int4_macs_per_cycle and its bytes halved (A and B are int4, C int16). A profile that makes compute
// dominate shows the rate: halving int4_macs_per_cycle doubles each task's compute time.
TEST(BoardModel, Int4TasksArePricedAtTheInt4RateFromTheirPrecisionField) {
  const int64_t m = 128, k = 480, n = 4096;  // one task: 128 × 480 × 4096
  std::vector<int8_t> a(size_t(m * k), 1), b(size_t(n * k), -1);
  double core_ns[2] = {0, 0};
  for (int slow = 0; slow < 2; ++slow) {
    sim::SimOptions o;
    o.cores = 1;
    o.board.mac_efficiency = 1;
    o.board.ddr_gbps = 1e6;  // memory never binds
    o.board.int4_macs_per_cycle = slow ? 1024 : 2048;
    auto dev = Device::open_sim(o);
    Buffer wb = dev->alloc(packed_weight_bytes_i4(n, k), 0);
    pack_b_i4(b.data(), n, k, wb.host());
    wb.sync_to_device();
    std::vector<int32_t> c(size_t(m * n));
    matmul_i4(*dev, wb, a.data(), m, k, n, c.data());
    EXPECT_EQ(c[0], -k);
    const sim::SimStats s = dev->sim_kernel()->stats();
    EXPECT_EQ(s.modeled_ddr_bytes, uint64_t(m * k / 2 + n * k / 2 + m * n * 2));
    core_ns[slow] = s.modeled_core_busy_ns[0] - o.board.task_us * 1e3;
  }
  const double macs = double(m) * k * n;
  EXPECT_NEAR(core_ns[0], macs / 2048.0, 1.0);  // ns at 1 GHz
  EXPECT_NEAR(core_ns[1], 2 * core_ns[0], 1.0);
}

}  // namespace
}  // namespace ork::npu
