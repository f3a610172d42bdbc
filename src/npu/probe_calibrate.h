// npu::calibrate_npu — measures the NPU parameters of the board cost model (sim/board_model.h) on a
// device, for `ork probe calibrate`: submit cost, per-task cost, DDR bandwidth, MAC efficiency and
// domain-switch cost, each from a pair of jobs that differ in that one term.
//
// The clock: on the board, the wall clock around each job (median of `repeats`; A packing and C
// unpacking included, small for these shapes); on the simulator, the modeled time of each job
// (SimStats::modeled_ns) — there the calibration recovers the profile the simulator runs with, a
// self-check of the method (tests/npu/probe_calibrate_test.cpp), and says so. The NPU's clock and
// MACs per cycle are the chip's specification and are not measured (the efficiency is).
// Not thread-safe with other users of the device's scratch.
#pragma once

#include <string>
#include <vector>

#include "npu/device.h"
#include "npu/sim/board_model.h"

namespace ork::npu {

struct CalibrationStep {
  std::string what;     // "submit_us", …: the profile field it sets
  double value = 0;
  std::string how;      // the jobs compared
};

struct NpuCalibration {
  std::string clock;    // "modeled" (simulator) | "wall"
  sim::BoardProfile profile;  // `base` with the measured fields replaced
  std::vector<CalibrationStep> steps;
  std::vector<std::string> notes;  // fields not measured, and why
};

// repeats ≥ 1 (the simulator's modeled clock needs 1).
NpuCalibration calibrate_npu(Device& dev, const sim::BoardProfile& base, int repeats);

}  // namespace ork::npu
