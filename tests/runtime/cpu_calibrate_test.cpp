// The CPU half of `ork probe calibrate` (runtime/cpu_calibrate.h) and the concurrent-rate measure it
// uses for ddr_total_gbps (runtime/concurrent_rate.h), on this machine's CPU.
#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

#include "npu/device.h"
#include "runtime/concurrent_rate.h"
#include "runtime/cpu_calibrate.h"

namespace ork::runtime {
namespace {

TEST(CpuCalibrate, EveryCpuAndHostFieldIsMeasuredWithOrksKernels) {
  ThreadPool pool(2);
  npu::sim::BoardProfile p;
  const std::vector<npu::CalibrationStep> steps = calibrate_cpu(pool, p, 3);
  const auto value = [&](const std::string& field) {
    for (const auto& s : steps) {
      if (s.what == field) return s.value;
    }
    ADD_FAILURE() << field << " not measured";
    return -1.0;
  };
  EXPECT_EQ(value("cpu_call_us"), p.cpu_call_us);
  EXPECT_EQ(value("cpu_read_gbps"), p.cpu_read_gbps);
  EXPECT_EQ(value("cpu_int8_gmacs"), p.cpu_int8_gmacs);
  EXPECT_EQ(value("host_op_us"), p.host_op_us);
  EXPECT_EQ(value("cpu_f32_gflops"), p.cpu_f32_gflops);
  // An rmsnorm of 2048 floats is well under a millisecond and attention does some arithmetic, on any
  // machine that runs the suite.
  EXPECT_GT(p.host_op_us, 0.0);
  EXPECT_LT(p.host_op_us, 1000.0);
  EXPECT_GT(p.cpu_f32_gflops, 0.05);
}

TEST(CpuCalibrate, TheSimulatorHasNoSecondReaderForDdrTotal) {
  ThreadPool pool(1);
  auto dev = npu::Device::open_sim({});
  npu::sim::BoardProfile p;
  EXPECT_TRUE(calibrate_ddr_total(*dev, pool, p, std::chrono::milliseconds(10)).empty());
  EXPECT_EQ(p.ddr_total_gbps, npu::sim::BoardProfile{}.ddr_total_gbps);
}

// Each side moves 2 MB per unit of 2 ms of sleep. The rate is both sides' bytes over the elapsed time
// (exactly), the sides run at once (sequential sides would take two windows), and sleeps only
// overshoot, so both together never exceed 2 GB/s. No lower bound on the rate: on a loaded machine a
// 2 ms sleep can take far longer (CI saw this test fail on a floor of 1 GB/s).
TEST(ConcurrentRate, ConcurrentSidesAddTheirBytes) {
  const RateUnit unit = [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return uint64_t(2'000'000);
  };
  const auto window = std::chrono::milliseconds(200);
  const ConcurrentRate r = concurrent_gbps(unit, unit, window);
  EXPECT_GE(r.units_a, 1u);
  EXPECT_GE(r.units_b, 1u);
  EXPECT_GE(r.seconds, 0.2);
  EXPECT_LT(r.seconds, 0.4);  // at once, not one window after the other
  EXPECT_DOUBLE_EQ(r.gbps * r.seconds * 1e9, double(r.units_a + r.units_b) * 2e6);
  EXPECT_LE(r.gbps, 2.05);
}

TEST(ConcurrentRate, ConcurrentSideErrorsReachTheCaller) {
  const RateUnit ok = [] { return uint64_t(1); };
  const RateUnit bad = []() -> uint64_t { throw std::runtime_error("side failed"); };
  EXPECT_THROW(concurrent_gbps(ok, bad, std::chrono::milliseconds(5)), std::runtime_error);
  EXPECT_THROW(concurrent_gbps(bad, ok, std::chrono::milliseconds(5)), std::runtime_error);
}

}  // namespace
}  // namespace ork::runtime
