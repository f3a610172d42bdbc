#include "npu/job_estimate.h"

#include <algorithm>

#include "core/error.h"

namespace ork::npu {

std::array<std::vector<sim::TaskWork>, 3> job_task_work(const JobPlan& job) {
  std::array<std::vector<sim::TaskWork>, 3> per_core;
  for (uint32_t core = 0; core < 3; ++core) {
    for (uint32_t j = job.core_start[core]; j < job.core_start[core] + job.core_count[core]; ++j) {
      const JobPlan::Entry& e = job.order[j];
      const TaskTile& t = job.parts[e.part].tasks[e.task];
      const uint64_t macs = uint64_t(t.mt) * uint64_t(t.ks) * uint64_t(t.nt);
      if (job.dtype == Dtype::kI4) {  // int4 A and B (two codes a byte), int16 C
        const uint64_t a = uint64_t(t.mt) * uint64_t(t.ks) / 2, b = uint64_t(t.nt) * uint64_t(t.ks) / 2;
        per_core[core].push_back({false, macs, a + b + uint64_t(t.mt) * uint64_t(t.nt) * 2, true});
        continue;
      }
      const uint64_t a = uint64_t(t.mt) * uint64_t(t.ks), b = uint64_t(t.nt) * uint64_t(t.ks);
      const uint64_t c = uint64_t(t.mt) * uint64_t(t.nt) * 4;
      per_core[core].push_back({false, macs, a + b + c});
    }
  }
  return per_core;
}

namespace {

// One submit of `m` rows (m ≤ m_max; for kI4 two int4 rows each, one with a4).
sim::JobCost one_submit(const sim::BoardProfile& p, int64_t m, int64_t k, std::span<const int64_t> ns, uint32_t cores,
                        Dtype wtype, bool a4) {
  const int64_t rows = wtype == Dtype::kI4 && !a4 ? 2 * m : m;
  return sim::cost_job(p, job_task_work(plan_job(rows, k, ns, wtype, cores)), false);
}

}  // namespace

sim::OverlapSide estimate_job_side(const sim::BoardProfile& p, int64_t m, int64_t k, std::span<const int64_t> ns,
                                   uint32_t cores, int64_t m_max, Dtype wtype, bool a4) {
  ORK_CHECK(m >= 1 && m_max >= 1, "estimate_job_ns: m ", m, ", m_max ", m_max);
  const int64_t full = m / m_max, rest = m % m_max;
  sim::OverlapSide s;
  const auto add = [&](const sim::JobCost& c, double times) {
    s.ns += times * c.total_ns;
    s.fixed_ns += times * p.submit_us * 1e3;
    s.bytes += times * double(c.ddr_bytes);
  };
  if (full > 0) add(one_submit(p, m_max, k, ns, cores, wtype, a4), double(full));
  if (rest > 0) add(one_submit(p, rest, k, ns, cores, wtype, a4), 1);
  return s;
}

double estimate_job_ns(const sim::BoardProfile& p, int64_t m, int64_t k, std::span<const int64_t> ns,
                       uint32_t cores, int64_t m_max, Dtype wtype, bool a4) {
  return estimate_job_side(p, m, k, ns, cores, m_max, wtype, a4).ns;
}

}  // namespace ork::npu
