// The matmul parity probe: runs a fixed suite of shapes through the whole NPU path (pack the weight,
// plan, register commands, one submit, read C) and compares each with a CPU reference: int8 must be
// bit-exact, fp16 (f32 accumulation) within a normalized error of kF16Tolerance.
//
// A safe first contact with a board: the suite runs in three phases, each a step further from what
// single-task public code ran on boards — (1) shapes that plan to ONE task on one core, (2) shapes
// that chain several tasks on one core (the PC follows each task's tail), (3) shapes spread over all
// cores. Each submit has the driver's timeout (6 s); by default the probe stops at the first failure,
// whose error names the shape, the phase and what the kernel reported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npu/device.h"
#include "npu/layout.h"
#include "npu/task_split.h"

namespace ork::npu {

// |c − ref| / (Σ|a·b| + 1e-30) must stay at or below this for fp16 shapes.
constexpr double kF16Tolerance = 1e-4;

enum class ProbePhase { kSingleTask, kChained, kMultiCore };
const char* phase_name(ProbePhase p);  // "single-task", "chained", "multi-core"

struct MatmulProbeShape {
  int64_t m = 0, k = 0, n = 0;
  Dtype dtype = Dtype::kI8;
  ProbePhase phase = ProbePhase::kSingleTask;
  uint32_t cores = 1;   // cores the run was allowed
  bool ok = false;
  double max_err = 0;   // int8: max |c − ref|; fp16: max normalized error
  uint64_t tasks = 0;   // NPU tasks of the job
  std::string error;    // the exception text when the shape threw
};

struct MatmulProbeResult {
  int passed = 0, failed = 0;
  bool stopped = false;  // stopped at the first failure before the end of the suite
  std::vector<MatmulProbeShape> shapes;
  // {"passed":n,"failed":n,"stopped":b,"shapes":[{"phase":"chained","cores":1,"m":..,"k":..,"n":..,
  //  "dtype":"i8","ok":true,"max_err":0,"tasks":3},…]} (+ "error":"…" on shapes that threw)
  std::string to_json() const;
};

// The shapes: M in {1, 4, 7, 64, 333, 512}; K and N from 3 to 16384 including odd sizes, K > 8192
// (segmented), N spread over all cores; about 0.5 G multiply-accumulates per phase, so the suite
// runs in seconds on the simulator.
std::vector<MatmulProbeShape> matmul_probe_shapes();
// The runs of the three phases for a device with `cores` cores, in order.
std::vector<MatmulProbeShape> matmul_probe_plan(uint32_t cores);
// Weights go to domain `domain`. `keep_going`: run every shape even after a failure.
MatmulProbeResult probe_matmul(Device& dev, uint32_t domain = 0, bool keep_going = false);

}  // namespace ork::npu
