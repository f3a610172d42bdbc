#include "npu/registers.h"

#include <cstdio>

namespace ork::npu::reg {

const char* target_name(uint16_t target) {
  switch (target) {
    case kTargetPc: return "PC";
    case kTargetCna: return "CNA";
    case kTargetCore: return "CORE";
    case kTargetDpu: return "DPU";
    case kTargetDpuRdma: return "DPU_RDMA";
    case kTargetPpu: return "PPU";
    case kTargetPpuRdma: return "PPU_RDMA";
    case kTargetPcPreEnable: return "PC_PRE_ENABLE";
    case kTargetPcOpEnable: return "PC_OP_ENABLE";
    default: return nullptr;
  }
}

const Register* find(uint16_t target, uint16_t offset) {
  for (const Register& r : kRegisters) {
    if (r.target == target && r.offset == offset) return &r;
  }
  return nullptr;
}

std::string describe(uint64_t e) {
  const Entry d = decode(e);
  const Register* r = find(d.target, d.offset);
  char buf[96];
  std::snprintf(buf, sizeof buf, " (0x%04x:0x%04x) = 0x%08x", unsigned(d.target), unsigned(d.offset),
                unsigned(d.value));
  return std::string(r ? r->name : "unknown register") + buf;
}

}  // namespace ork::npu::reg
