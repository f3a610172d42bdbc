// Reading one task's configuration from a core's register file, for the datapath decoders
// (matmul_unit.cpp, matmul_unit_int4.cpp): a register the configuration needs that nothing ever
// wrote is reset state no public source documents (Timeout); checks fail as Timeout (outside the
// board-verified envelope) or Unmodelled (a mode the simulator does not model), each naming `where`,
// the register, its value and the reason. Holds references: must not outlive its arguments.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "npu/sim/hw_registers.h"
#include "npu/sim/job_failure.h"

namespace ork::npu::sim {

inline std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

class Reader {
 public:
  Reader(const RegisterFile& regs, const std::string& where) : regs_(regs), where_(where) {}
  uint32_t operator()(Hw r) const {
    if (!regs_.written[size_t(r)]) {
      throw Timeout(str_cat(where_, ": ", hw_name(r), " was never written; the task depends on register "
                            "state nothing set (on a board: undefined, typically a hang)"));
    }
    return regs_.value[size_t(r)];
  }
  [[noreturn]] void timeout(Hw r, const std::string& why) const {
    throw Timeout(str_cat(where_, ": ", hw_name(r), " = ", hex(regs_.value[size_t(r)]), ": ", why));
  }
  [[noreturn]] void unmodelled(Hw r, const std::string& why) const {
    throw Unmodelled(str_cat(where_, ": ", hw_name(r), " = ", hex(regs_.value[size_t(r)]), ": ", why,
                             " (a configuration the simulator does not model)"));
  }
  void expect(bool ok, Hw r, const std::string& why) const {
    if (!ok) timeout(r, why);
  }
  void expect_modelled(bool ok, Hw r, const std::string& why) const {
    if (!ok) unmodelled(r, why);
  }
  const std::string& where() const { return where_; }

 private:
  const RegisterFile& regs_;
  const std::string& where_;
};

}  // namespace ork::npu::sim
