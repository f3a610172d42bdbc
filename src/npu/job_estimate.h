// The modeled board time of an NPU job before it runs: the job ork would submit for C_i (M×N_i) =
// A (M×K) · B_iᵀ (npu::plan_job's tasks, in chunks of at most m_max rows, one submit per chunk)
// priced by the board cost model (sim/board_model.h) exactly as the simulator prices the tasks it
// decodes. The hybrid schedule (runtime/schedule.h) compares it with the CPU's modeled time.
// Pure, thread-safe.
#pragma once

#include <cstdint>
#include <span>

#include "npu/matmul_job.h"
#include "npu/sim/board_model.h"

namespace ork::npu {

// Per core, the work of each of `job`'s tasks: MACs and bytes (A block + B slice + C block) as the
// simulated core accounts them (sim/executor.cpp).
std::array<std::vector<sim::TaskWork>, 3> job_task_work(const JobPlan& job);

// ns: one entry per weight of the job (one entry: a single matmul). cores: 1..3. m_max ≥ 1.
// wtype kI4: int4 weights, W4A8 by splitting — each of the m rows is two int4 rows of the job —
// or, with a4 (W4A4, `--npu-wtype i4a4`), one int4 row each.
double estimate_job_ns(const sim::BoardProfile& p, int64_t m, int64_t k, std::span<const int64_t> ns,
                       uint32_t cores, int64_t m_max, Dtype wtype = Dtype::kI8, bool a4 = false);
// The same job as a side of an overlapped call (sim::cost_overlapped_ns): its time, its submits'
// fixed cost, its DDR bytes.
sim::OverlapSide estimate_job_side(const sim::BoardProfile& p, int64_t m, int64_t k, std::span<const int64_t> ns,
                                   uint32_t cores, int64_t m_max, Dtype wtype = Dtype::kI8, bool a4 = false);

}  // namespace ork::npu
