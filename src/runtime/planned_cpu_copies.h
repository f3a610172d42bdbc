// runtime::planned_cpu_copy_bytes — the RAM the CPU copies of a `--schedule auto|cpu` run take,
// before loading. HybridMatmul copies a whole weight (int8 rows and a scale per row; int4: the codes
// two per byte and a scale per row) on that weight's first call that runs on the CPU or splits, and
// keeps it (ScheduleStats::cpu_weight_bytes). This asks the Scheduler, for every call of the forward
// pass (model::linear_calls), where a decode step (m = 1) and a full pass of m_max rows run it, and
// sums the copies of the weights it puts on the CPU side of either.
// What it does not cover: passes of other row counts (a prompt's last, shorter chunk; a routed
// expert's share of the tokens) can choose differently and copy more weights, up to every weight's
// copy (all_bytes).
// Pure function of its arguments; thread-safe.
#pragma once

#include <cstdint>

#include "model/weights.h"
#include "runtime/schedule.h"
#include "weights/plan.h"

namespace ork::runtime {

struct PlannedCpuCopies {
  uint64_t bytes = 0;      // the weights a decode step or a full pass puts on the CPU
  uint32_t weights = 0;    // how many
  uint64_t all_bytes = 0;  // every linear's copy (the most other row counts can add up to)
};

// The bytes of one weight's CPU copy for device weights of `wtype` (kI8 or kI4).
uint64_t cpu_copy_bytes(const model::Linear& w, npu::Dtype wtype);

// `plan`: the device plan (resident weights of one slice in one domain can split, as
// NpuMatmul::runs_as_one_job says); its m_max rows are a full pass.
PlannedCpuCopies planned_cpu_copy_bytes(const Scheduler& scheduler, const model::Weights& weights,
                                        const weights::Plan& plan);

}  // namespace ork::runtime
