// The simulated NPU core: executes submitted tasks by decoding their register command streams.
//
// Implemented by the matmul side of src/npu (the register meanings live in one table there); called
// by SimKernel's SUBMIT for each core's range of tasks, with the active domain's address space.
#pragma once

#include <cstdint>

#include "npu/sim/address_space.h"
#include "npu/uapi.h"

namespace ork::npu::sim {

struct ExecStats {
  uint64_t tasks = 0;
  uint64_t macs = 0;  // multiply-accumulates performed
};

// Runs `count` tasks on one core, in order: for each task, reads its register commands
// (task.regcmd_addr, task.regcfg_amount entries plus the PC tail) through `space`, checks that the
// stream is one the simulator understands (unknown targets/registers or inconsistent fields → ork::Error
// naming the task index and register), and performs the operation, reading and writing operands
// through `space` (so an unmapped or out-of-buffer address throws sim::Fault).
ExecStats execute_tasks(AddressSpace& space, const uapi::Task* tasks, uint32_t count);

}  // namespace ork::npu::sim
