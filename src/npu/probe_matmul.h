// The matmul parity probe: runs a fixed suite of shapes through the whole NPU path (pack the weight,
// plan, register commands, one submit, read C) and compares each with a CPU reference: int8 must be
// bit-exact, fp16 (f32 accumulation) within a normalized error of kF16Tolerance.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npu/device.h"
#include "npu/layout.h"

namespace ork::npu {

// |c − ref| / (Σ|a·b| + 1e-30) must stay at or below this for fp16 shapes.
constexpr double kF16Tolerance = 1e-4;

struct MatmulProbeShape {
  int64_t m = 0, k = 0, n = 0;
  Dtype dtype = Dtype::kI8;
  bool ok = false;
  double max_err = 0;   // int8: max |c − ref|; fp16: max normalized error
  uint64_t tasks = 0;   // NPU tasks of the job
  std::string error;    // the exception text when the shape threw
};

struct MatmulProbeResult {
  int passed = 0, failed = 0;
  std::vector<MatmulProbeShape> shapes;
  // {"passed":n,"failed":n,"shapes":[{"m":..,"k":..,"n":..,"dtype":"i8","ok":true,"max_err":0,
  //  "tasks":3},…]} (+ "error":"…" on shapes that threw)
  std::string to_json() const;
};

// The suite: M in {1, 4, 7, 64, 333, 512}; K and N from 3 to 16384 including odd sizes, K > 8192
// (segmented), N spread over all cores; about 0.5 G multiply-accumulates in all, so it runs in
// seconds on the simulator. Weights go to domain `domain`.
std::vector<MatmulProbeShape> matmul_probe_shapes();
MatmulProbeResult probe_matmul(Device& dev, uint32_t domain = 0);

}  // namespace ork::npu
