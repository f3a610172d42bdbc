#include "runtime/schedule.h"

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

Choice Scheduler::choose(int64_t m, int64_t k, std::span<const int64_t> ns) const {
  Choice c;
  c.npu_ns = npu::estimate_job_ns(profile_, m, k, ns, cores_, m_max_);
  for (int64_t n : ns) c.cpu_ns += npu::sim::cost_cpu_matmul_ns(profile_, m, k, n);
  switch (schedule_) {
    case Schedule::kNpu: c.cpu = false; break;
    case Schedule::kCpu: c.cpu = true; break;
    case Schedule::kAuto: c.cpu = fixed_reason_.empty() && c.cpu_ns < c.npu_ns; break;
  }
  return c;
}

}  // namespace ork::runtime
