#include "runtime/schedule.h"

#include <algorithm>

#include "core/error.h"
#include "core/quote.h"
#include "npu/job_estimate.h"

namespace ork::runtime {

Schedule parse_schedule(const std::string& s) {
  if (s == "npu") return Schedule::kNpu;
  if (s == "cpu") return Schedule::kCpu;
  if (s == "auto") return Schedule::kAuto;
  fail("schedule ", quote(s), " is not one of auto, npu, cpu");
}

const char* schedule_name(Schedule s) {
  switch (s) {
    case Schedule::kNpu: return "npu";
    case Schedule::kCpu: return "cpu";
    case Schedule::kAuto: return "auto";
  }
  return "?";
}

Scheduler::Scheduler(Schedule schedule, npu::sim::BoardProfile profile, uint32_t cores, int64_t m_max, bool resident)
    : schedule_(schedule), profile_(std::move(profile)), cores_(cores), m_max_(m_max) {
  ORK_CHECK(cores_ >= 1 && cores_ <= 3 && m_max_ >= 1, "scheduler: cores ", cores_, ", m_max ", m_max_);
  if (schedule_ == Schedule::kAuto && !resident) fixed_reason_ = "the plan streams its weights";
}

namespace {

// Rows of an n-row weight that fraction j / kSplitSteps puts on the NPU: a multiple of 32 leaving at
// least 32 rows to the CPU, or 0 when there is no such split.
int64_t split_rows(int64_t n, int j) {
  const int64_t rows = n * j / kSplitSteps / 32 * 32;
  return rows >= 32 && rows <= n - 32 ? rows : 0;
}

}  // namespace

Choice Scheduler::choose(int64_t m, int64_t k, std::span<const int64_t> ns, bool can_split) const {
  Choice c;
  c.npu_ns = npu::estimate_job_ns(profile_, m, k, ns, cores_, m_max_);
  for (int64_t n : ns) c.cpu_ns += npu::sim::cost_cpu_matmul_ns(profile_, m, k, n);
  const bool decides = schedule_ == Schedule::kAuto && fixed_reason_.empty();
  if (decides && can_split) {
    for (int j = 1; j < kSplitSteps; ++j) {
      std::vector<int64_t> rows;
      npu::sim::OverlapSide cpu;
      for (int64_t n : ns) {
        const int64_t r = split_rows(n, j);
        if (r == 0) break;
        rows.push_back(r);
        cpu.ns += npu::sim::cost_cpu_matmul_ns(profile_, m, k, n - r);
        cpu.fixed_ns += profile_.cpu_call_us * 1e3;
        cpu.bytes += npu::sim::cpu_matmul_bytes(k, n - r);
      }
      if (rows.size() != ns.size()) continue;
      const npu::sim::OverlapSide npu_side = npu::estimate_job_side(profile_, m, k, rows, cores_, m_max_);
      const double t = npu::sim::cost_overlapped_ns(profile_, npu_side, cpu);
      if (c.split_ns == 0 || t < c.split_ns) {
        c.split_ns = t;
        c.split_npu_ns = npu_side.ns;
        c.npu_rows = std::move(rows);
      }
    }
  }
  switch (schedule_) {
    case Schedule::kNpu: c.cpu = false; break;
    case Schedule::kCpu: c.cpu = true; break;
    case Schedule::kAuto:
      c.cpu = decides && c.cpu_ns < c.npu_ns;
      if (c.split_ns > 0 && c.split_ns < std::min(c.npu_ns, c.cpu_ns)) c.cpu = false, c.split = true;
      break;
  }
  if (!c.split) c.npu_rows.clear();
  return c;
}

}  // namespace ork::runtime
