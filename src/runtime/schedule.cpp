#include "runtime/schedule.h"

#include <algorithm>

#include "core/error.h"
#include "core/quote.h"
#include "npu/job_estimate.h"
#include "runtime/cpu_int4_cost.h"

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

Scheduler::Scheduler(Schedule schedule, npu::sim::BoardProfile profile, uint32_t cores, int64_t m_max, bool resident,
                     npu::Dtype wtype, bool a4)
    : schedule_(schedule), profile_(std::move(profile)), cores_(cores), m_max_(m_max), wtype_(wtype), a4_(a4) {
  ORK_CHECK(wtype_ == npu::Dtype::kI8 || wtype_ == npu::Dtype::kI4, "scheduler: device weights ",
            npu::dtype_name(wtype_), " (i8 or i4)");
  ORK_CHECK(!a4_ || wtype_ == npu::Dtype::kI4, "scheduler: int4 activations need int4 weights");
  ORK_CHECK(cores_ >= 1 && cores_ <= 3 && m_max_ >= 1, "scheduler: cores ", cores_, ", m_max ", m_max_);
  if (schedule_ == Schedule::kAuto && !resident) fixed_reason_ = "the plan streams its weights";
}

namespace {

// Rows of an n-row weight that fraction j / kSplitSteps puts on the NPU: a multiple of the kernel
// group g leaving at least g rows to the CPU, or 0 when there is no such split.
int64_t split_rows(int64_t n, int j, int64_t g) {
  const int64_t rows = n * j / kSplitSteps / g * g;
  return rows >= g && rows <= n - g ? rows : 0;
}

}  // namespace

double Scheduler::cpu_ns(int64_t m, int64_t k, int64_t n) const {
  return wtype_ == npu::Dtype::kI4 ? cost_cpu_int4_matmul_ns(profile_, m, k, n)
                                   : npu::sim::cost_cpu_matmul_ns(profile_, m, k, n);
}

Choice Scheduler::choose(int64_t m, int64_t k, std::span<const int64_t> ns, bool can_split) const {
  Choice c;
  c.npu_ns = npu::estimate_job_ns(profile_, m, k, ns, cores_, m_max_, wtype_, a4_);
  for (int64_t n : ns) c.cpu_ns += cpu_ns(m, k, n);
  const bool i4 = wtype_ == npu::Dtype::kI4;
  const bool decides = schedule_ == Schedule::kAuto && fixed_reason_.empty();
  if (decides && can_split) {
    for (int j = 1; j < kSplitSteps; ++j) {
      std::vector<int64_t> rows;
      npu::sim::OverlapSide cpu;
      for (int64_t n : ns) {
        const int64_t r = split_rows(n, j, npu::b_n_group(wtype_));
        if (r == 0) break;
        rows.push_back(r);
        cpu.ns += cpu_ns(m, k, n - r);
        cpu.fixed_ns += profile_.cpu_call_us * 1e3;
        cpu.bytes += i4 ? cpu_int4_matmul_bytes(k, n - r) : npu::sim::cpu_matmul_bytes(k, n - r);
      }
      if (rows.size() != ns.size()) continue;
      const npu::sim::OverlapSide npu_side = npu::estimate_job_side(profile_, m, k, rows, cores_, m_max_, wtype_, a4_);
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
