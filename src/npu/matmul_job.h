// One NPU job for several matmuls that share their input: C_i (M×N_i) = A (M×K) · B_iᵀ for the
// weights B_i of one IOMMU domain (a layer's Q/K/V projections, or its gate and up projections), in
// one submit. Each part is split into tasks as task_split.h splits a single matmul (same M tiles, so
// the one A block layout serves every part); the task array holds, per core, the tasks of part 0,
// then of part 1, …, so each core's PC chain runs its share of every part without the host in
// between. Part i's C blocks follow part i−1's in the C scratch.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "npu/task_split.h"
#include "npu/uapi.h"

namespace ork::npu {

struct JobPlan {
  Dtype dtype = Dtype::kI8;
  int64_t m = 0, k = 0;
  uint32_t cores = 0;              // cores that received tasks (1..3); cores 0..cores−1 all have some
  std::vector<SplitPlan> parts;    // one per weight, each planned on the same cores
  std::vector<uint64_t> c_base;    // [part] byte offset of its C blocks in the C scratch
  struct Entry {
    uint32_t part = 0, task = 0;   // parts[part].tasks[task]
  };
  std::vector<Entry> order;        // the task array, grouped by core in core order
  uint32_t core_start[3] = {0, 0, 0}, core_count[3] = {0, 0, 0};
  uint64_t a_bytes = 0;            // the A scratch (as each part's a_bytes: they are equal)
  uint64_t c_bytes = 0;            // the C scratch: every part's blocks
  size_t tasks() const { return order.size(); }
  uint64_t macs() const;
  uint64_t regcmd_bytes() const;   // tasks × kRegcmdStride
  uint64_t task_array_bytes() const { return tasks() * sizeof(uapi::Task); }
};

// Plans one job of parts with n[i] output columns each (1..kMaxDim), all (m × k) inputs, on up to
// `max_cores` cores (1..3); layout_np[i] (when given and non-zero) is the padded N of the packed
// layout part i's rows live in (PackedWeight::layout_np). Throws ork::Error on bad sizes or an empty
// part list.
JobPlan plan_job(int64_t m, int64_t k, std::span<const int64_t> n, Dtype d, uint32_t max_cores,
                 std::span<const int64_t> layout_np = {});
// The job of one matmul: exactly plan_split's tasks in plan_split's order.
JobPlan single_part_job(SplitPlan plan);

// The NPU addresses of a job's operands: A and C scratch, each part's packed weight, and the
// register commands (task j at regcmd + j·kRegcmdStride).
struct JobAddresses {
  uint64_t a = 0, c = 0, regcmd = 0;
  std::vector<uint64_t> b;  // [part]
};
// Writes the register commands of every task (job.tasks() × kRegcmdStride bytes, PC-chained per core)
// to `regcmd_host` and the uapi::Task array (job.tasks() entries) to `tasks`. Throws ork::Error when
// an address is above 4 GiB or the part count and addresses disagree.
void build_job(const JobPlan& job, const JobAddresses& addr, uint8_t* regcmd_host, uapi::Task* tasks);
// The Submit of the job's task array: its entries start at entry `first_task` of the task buffer
// whose obj_addr is `task_obj_addr` (the driver indexes the buffer by task_start); per-core ranges in
// subcore_task, the cores used in core_mask.
uapi::Submit make_job_submit(const JobPlan& job, uint64_t task_obj_addr, uint32_t domain,
                             uint32_t first_task = 0);
// Collects part `part`'s C (m × n_part, row-major int32 / f32 by dtype) from the C scratch.
void unpack_job_c(const JobPlan& job, size_t part, const uint8_t* c_scratch, void* c);

}  // namespace ork::npu
