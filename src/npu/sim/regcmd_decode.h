// Decoding one task's register command stream back into the matmul it describes — from the registers
// only — and validating it against the one configuration the public sources document (the 1×1
// convolution of npu/regcmd_gen.h). Anything else is rejected with an ork::Error naming the register:
// unknown targets or offsets, missing registers, a malformed PC tail, unsupported precisions, and
// registers whose value differs from what the decoded dims imply (inconsistent or undocumented).
// Pure, thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "npu/regcmd_gen.h"

namespace ork::npu::sim {

struct DecodedTask {
  MatmulTaskDesc op;
  bool chained = false;       // the tail names a next task
  uint32_t next_addr = 0;     // PC_BASE_ADDRESS of the next task
  uint32_t next_amount = 0;   // PC_REGISTER_AMOUNTS for it
};

// `entries`: `count` entries (regcfg_amount + the 4-entry tail). `where` prefixes error messages.
DecodedTask decode_matmul_regcmd(const uint64_t* entries, uint32_t count, const std::string& where);

}  // namespace ork::npu::sim
