// runtime::Scheduler — where a linear layer (or a group of linears sharing one input: a layer's
// Q/K/V, its gate and up) runs on an NPU device: on the NPU, or on the CPU's w8a8 int8 path
// (CpuInt8Matmul, bit-identical to the NPU's arithmetic, so the tokens are the same either way).
//
//   npu   everything on the NPU (the default: the board model is not calibrated on a board yet);
//   cpu   everything on the CPU int8 path (the device holds the weights but runs nothing);
//   auto  per call shape, whichever the board cost model says finishes first: the NPU job's modeled
//         time (npu/job_estimate.h: submit, tasks, MACs, DDR), the CPU's (sim::cost_cpu_matmul_ns),
//         or a split along N — the first rows of every weight on the NPU, the rest on the CPU at the
//         same time, sharing the DDR (sim::cost_overlapped_ns) — at the best of kSplitSteps row
//         fractions. Decode (M = 1) of small weights goes to the CPU when one submit costs more than
//         reading the weight; large decode weights split, so the CPU reads while the NPU's submit
//         is in flight. Streamed plans stay on the NPU (a CPU copy of a streamed weight would hold
//         in RAM what the plan streams).
// Pure decisions; thread-safe (const).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "npu/layout.h"
#include "npu/sim/board_model.h"

namespace ork::runtime {

enum class Schedule { kNpu, kCpu, kAuto };

// "npu" | "cpu" | "auto"; anything else is an ork::Error naming the value.
Schedule parse_schedule(const std::string& s);
const char* schedule_name(Schedule s);

struct Choice {
  bool cpu = false;    // everything on the CPU
  bool split = false;  // npu_rows[i] first rows of weight i on the NPU, the rest on the CPU, at once
  double npu_ns = 0;   // modeled board time on the NPU (every chunk's submit)
  double cpu_ns = 0;   // modeled board time on the CPU (every weight of the group)
  double split_ns = 0;       // modeled board time of the best split (0: none possible)
  double split_npu_ns = 0;   // of which the NPU job alone (what the simulator charges for it)
  std::vector<int64_t> npu_rows;  // per weight, a multiple of the kernel group, 32 (i8) / 64 (i4) (split only)
  const char* device() const { return split ? "split" : cpu ? "cpu" : "npu"; }
};

// Row fractions a split tries: j / kSplitSteps of every weight on the NPU, j = 1 … kSplitSteps − 1.
constexpr int kSplitSteps = 256;

class Scheduler {
 public:
  // cores: NPU cores a job may use; m_max: rows per NPU submit; resident: the plan keeps every weight
  // on the device; wtype: the device weights (kI4: NPU jobs of int4 tasks, W4A8 by splitting, and
  // the CPU side priced as the CPU int4 path, runtime/cpu_int4_cost.h); a4: int4 activations too
  // (W4A4, `--npu-wtype i4a4`: one int4 row per token in the NPU jobs; kI4 only).
  Scheduler(Schedule schedule, npu::sim::BoardProfile profile, uint32_t cores, int64_t m_max, bool resident,
            npu::Dtype wtype = npu::Dtype::kI8, bool a4 = false);

  // The choice for (m × k) inputs against weights with ns[i] output rows each, run as one NPU job.
  // can_split: the NPU can run the first rows of these weights (one resident slice each).
  Choice choose(int64_t m, int64_t k, std::span<const int64_t> ns, bool can_split = true) const;

  Schedule schedule() const { return schedule_; }
  const npu::sim::BoardProfile& profile() const { return profile_; }
  // Why `auto` keeps everything on the NPU, or "" when it decides per call.
  const std::string& fixed_reason() const { return fixed_reason_; }
  npu::Dtype wtype() const { return wtype_; }
  bool int4_activations() const { return a4_; }
  // The modeled board time of an (m × k) · (n × k)ᵀ call on the CPU path of this weight type.
  double cpu_ns(int64_t m, int64_t k, int64_t n) const;

 private:
  Schedule schedule_;
  npu::sim::BoardProfile profile_;
  uint32_t cores_;
  int64_t m_max_;
  npu::Dtype wtype_;
  bool a4_;
  std::string fixed_reason_;
};

}  // namespace ork::runtime
