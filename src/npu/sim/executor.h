// The simulated NPU core's program counter (PC): runs one core's share of a job the way the vendor
// driver programs it and the PC then proceeds (rknpu_job.c rknpu_job_subcore_commit_pc; TRM §36.4):
//   - the driver writes the FIRST task's regcmd_addr and PC_DATA_AMOUNT =
//     (regcfg_amount + 4 + 1) / 2 − 1 (RKNPU_PC_DATA_EXTRA_AMOUNT 4, pc_data_amount_scale 2), and the
//     task count; the PC fetches (amount + 1) · 2 entries from that address;
//   - every LATER task is fetched from the PC_BASE_ADDRESS / PC_REGISTER_AMOUNTS that the previous
//     task's stream wrote — the task array's regcmd_addr and regcfg_amount of tasks 2..n are never
//     read by the hardware;
//   - the PC applies the fetched entries in order to the core's register file; the 0x0041 marker must
//     precede PC_OPERATION_ENABLE, which starts the task; a fetch that ends before OPERATION_ENABLE
//     (short) or holds entries after it (over-long), or a missing next address, leaves the job
//     unfinished: Timeout;
//   - the job completes when the last task raises the interrupts of its int_mask (the driver waits
//     for the last task's mask); a CNA+CORE+DPU task raises bits 0–9.
// Register state persists in the core's RegisterFile across tasks and jobs.
#pragma once

#include <cstdint>
#include <vector>

#include "npu/sim/address_space.h"
#include "npu/sim/board_model.h"
#include "npu/sim/hw_registers.h"
#include "npu/uapi.h"

namespace ork::npu::sim {

struct ExecStats {
  uint64_t tasks = 0;
  uint64_t macs = 0;           // multiply-accumulates performed (or, timing only, modeled)
  std::vector<TaskWork> work;  // per task, for the board cost model
};

// What the PC fetched for one task (for `ork probe regcmd` tests and debugging).
struct FetchRecord {
  uint32_t core = 0;
  uint32_t index = 0;     // task index within the core's range
  uint64_t address = 0;   // where it was fetched from
  std::vector<uint64_t> entries;
};

// Runs `count` tasks starting at `first` on core `core`. Throws Fault (unmapped address), Timeout
// or Unmodelled (job_failure.h), naming the task. Appends to `fetched` when not null. `timing_only`:
// everything is fetched, decoded and checked (operand addresses included), but the arithmetic is
// skipped: outputs are left as they were.
ExecStats execute_tasks(AddressSpace& space, RegisterFile& regs, uint32_t core, const uapi::Task* first,
                        uint32_t count, std::vector<FetchRecord>* fetched = nullptr, bool timing_only = false);

}  // namespace ork::npu::sim
