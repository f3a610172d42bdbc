// runtime::calibrate_cpu — measures the CPU parameters of the board cost model (cpu_read_gbps,
// cpu_int8_gmacs, cpu_call_us; sim/board_model.h) with ork's own w8a8 kernel (ops::matmul_w8a8, the
// path the hybrid schedule runs on the CPU), by the wall clock of this machine, median of `repeats`.
// Not thread-safe with other users of `pool`.
#pragma once

#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "npu/probe_calibrate.h"

namespace ork::runtime {

// Sets the three cpu_* fields of `p` and returns how each was measured.
std::vector<npu::CalibrationStep> calibrate_cpu(ThreadPool& pool, npu::sim::BoardProfile& p, int repeats);

}  // namespace ork::runtime
