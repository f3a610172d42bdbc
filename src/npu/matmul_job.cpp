#include "npu/matmul_job.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "npu/matmul.h"
#include "npu/regcmd_gen.h"
#include "npu/regcmd_int4.h"
#include "npu/registers.h"

namespace ork::npu {

uint64_t JobPlan::macs() const {
  uint64_t s = 0;
  for (const SplitPlan& p : parts) s += p.macs();
  return s;
}

uint64_t JobPlan::regcmd_bytes() const { return uint64_t(tasks()) * kRegcmdStride; }

namespace {

// Fills order, core ranges, cores and c_base from the parts.
void order_tasks(JobPlan& job) {
  uint64_t c = 0;
  job.c_base.clear();
  for (const SplitPlan& p : job.parts) {
    job.c_base.push_back(c);
    c += p.c_bytes;
  }
  job.c_bytes = c;
  job.cores = 0;
  for (const SplitPlan& p : job.parts) job.cores = std::max(job.cores, p.cores);
  job.order.clear();
  for (uint32_t core = 0; core < 3; ++core) {
    job.core_start[core] = uint32_t(job.order.size());
    for (uint32_t i = 0; i < job.parts.size(); ++i) {
      const SplitPlan& p = job.parts[i];
      if (core >= p.cores) continue;
      for (uint32_t t = p.core_start[core]; t < p.core_start[core] + p.core_count[core]; ++t) {
        job.order.push_back({i, t});
      }
    }
    job.core_count[core] = uint32_t(job.order.size()) - job.core_start[core];
  }
}

}  // namespace

JobPlan plan_job(int64_t m, int64_t k, std::span<const int64_t> n, Dtype d, uint32_t max_cores,
                 std::span<const int64_t> layout_np) {
  ORK_CHECK(!n.empty(), "plan_job: no matmuls");
  ORK_CHECK(layout_np.empty() || layout_np.size() == n.size(), "plan_job: ", layout_np.size(),
            " layouts for ", n.size(), " matmuls");
  JobPlan job;
  job.dtype = d;
  job.m = m, job.k = k;
  for (size_t i = 0; i < n.size(); ++i) {
    job.parts.push_back(plan_split(m, k, n[i], d, max_cores, 0, layout_np.empty() ? 0 : layout_np[i]));
  }
  job.a_bytes = job.parts[0].a_bytes;
  order_tasks(job);
  return job;
}

JobPlan single_part_job(SplitPlan plan) {
  JobPlan job;
  job.dtype = plan.dtype;
  job.m = plan.m, job.k = plan.k;
  job.a_bytes = plan.a_bytes;
  job.parts.push_back(std::move(plan));
  order_tasks(job);
  return job;
}

void build_job(const JobPlan& job, const JobAddresses& addr, uint8_t* regcmd_host, uapi::Task* tasks) {
  ORK_CHECK(addr.b.size() == job.parts.size(), "build_job: ", addr.b.size(), " weight addresses for ",
            job.parts.size(), " matmuls");
  const size_t count = job.tasks();
  std::vector<uint64_t> e(kMatmulEntries);
  for (size_t j = 0; j < count; ++j) {
    const JobPlan::Entry& at = job.order[j];
    const TaskTile& t = job.parts[at.part].tasks[at.task];
    const uint64_t a = addr.a + t.a_off, b = addr.b[at.part] + t.b_off, c = addr.c + job.c_base[at.part] + t.c_off;
    ORK_CHECK(a < (uint64_t(1) << 32) && b < (uint64_t(1) << 32) && c < (uint64_t(1) << 32),
              "matmul task ", j, ": operand address above 4 GiB");
    if (job.dtype == Dtype::kI4) {
      Int4TaskDesc desc;
      desc.m = uint32_t(t.mt), desc.k = uint32_t(t.ks), desc.n = uint32_t(t.nt);
      desc.a_addr = uint32_t(a), desc.b_addr = uint32_t(b), desc.c_addr = uint32_t(c);
      gen_matmul_regcmd_i4(desc, e.data());
    } else {
      MatmulTaskDesc desc;
      desc.dtype = job.dtype;
      desc.m = uint32_t(t.mt), desc.k = uint32_t(t.ks), desc.n = uint32_t(t.nt);
      desc.a_addr = uint32_t(a), desc.b_addr = uint32_t(b), desc.c_addr = uint32_t(c);
      gen_matmul_regcmd(desc, e.data());
    }
    const uint64_t here = addr.regcmd + j * uint64_t(kRegcmdStride);
    const bool last_of_core = j + 1 == count || job.parts[job.order[j + 1].part].tasks[job.order[j + 1].task].core != t.core;
    if (!last_of_core) {
      const uint64_t next = here + kRegcmdStride;
      ORK_CHECK(next < (uint64_t(1) << 32), "matmul task ", j, ": regcmd address above 4 GiB");
      chain_regcmd(e.data(), kMatmulEntries, uint32_t(next), kMatmulEntries);
    }
    std::memcpy(regcmd_host + j * kRegcmdStride, e.data(), kMatmulEntries * 8);
    std::memset(regcmd_host + j * kRegcmdStride + kMatmulEntries * 8, 0, kRegcmdStride - kMatmulEntries * 8);
    uapi::Task task{};
    task.enable_mask = reg::kTaskEnableMask;
    task.int_mask = reg::kTaskIntMask;
    task.int_clear = reg::kTaskIntClear;
    task.regcfg_amount = kMatmulEntries - reg::kPcTailEntries;
    task.regcmd_addr = here;
    std::memcpy(&tasks[j], &task, sizeof task);
  }
}

uapi::Submit make_job_submit(const JobPlan& job, uint64_t task_obj_addr, uint32_t domain,
                             uint32_t first_task) {
  uapi::Submit s{};
  s.flags = uapi::kJobPc | uapi::kJobPingpong;
  s.timeout = 6000;
  s.task_start = first_task;
  s.task_number = uint32_t(job.tasks());
  s.priority = 0;
  s.task_obj_addr = task_obj_addr;
  s.iommu_domain_id = domain;
  s.task_base_addr = 0;  // as mtx512's working submit; the driver reads tasks via task_obj_addr
  s.fence_fd = -1;
  static constexpr uint32_t kMasks[4] = {0, uapi::kCore0, uapi::kCore0 | uapi::kCore1,
                                         uapi::kCore0 | uapi::kCore1 | uapi::kCore2};
  s.core_mask = kMasks[job.cores];
  for (uint32_t c = 0; c < job.cores; ++c) {
    const uint32_t slot = job.cores == 3 ? c + 2 : c;  // rknpu: 3 cores use subcore_task[2..4]
    s.subcore_task[slot].task_start = first_task + job.core_start[c];
    s.subcore_task[slot].task_number = job.core_count[c];
  }
  return s;
}

void unpack_job_c(const JobPlan& job, size_t part, const uint8_t* c_scratch, void* c) {
  ORK_CHECK(part < job.parts.size(), "unpack_job_c: part ", part, " of ", job.parts.size());
  unpack_c_for_plan(job.parts[part], c_scratch + job.c_base[part], c);
}

}  // namespace ork::npu
