// The simulated NPU's view of memory: NPU (IOVA) addresses of the active IOMMU domain resolved to
// host bytes. SimKernel implements it; the task executor reads register commands and operands
// through it, so every access of a simulated task is checked as the IOMMU would check it.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.h"

namespace ork::npu::sim {

// An access to an address that is not mapped in the active domain, or that runs past the end of the
// buffer mapped there: what an IOMMU page fault is on the board. The message names the address.
class Fault : public Error {
 public:
  Fault(uint64_t address, uint64_t length, const std::string& message)
      : Error(message), address_(address), length_(length) {}
  uint64_t address() const { return address_; }
  uint64_t length() const { return length_; }

 private:
  uint64_t address_;
  uint64_t length_;
};

class AddressSpace {
 public:
  virtual ~AddressSpace() = default;
  // Host pointer to the `length` bytes at NPU address `iova`, which must lie inside one buffer mapped
  // in the active domain; throws Fault otherwise. Valid until the buffer is destroyed.
  virtual uint8_t* resolve(uint64_t iova, uint64_t length) = 0;
};

}  // namespace ork::npu::sim
