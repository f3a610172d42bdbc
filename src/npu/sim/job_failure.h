// How a simulated job fails when its register commands are wrong — the board's failure modes, not
// friendly checks (sim::Fault, an IOMMU fault, is in address_space.h):
//   - Timeout: the job would never complete on a board (the PC fetched a short or over-long stream,
//     a task's configuration lies outside the board-verified envelope or depends on register state
//     nothing set); SimKernel returns ETIMEDOUT, as the driver does when its wait runs out.
//   - Unmodelled: a register or mode the simulator does not model (it cannot say what the board would
//     do); SimKernel returns EIO.
// Both carry a message naming the task, the register and the reason.
#pragma once

#include <string>

#include "core/error.h"

namespace ork::npu::sim {

class Timeout : public Error {
 public:
  explicit Timeout(const std::string& message) : Error(message) {}
};

class Unmodelled : public Error {
 public:
  explicit Unmodelled(const std::string& message) : Error(message) {}
};

}  // namespace ork::npu::sim
