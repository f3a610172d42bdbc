// ork probe calibrate's method, checked on the simulator, whose clock is the cost model: the probe
// must recover the profile the simulator runs with (the built-in one and a different one), or its
// pairs of jobs do not isolate the terms they claim to.
#include <gtest/gtest.h>

#include "npu/device.h"
#include "npu/probe_calibrate.h"

namespace ork::npu {
namespace {

sim::BoardProfile calibrate_with(const sim::BoardProfile& truth) {
  sim::SimOptions o;
  o.board = truth;
  o.timing_only = true;
  auto dev = Device::open_sim(o);
  const NpuCalibration cal = calibrate_npu(*dev, sim::BoardProfile{}, 1);
  EXPECT_EQ(cal.clock, "modeled");
  return cal.profile;
}

void expect_recovers(const sim::BoardProfile& truth) {
  const sim::BoardProfile got = calibrate_with(truth);
  EXPECT_NEAR(got.submit_us, truth.submit_us, 0.01 * truth.submit_us);
  EXPECT_NEAR(got.task_us, truth.task_us, 0.02 * truth.task_us);
  EXPECT_NEAR(got.ddr_gbps, truth.ddr_gbps, 0.01 * truth.ddr_gbps);
  EXPECT_NEAR(got.mac_efficiency, truth.mac_efficiency, 0.01 * truth.mac_efficiency);
  EXPECT_NEAR(got.domain_switch_us, truth.domain_switch_us, 0.01 * truth.domain_switch_us);
}

TEST(ProbeCalibrate, RecoversTheBuiltInProfileFromTheModeledClock) { expect_recovers(sim::BoardProfile{}); }

TEST(ProbeCalibrate, RecoversADifferentProfile) {
  sim::BoardProfile p;
  p.submit_us = 61;
  p.task_us = 5.5;
  p.ddr_gbps = 19.5;
  p.mac_efficiency = 0.35;
  p.domain_switch_us = 22;
  expect_recovers(p);
}

TEST(ProbeCalibrate, SpecificationFieldsAreNotMeasured) {
  sim::BoardProfile truth;
  truth.int8_macs_per_cycle = 2048;  // what the simulator runs with; the probe keeps its base's value
  truth.mac_efficiency = 0.25;       // 512 MACs per cycle sustained
  const sim::BoardProfile got = calibrate_with(truth);
  EXPECT_EQ(got.int8_macs_per_cycle, sim::BoardProfile{}.int8_macs_per_cycle);
  EXPECT_NEAR(got.mac_efficiency, 0.5, 0.005) << "512 of the base's 1024 MACs per cycle";
}

}  // namespace
}  // namespace ork::npu
