// runtime::calibrate_cpu — measures the CPU parameters of the board cost model (sim/board_model.h)
// with ork's own kernels, by the wall clock of this machine, median of `repeats`: cpu_read_gbps,
// cpu_int8_gmacs, cpu_call_us with ops::matmul_w8a8 (the path the hybrid schedule runs on the CPU);
// host_op_us with ops::rmsnorm on one row and cpu_f32_gflops with ops::attention (the host work of
// sim/host_cost.h). runtime::calibrate_ddr_total measures ddr_total_gbps: an NPU job and that CPU
// matmul reading at once. Not thread-safe with other users of `pool` or the device.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "npu/probe_calibrate.h"

namespace ork::runtime {

// Sets cpu_call_us, cpu_read_gbps, cpu_int8_gmacs, host_op_us and cpu_f32_gflops of `p` and returns
// how each was measured.
std::vector<npu::CalibrationStep> calibrate_cpu(ThreadPool& pool, npu::sim::BoardProfile& p, int repeats);

// On a board (dev is not the simulator): sets ddr_total_gbps of `p` from an M = 1 NPU job over a
// 4096 × 4096-per-core int8 weight and an M = 1 CPU matmul over a 8192 × 4096 int8 weight repeated
// at once for `window` (runtime/concurrent_rate.h), and returns the step. On the simulator it measures
// nothing (its modeled clock has no second reader to run beside a job) and returns no step.
std::vector<npu::CalibrationStep> calibrate_ddr_total(npu::Device& dev, ThreadPool& pool, npu::sim::BoardProfile& p,
                                                      std::chrono::milliseconds window);

}  // namespace ork::runtime
