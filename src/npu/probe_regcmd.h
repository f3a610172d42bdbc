// `ork probe regcmd`: the exact register commands and task array ork would submit for one matmul,
// given the NPU addresses of A, the weight (B), C and the register-command buffer — for anyone who
// debugs the board path entry by entry. Pure (no device), thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npu/layout.h"
#include "npu/matmul.h"

namespace ork::npu {

struct RegcmdTaskDump {
  uint32_t core = 0, index = 0;  // the core and the task's index within that core's range
  uint32_t regcfg_amount = 0, enable_mask = 0, int_mask = 0;
  uint64_t regcmd_addr = 0;
  std::vector<uint64_t> regcmd;  // regcfg_amount + 4 entries in emission order, the PC tail last
};

struct RegcmdDump {
  Dtype dtype = Dtype::kI8;
  int64_t m = 0, k = 0, n = 0;
  std::vector<RegcmdTaskDump> tasks;
  // {"dtype","m","k","n","tasks":[{"core","index","regcfg_amount","enable_mask","int_mask",
  //  "regcmd_addr","regcmd":["0x…",…]}]}; addresses and entries as "0x" + 16 hex digits / hex.
  std::string to_json() const;
  std::string to_text() const;  // one line per task, then one line per entry with its register name
};

// The tasks of an (m × k) · (n × k)ᵀ matmul planned on up to `cores` cores with the given addresses,
// with ork's K segments, or `k_segment`-wide ones (plan_split). Throws ork::Error for bad sizes or
// addresses above 4 GiB.
RegcmdDump dump_regcmd(Dtype d, int64_t m, int64_t k, int64_t n, uint32_t cores, const TaskAddresses& addr,
                       int64_t k_segment = 0);

}  // namespace ork::npu
